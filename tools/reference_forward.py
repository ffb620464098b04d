#!/usr/bin/python3
"""An independent forward pass for krc weights files, written from README's "Weights file
format" section alone: it reads the safetensors file itself (header, dense and sparse tensors,
metadata) and runs the network densely in float64 with numpy (--float32: every tensor and
every operation in float32, as a plain float32 framework would run it; --bf16 and --fp16: the
model cast to that format, written from README's "bf16 and fp16" alone, see narrow_logits).

Usage: reference_forward.py FILE [--attention softmax|hard|hardmax] [--float32|--bf16|--fp16]
                            [--logits] [LETTER ...]
The letters are separate arguments or one string split on spaces or commas. Without letters,
words are read from stdin, one per line. Prints one JSON object per word:
{"letters": [...], "states": [the argmax state after each prefix, <bos> first]}, and with
--logits "logits": every logit as float.hex() text (exact, and "inf"/"nan" survive JSON)."""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}


def load(path, dtype):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    raw = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw[name] = np.frombuffer(body[begin:end], dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    tensors = {}
    for name, shape in json.loads(metadata.get("sparse", "{}")).items():
        dense = np.zeros(shape, dtype=dtype)
        indices, values = raw.pop(name + ".indices"), raw.pop(name + ".values")
        dense[tuple(indices.T.astype(np.int64))] = values
        tensors[name] = dense
    tensors.update({name: t.astype(dtype) for name, t in raw.items()})
    return tensors, metadata


def logits(t, config, tokens, hard):
    n = len(tokens)
    x = t["embed.token"][tokens] + t["embed.position"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        delta = np.zeros_like(x)
        for h, head in enumerate(layer["heads"]):
            q, k, v = (x @ t[p + "attn." + m][h] for m in "qkv")
            s = np.where(causal, x.dtype.type(config["attention"]["scale"]) * (q @ k.T), -np.inf)
            if hard and head["kind"] == "select":
                latest_max = n - 1 - np.argmax(s[:, ::-1], axis=1)  # ties to the latest position
                w = np.eye(n, dtype=x.dtype)[latest_max]
            else:
                w = np.exp(s - s.max(axis=1, keepdims=True))
                w /= w.sum(axis=1, keepdims=True)
            delta += (w @ v) @ t[p + "attn.o"][h]
        x = x + delta
        if layer["mlp_hidden"] is not None:
            hidden = np.maximum(x @ t[p + "mlp.in.weight"].T + t[p + "mlp.in.bias"], x.dtype.type(0))
            x = x + hidden @ t[p + "mlp.out.weight"].T + t[p + "mlp.out.bias"]
    return x @ t["unembed"]


def round_bf16(a):
    """Round float32 values to bfloat16 (8 significant bits, float32's exponent range) to
    nearest, ties to even, in float64: the quantum of a value in [2^(e-1), 2^e) is 2^(e-8),
    never below 2^-133 (the subnormals); past the largest finite value, infinity."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(a)
        quantum = np.ldexp(1.0, np.maximum(e, -125) - 8)
        r = np.rint(a / quantum) * quantum
        largest = (2.0 - 2.0 ** -7) * 2.0 ** 127
        r = np.where(np.abs(r) > largest, np.copysign(np.inf, a), r)
        r = np.where(np.isfinite(a), r, a)
    return r.astype(np.float32)


def round_fp16(a):
    """Round float32 values to IEEE binary16 (numpy's own conversion), back in float32."""
    with np.errstate(over="ignore"):
        return np.asarray(a, dtype=np.float32).astype(np.float16).astype(np.float32)


def running_product(x, w):
    """x [n, k] @ w [k, m] as README's narrow formats sum it: every float32 product added to a
    float32 running sum in ascending k. Columns whose products are all +-0 are skipped: they
    leave a sum that starts at +0 unchanged (it is never -0)."""
    acc = np.zeros((x.shape[0], w.shape[1]), dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for r in range(x.shape[1]):
            xr = x[:, r:r + 1]
            if not xr.any() and np.isfinite(w[r]).all() and np.isfinite(xr).all():
                continue
            acc += xr * w[r]
    return acc


def causal_running_product(w, v):
    """w [n, n] @ v [n, e] over the keys j <= t of each row t only, as running_product sums:
    a later key's value never meets an earlier row (so an infinity there cannot make 0 * inf)."""
    acc = np.zeros((w.shape[0], v.shape[1]), dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(w.shape[1]):
            acc[j:] += w[j:, j:j + 1] * v[j]
    return acc


def narrow_attention_weights(s, n, kind, attention, R):
    """Attention weights [n, n] of rounded scores s (keys after the query hold -inf)."""
    f32 = np.float32
    if attention == "hard" and kind == "select":
        w = np.zeros((n, n), dtype=f32)
        for t in range(n):
            w[t, t - np.argmax(s[t, :t + 1][::-1])] = 1  # the latest maximum (NaN counts as one)
        return w
    with np.errstate(invalid="ignore"):
        top = s.max(axis=1, keepdims=True)
        if attention == "hardmax":
            w = (s == top).astype(f32)
        else:
            d = (s - top).astype(f32)
            w = np.where(d < -104, f32(0), np.exp(d.astype(np.float64)).astype(f32))
        total = np.zeros(n, dtype=f32)
        for j in range(n):  # a float32 running sum over the keys in order
            total += w[:, j]
        return R(w / total[:, None])


def narrow_logits(t, config, tokens, attention, R):
    """README "bf16 and fp16": weights rounded by R, every stored tensor rounded by R, each
    product a float32 running sum rounded once, softmax in float32."""
    t = {name: R(v) for name, v in t.items()}
    n = len(tokens)
    scale = R(np.float32(config["attention"]["scale"]))
    causal = np.tril(np.ones((n, n), dtype=bool))
    x = R(t["embed.token"][tokens] + t["embed.position"][:n])
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        if layer["heads"]:
            zs = []
            for h, head in enumerate(layer["heads"]):
                q, k, v = (R(running_product(x, t[p + "attn." + m][h])) for m in "qkv")
                s = R(running_product(q, k.T))
                if scale != 1:
                    s = R(s * scale)
                s = np.where(causal, s, np.float32(-np.inf))
                w = narrow_attention_weights(s, n, head["kind"], attention, R)
                zs.append(R(causal_running_product(w, v)))
            o = t[p + "attn.o"]
            out = running_product(np.concatenate(zs, axis=1), o.reshape(-1, o.shape[2]))
            x = R(x + R(out))
        if layer["mlp_hidden"] is not None:
            pre = R(R(running_product(x, t[p + "mlp.in.weight"].T)) + t[p + "mlp.in.bias"])
            hidden = np.maximum(pre, np.float32(0))
            out = R(R(running_product(hidden, t[p + "mlp.out.weight"].T)) + t[p + "mlp.out.bias"])
            x = R(x + out)
    return R(running_product(x, t["unembed"]))


def main(argv):
    args = argv[1:]
    attention = None
    if "--attention" in args:
        at = args.index("--attention")
        attention = args[at + 1]
        del args[at:at + 2]
    dtype = np.float64
    if "--float32" in args:
        args.remove("--float32")
        dtype = np.float32
    narrow = None
    for flag, rounding in (("--bf16", round_bf16), ("--fp16", round_fp16)):
        if flag in args:
            args.remove(flag)
            narrow, dtype = rounding, np.float32
    show_logits = "--logits" in args
    if show_logits:
        args.remove("--logits")
    if not args:
        sys.exit(__doc__)
    tensors, metadata = load(args[0], dtype)
    config = json.loads(metadata["config"])
    attention = attention or config["attention"]["kind"]
    hard = attention == "hard"
    vocabulary = config["vocabulary"]
    lines = [" ".join(args[1:])] if len(args) > 1 else sys.stdin.read().splitlines()
    for line in lines:
        letters = line.replace(",", " ").split()
        unknown = [a for a in letters if a not in vocabulary[1:]]
        if unknown or len(letters) > config["max_len"]:
            sys.stderr.write("reference_forward: bad word %r\n" % line)
            sys.exit(2)
        tokens = [0] + [vocabulary.index(a) for a in letters]
        if narrow is None:
            values = logits(tensors, config, tokens, hard)
        else:
            values = narrow_logits(tensors, config, tokens, attention, narrow)
        best = np.argmax(values, axis=1)
        line = {"letters": letters, "states": [config["states"][s] for s in best]}
        if show_logits:
            line["logits"] = [[float(v).hex() for v in row] for row in values]
        print(json.dumps(line))


if __name__ == "__main__":
    main(sys.argv)
