#!/usr/bin/env python3
"""An outsider's check of a krc network: a plain dense float32 PyTorch forward pass on the CPU
(its BLAS, MKL on the project's wheel), written from runtime/README.md's "Weights file format"
alone, compared with the automaton at every position of each word.

    dense_torch_check.py FILE [--words N] [--seed S] [--word all:LETTER ...] [--rows R]

Every product is F.linear / matmul on dense float32 tensors, softmax on every head (the
`average` kind; `select` heads too, as an outsider who ignores the kinds would), exactly
    x = E[tokens] + P;  x += Σ_h (softmax(scale·q kᵀ, causal) @ v) @ o[h];  x += MLP(x)
The attention rows and the MLP rows go in chunks of R rows (default 1024) to bound memory: the
last chunk of a word of max-len letters then holds one row (max-len + 1 rows in all), which is
what a framework computes for a batch of one position (a BLAS may take a different kernel, and
sum in a different order, for such a row). Exit status 1 if any position is wrong.

Words: --words N random words of max-len letters (random.Random(seed), one choice per letter),
and/or --word all:LETTER (max-len copies of one letter; --each-letter: one such word per
letter) or --word cycle:ABC (the letters over and over). Prints the wrong positions (the first
few) and the smallest margin per word; --magnitude also the largest sum of |terms| of an MLP
output, over all positions (at most 2^23, with terms that are multiples of 1/2: exact in any
summation order).

Issue 36 (found with this): the kr networks at max-len 16384 with dyadic counting went wrong
at the last position, the one row of the last chunk, which MKL's sgemm for fewer than 16 rows
sums over strided lanes; their combs' output sums reach 2^33."""
import argparse
import json
import random
import sys

import numpy as np
import torch
import torch.nn.functional as F


def read(path):
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
        raw = {k: f.get_tensor(k) for k in f.keys()}
    t = dict(raw)
    for name, shape in json.loads(meta.get("sparse", "{}")).items():
        dense = torch.zeros(shape, dtype=torch.float32)
        idx, val = t.pop(name + ".indices"), t.pop(name + ".values")
        dense[tuple(idx.to(torch.long).T)] = val.to(torch.float32)
        t[name] = dense
    return {k: v.to(torch.float32).contiguous() for k, v in t.items()}, meta


def forward(t, config, tokens, rows, layer_hook=None):
    """logits [T, S] of one word (tokens [T], <bos> first). layer_hook(layer, first row,
    magnitudes [rows, d]) sees each MLP chunk's sums of |w_out| * hidden per output dim."""
    T = tokens.shape[0]
    x = t["embed.token"][tokens] + t["embed.position"][:T]
    scale = float(config["attention"]["scale"])
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        if layer["heads"]:
            q_w, k_w, v_w, o_w = (t[p + "attn." + m] for m in "qkvo")
            H = q_w.shape[0]
            update = torch.zeros_like(x)
            for h in range(H):
                q = F.linear(x, q_w[h].T.contiguous())
                k = F.linear(x, k_w[h].T.contiguous())
                v = F.linear(x, v_w[h].T.contiguous())
                z = torch.empty(T, v.shape[1])
                for r0 in range(0, T, rows):
                    r1 = min(T, r0 + rows)
                    s = (q[r0:r1] @ k[:r1].T) * scale
                    mask = torch.ones(r1 - r0, r1, dtype=torch.bool).triu(r0 + 1)
                    s.masked_fill_(mask, float("-inf"))
                    z[r0:r1] = torch.softmax(s, dim=1) @ v[:r1]
                update = update + F.linear(z, o_w[h].T.contiguous())
            x = x + update
        if layer.get("mlp_hidden") is not None:
            w_in, b_in = t[p + "mlp.in.weight"], t[p + "mlp.in.bias"]
            w_out, b_out = t[p + "mlp.out.weight"], t[p + "mlp.out.bias"]
            parts = []
            w_abs = w_out.abs() if layer_hook else None
            for r0 in range(0, T, rows):
                xs = x[r0:r0 + rows]
                h = F.relu(F.linear(xs, w_in, b_in))
                parts.append(F.linear(h, w_out, b_out))
                if layer_hook:
                    layer_hook(i, r0, F.linear(h, w_abs))
            x = x + torch.cat(parts)
    return F.linear(x, t["unembed"].T.contiguous())


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--words", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--word", action="append", default=[])
    ap.add_argument("--each-letter", action="store_true",
                    help="also one word per letter: max-len copies of it (extreme counts)")
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--length", type=int, default=0, help="letters per word (default max-len)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--magnitude", action="store_true",
                    help="also print the largest sum of |terms| of an MLP output (a float32 sum "
                         "of multiples of 1/2 is exact in every order while it is <= 2^23)")
    args = ap.parse_args(argv[1:])
    torch.set_num_threads(args.threads)
    t, meta = read(args.file)
    config = json.loads(meta["config"])
    auto = json.loads(meta["automaton"])
    vocab = config["vocabulary"]
    letters = vocab[1:]
    states = config["states"]
    n = args.length or config["max_len"]
    rng = random.Random(args.seed)
    words = [("random %d" % w, [rng.choice(letters) for _ in range(n)]) for w in range(args.words)]
    if args.each_letter:
        args.word += ["all:" + a for a in letters]
    for spec in args.word:
        kind, _, arg = spec.partition(":")
        if kind == "all":
            words.append((spec, [arg] * n))
        elif kind == "cycle":
            words.append((spec, [arg[i % len(arg)] for i in range(n)]))
        else:
            raise SystemExit("--word all:LETTER or cycle:LETTERS")
    ids = {a: i for i, a in enumerate(vocab)}
    bad_any = False
    for name, word in words:
        tokens = torch.tensor([0] + [ids[a] for a in word])
        worst = [0.0, None]
        labels = json.loads(meta["residual_labels"])

        def magnitude(layer, r0, m):
            value, flat = m.max(), int(m.argmax())
            if float(value) > worst[0]:
                worst[:] = [float(value), (layer, labels[flat % m.shape[1]], r0 + flat // m.shape[1])]
        with torch.no_grad():
            logits = forward(t, config, tokens, args.rows, magnitude if args.magnitude else None)
        if args.magnitude:
            print("%s: largest MLP output sum of |terms| %.6g (2^%.2f) at (layer, output, position) %s"
                  % (name, worst[0], np.log2(max(worst[0], 1e-30)), worst[1]))
        want = run_automaton_states(auto, word, states)
        got = logits.argmax(dim=1).tolist()
        top = logits.topk(2, dim=1).values
        margin = float((top[:, 0] - top[:, 1]).min())
        wrong = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        bad_any |= bool(wrong)
        print("%s: %d letters, %d wrong %s, smallest margin %.4g"
              % (name, n, len(wrong), wrong[:10], margin), flush=True)
    return 1 if bad_any else 0


def run_automaton_states(auto, word, states):
    """The network's state index after each prefix (position 0: the initial state), from the
    file's automaton (automata/README.md: transitions[letter][state index])."""
    names = auto["states"]
    q = names.index(auto["initial"])
    out = [q]
    for a in word:
        q = names.index(auto["transitions"][a][q])
        out.append(q)
    return [states.index(names[s]) for s in out]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
