#!/usr/bin/python3
"""A design probe for certifying kr networks (Theorem 2's cascade) and the clamped walk
(Theorem 3), issue 36 items 1 and 4: it measures what compiler/certify.md's section "kr and walk
networks: the design" argues. It is not a certifier and proves nothing: it samples.

Usage: kr_invariant_probe.py FILE [--exhaustive L] [--random N] [--long-len T] [--seed S]
                             [--float32] [--json]

For a kr or walk weights file (read with tools/reference_forward.py's loader, numpy):
- runs every word of length L (each position t is one prefix of length t) and N random words of
  --long-len letters (default: the file's max-len), in float64 (or, with --float32, every tensor
  and operation in float32, summed by numpy's own order), and records the residual after each
  attention sublayer and each MLP sublayer;
- per residual subspace and point, the distinct values the subspace takes (clusters: vectors
  rounded to 1/64), the largest distance of a value from its cluster's centre (the drift the
  invariant must absorb), and the least key it is a function of among: t alone (static), the
  transformation of the prefix w[1..t], that of w[1..t-1] with the letter w[t], else "word"
  (a function of the prefix but of neither, e.g. a count);
- per head: the subspaces its query and key read (the supports of W_Q, W_K), and over every
  sampled query position the least gap between the largest score and the runner-up, and the
  runner-ups' total softmax weight (the leak);
- per MLP block: the subspaces its units read and the number of distinct input combinations
  seen (restricted to those subspaces, rounded to 1/64), against the product of the domains'
  sizes, and the units: the cost of the finite check.

The figures are observations over the words run, not bounds over all words."""
import argparse
import itertools
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import load  # noqa: E402


def prefix_keys(automaton, words):
    """For each word (letters as automaton letters) and position t = 0..|w|: the transformation
    of w[1..t] (tuple of images), and (that of w[1..t-1], w[t])."""
    states = automaton["states"]
    index = {s: i for i, s in enumerate(states)}
    table = {a: [index[q] for q in automaton["transitions"][a]] for a in automaton["alphabet"]}
    n = len(states)
    trans, shifted = [], []
    for w in words:
        f = tuple(range(n))
        tr, sh = [f], [("bos",)]
        for a in w:
            g = tuple(table[a][f[q]] for q in range(n))
            sh.append((f, a))
            f = g
            tr.append(f)
        trans.append(tr)
        shifted.append(sh)
    return trans, shifted


def forward(t, config, tokens, dtype):
    """tokens: (B, n) int array, BOS first. Returns the points [(name, residual (B, n, d))],
    the heads' scores [(layer, head, (B, n, n))]."""
    B, n = tokens.shape
    x = t["embed.token"][tokens] + t["embed.position"][:n][None]
    points, scores = [("embedding", x.copy())], []
    causal = np.tril(np.ones((n, n), dtype=bool))
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        delta = np.zeros_like(x)
        for h, head in enumerate(layer["heads"]):
            q, k, v = (x @ t[p + "attn." + m][h] for m in "qkv")
            s = dtype(config["attention"]["scale"]) * np.einsum("bid,bjd->bij", q, k)
            s = np.where(causal[None], s, -np.inf)
            scores.append((i, h, s))
            w = np.exp(s - s.max(axis=2, keepdims=True))
            w /= w.sum(axis=2, keepdims=True)
            delta += (w @ v) @ t[p + "attn.o"][h]
        x = x + delta
        points.append(("layer %d attention" % i, x.copy()))
        if layer["mlp_hidden"] is not None:
            hidden = np.maximum(x @ t[p + "mlp.in.weight"].T + t[p + "mlp.in.bias"], dtype(0))
            x = x + hidden @ t[p + "mlp.out.weight"].T + t[p + "mlp.out.bias"]
            points.append(("layer %d mlp" % i, x.copy()))
    return points, scores


def support(matrix_rows_by_dim, subspaces):
    """Names of the subspaces whose dimensions have a nonzero weight (dims on axis 0)."""
    used = np.abs(matrix_rows_by_dim).reshape(matrix_rows_by_dim.shape[0], -1).max(axis=1) > 0
    return [s["name"] for s in subspaces if used[s["first"]:s["first"] + s["width"]].any()]


def least_key(values, keys_by_kind):
    """The first key kind under which the rounded values are a function, else 'word'."""
    for kind, keys in keys_by_kind:
        seen = {}
        ok = True
        for key, v in zip(keys, values):
            if seen.setdefault(key, v) != v:
                ok = False
                break
        if ok:
            return kind
    return "word"


INTEGER_ROLES = {"counter sum", "counter window sum", "counter block sum", "walk sum", "latest visit"}
STATIC_ROLES = {"constant", "position", "position code", "log remaining", "bos"}


def structure(t, config, subspaces):
    """The finite check's size per MLP block, from the weights alone (no forward): the groups a
    block reads, split into finite ones (one-hots: width + 1 values, the zero included; 1-wide
    finite groups: the integers their producer can write, taken from the role: an increment
    0..p-1, a flag 0/1), static ones (a function of t: taken per t or as the constant) and
    integer ones (counts, sums, latest visits); the distinct linear forms its units read on
    the integer groups (each unit's coefficients there, up to scale), and per form the range of
    breakpoints -(constant part, every gate open)/(coefficient) the units put on it. The enumeration a
    certifier needs for the block is (finite combinations) x (each form's range), jointly over
    the forms when a unit reads several."""
    T = config["max_len"]
    dim_group = {}
    for g in subspaces:
        for d in range(g["first"], g["first"] + g["width"]):
            dim_group[d] = g
    one = [g["first"] for g in subspaces if g["role"]["kind"] == "constant"]
    out = {"max_len": T, "blocks": [], "heads": [], "mlp_points_x_units": 0, "head_pairs": 0}
    for i, layer in enumerate(config["layers"]):
        for h, head in enumerate(layer["heads"]):
            kreads = support(t["layers.%d.attn.k" % i][h], subspaces)
            finite_keys = 1
            for g in subspaces:
                if g["name"] in kreads and g["role"]["kind"] not in STATIC_ROLES | {"position"}:
                    finite_keys *= (g["width"] + 1) if g["width"] > 1 else 2
            pairs = (T + 1) * (T + 2) // 2 * finite_keys
            out["heads"].append({"layer": i, "head": h, "kind": head["kind"], "name": head["name"],
                                 "key_values_per_position": finite_keys, "pairs": pairs})
            out["head_pairs"] += pairs
        if layer["mlp_hidden"] is None:
            continue
        W, b = t["layers.%d.mlp.in.weight" % i], t["layers.%d.mlp.in.bias" % i]
        for blk in layer.get("mlp_blocks") or []:
            rows = range(blk["first"], blk["first"] + blk["count"])
            groups, forms = {}, {}
            for u in rows:
                nz = np.flatnonzero(W[u])
                coef = tuple((int(d), float(W[u, d])) for d in nz
                             if dim_group[d]["role"]["kind"] in INTEGER_ROLES)
                for d in nz:
                    groups[dim_group[d]["name"]] = dim_group[d]
                if coef:
                    scale = coef[0][1]
                    key = tuple((d, c / scale) for d, c in coef)
                    constant = float(b[u]) + sum(float(W[u, d]) for d in one if W[u, d] != 0)
                    # a gated comb's gates (K on each finite group's matching value, -K n in the
                    # bias): the breakpoint with every gate open, which is where the comb reads
                    for g in {dim_group[d]["name"]: dim_group[d] for d in nz}.values():
                        if g["role"]["kind"] not in INTEGER_ROLES | STATIC_ROLES:
                            constant += max(0.0, float(W[u, g["first"]:g["first"] + g["width"]].max()))
                    forms.setdefault(key, []).append(-constant / scale)
            finite = 1
            kinds = []
            for g in groups.values():
                kind = g["role"]["kind"]
                if kind in INTEGER_ROLES or kind in STATIC_ROLES:
                    continue
                if g["width"] > 1:
                    size = g["width"] + 1
                elif kind == "counter increment":
                    size = int(g["name"].split("(Z")[1].split(")")[0]) if "(Z" in g["name"] else 2
                else:
                    size = 2
                finite *= size
                kinds.append("%s:%d" % (g["name"], size))
            ranges = [(min(v), max(v), len(set(np.round(v, 6)))) for v in forms.values()]
            joint = finite
            for lo, hi, _ in ranges:
                joint *= int(np.floor(hi) - np.ceil(lo)) + 3  # every integer between, and one each side
            out["blocks"].append({"layer": i, "block": blk["name"], "units": blk["count"],
                                  "finite_groups": kinds, "finite_combinations": finite,
                                  "forms": len(forms), "form_ranges": ranges, "points": joint,
                                  "static_read": sorted(g["name"] for g in groups.values()
                                                        if g["role"]["kind"] in STATIC_ROLES)})
            out["mlp_points_x_units"] += joint * blk["count"]
    return out


def walk_lemma(n, s0):
    """Theorem 3's lemma for a unit-step walk on cells 0..M (M = n - 1), checked on the finite
    abstraction it lives in: the cell x, the free sum's class S mod n and the vector
    D_r = S - S(latest visit to class r), which lies in [-(n-1), n-1] (0 for r = S mod n:
    steps of +-1 keep S strictly between two neighbouring levels of r since its latest visit).
    From the virtual history (M steps down, then s0 up, S_0 = 0), a breadth-first search over
    the moves +1 and -1 visits every reachable (x, S mod n, D) and checks
    x = #{r : 1 <= D_r <= M} at each. Returns (reachable nodes, failures, distinct D vectors)."""
    M = n - 1
    top = M - s0  # the virtual history: from level M - s0 down M steps to -s0, then up to 0
    path = list(range(top, top - M - 1, -1)) + list(range(-s0 + 1, 1))
    start_last = {}
    for v in path:
        start_last[v % n] = v
    x = s0  # pinned at 0 by the M downs, then s0 up
    S = 0
    D = tuple(S - start_last[r] for r in range(n))
    seen = {(x, S % n, D)}
    frontier = [(x, S % n, D)]
    failures = 0
    while frontier:
        nxt = []
        for (x, c, D) in frontier:
            if x != sum(1 for d in D if 1 <= d <= M):
                failures += 1
            for step in (1, -1):
                c2 = (c + step) % n
                D2 = tuple(0 if r == c2 else d + step for r, d in enumerate(D))
                node = (min(max(x + step, 0), M), c2, D2)
                if node not in seen:
                    seen.add(node)
                    nxt.append(node)
        frontier = nxt
    return len(seen), failures, len({D for (_, _, D) in seen})


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--exhaustive", type=int, default=6)
    ap.add_argument("--random", type=int, default=4)
    ap.add_argument("--long-len", type=int, default=None)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--walk-lemma", type=int, metavar="N",
                    help="only check Theorem 3's lemma on its finite abstraction for N cells (initial cell 0..N-1)")
    ap.add_argument("--structure", action="store_true",
                    help="only the finite check's size per block and head, from the weights (no forward)")
    a = ap.parse_args(argv)
    if a.walk_lemma:
        for s0 in range(a.walk_lemma):
            nodes, failures, dvectors = walk_lemma(a.walk_lemma, s0)
            print("walk of %d cells from cell %d: %d reachable (x, S mod n, D), %d distinct D, %d failures"
                  % (a.walk_lemma, s0, nodes, dvectors, failures))
        return 0
    dtype = np.float32 if a.float32 else np.float64
    t, metadata = load(a.file, dtype)
    config = json.loads(metadata["config"])
    automaton = json.loads(metadata["automaton"])
    subspaces = json.loads(metadata["residual_subspaces"])
    alphabet = config["vocabulary"][1:]
    T = config["max_len"]
    if a.structure:
        st = structure(t, config, subspaces)
        if a.json:
            print(json.dumps(st, indent=1))
            return 0
        print("%s: max-len %d, %d layers" % (a.file, T, len(config["layers"])))
        for blk in st["blocks"]:
            print("  mlp L%d %-58s units %5d finite %5d forms %d ranges %s points %.3g  static %s" % (
                blk["layer"], blk["block"][:58], blk["units"], blk["finite_combinations"], blk["forms"],
                ["[%g, %g] %d bp" % r for r in blk["form_ranges"]], blk["points"], blk["static_read"]))
        for h in st["heads"]:
            print("  head L%d.%d %-8s key values/position %d pairs %.3g  (%s)" % (
                h["layer"], h["head"], h["kind"], h["key_values_per_position"], h["pairs"], h["name"]))
        print("  total: MLP points x units %.3g, head score pairs %.3g" % (st["mlp_points_x_units"], st["head_pairs"]))
        return 0
    long_len = min(a.long_len or T, T)
    rng = np.random.default_rng(a.seed)

    batches = []  # (words, tokens)
    short = [list(w) for w in itertools.product(alphabet, repeat=a.exhaustive)]
    for i in range(0, len(short), 512):
        batches.append(short[i:i + 512])
    long_words = [[alphabet[j] for j in rng.integers(0, len(alphabet), long_len)] for _ in range(a.random)]
    # one word per letter repeated: the extreme counts (a letter that always moves a counter)
    long_words += [[c] * long_len for c in alphabet]
    for w in long_words:
        batches.append([w])

    vocab = {c: i + 1 for i, c in enumerate(alphabet)}
    per_point = {}  # (point, subspace) -> list of rounded tuples; drift
    keys = {"t": [], "transformation": [], "shifted": []}
    gaps = {}  # (layer, head) -> [least gap, largest leak, argmin (t)]
    mlp_inputs = {}  # (layer, block) -> set of rounded input tuples
    layers = config["layers"]
    blocks = {}
    for i, layer in enumerate(layers):
        W = t["layers.%d.mlp.in.weight" % i] if layer["mlp_hidden"] is not None else None
        for b in layer.get("mlp_blocks") or []:
            rows = W[b["first"]:b["first"] + b["count"]]
            used = np.flatnonzero(np.abs(rows).max(axis=0) > 0)
            blocks[(i, b["name"])] = (used, b["count"], [s["name"] for s in subspaces
                                                         if np.any((used >= s["first"]) & (used < s["first"] + s["width"]))])
            mlp_inputs[(i, b["name"])] = set()
    for words in batches:
        tokens = np.array([[0] + [vocab[c] for c in w] for w in words])
        points, scores = forward(t, config, tokens, dtype)
        trans, shifted = prefix_keys(automaton, words)
        B, n = tokens.shape
        for b in range(B):
            keys["t"] += list(range(n))
            keys["transformation"] += trans[b]
            keys["shifted"] += shifted[b]
        for name, x in points:
            for s in subspaces:
                v = x[:, :, s["first"]:s["first"] + s["width"]].astype(np.float64).reshape(B * n, -1)
                r = np.round(v * 64) / 64
                entry = per_point.setdefault((name, s["name"]), {"values": [], "drift": 0.0, "role": s["role"]})
                entry["values"] += [tuple(row) for row in r]
                entry["drift"] = max(entry["drift"], float(np.abs(v - r).max(initial=0)))
        for (i, h, s) in scores:
            top = np.sort(s, axis=2)
            gap = top[:, :, -1] - top[:, :, -2]  # -inf at t = 0 (one key): ignored
            gap = np.where(np.isfinite(gap), gap, np.inf)
            leak = np.exp(np.where(np.isfinite(s), s - top[:, :, -1:], -np.inf))
            leak = leak.sum(axis=2) - 1.0  # the runner-ups' weight before normalising
            g = gaps.setdefault((i, h), [np.inf, 0.0, None])
            m = float(gap.min())
            if m < g[0]:
                g[0], g[2] = m, int(np.unravel_index(np.argmin(gap), gap.shape)[1])
            g[1] = max(g[1], float(leak.max()))
            if layers[i]["heads"][h]["kind"] == "average":
                # the kept weights: those within 30 of the row's maximum (e^-30 ~ 1e-13);
                # their spread relative to their mean is what an exact average needs 0 of
                w = np.exp(np.where(np.isfinite(s), s - top[:, :, -1:], -np.inf))
                w /= w.sum(axis=2, keepdims=True)
                kept = np.isfinite(s) & (s > top[:, :, -1:] - 30)
                kept[:, :, 0] = False  # BOS carries the rest of the mass by design
                hi = np.where(kept, w, -np.inf).max(axis=2)
                lo = np.where(kept, w, np.inf).min(axis=2)
                ok = np.isfinite(hi) & np.isfinite(lo)
                spread = np.where(ok, (hi - lo) / np.where(ok, lo, 1), 0)
                g.append(float(spread.max()))
                g.append(int((np.isfinite(s) & ~kept).sum()))  # keys dropped (exact 0 or below e^-30)
        for (i, name), (used, count, names) in blocks.items():
            x = dict(points)["layer %d attention" % i]
            v = np.round(x[:, :, used].astype(np.float64).reshape(B * n, -1) * 64) / 64
            mlp_inputs[(i, name)].update(map(tuple, v))

    key_kinds = [("t", keys["t"]), ("transformation", keys["transformation"]),
                 ("(transformation at t-1, letter)", keys["shifted"])]
    report = {"file": a.file, "arithmetic": "float32 (numpy order)" if a.float32 else "float64",
              "exhaustive_length": a.exhaustive, "random_words": a.random, "long_len": long_len,
              "max_len": T, "points": [], "heads": [], "mlp_blocks": []}
    for (point, name), e in per_point.items():
        distinct = sorted(set(e["values"]))
        kind = least_key(e["values"], key_kinds)
        item = {"point": point, "subspace": name, "role": e["role"], "distinct": len(distinct),
                "function_of": kind, "drift": e["drift"]}
        if len(distinct[0]) == 1:
            item["range"] = [float(distinct[0][0]), float(distinct[-1][0])]
        report["points"].append(item)
    for (i, h), (g, leak, at, *avg) in gaps.items():
        head = layers[i]["heads"][h]
        report["heads"].append({"layer": i, "head": h, "kind": head["kind"], "name": head["name"],
                                "query_reads": support(t["layers.%d.attn.q" % i][h], subspaces),
                                "key_reads": support(t["layers.%d.attn.k" % i][h], subspaces),
                                "least_gap": g, "at_t": at, "largest_leak": leak,
                                **({"kept_weight_spread": max(avg[0::2])} if avg else {})})
    for (i, name), (used, count, names) in blocks.items():
        report["mlp_blocks"].append({"layer": i, "block": name, "units": count, "reads": names,
                                     "input_dims": len(used), "combinations_seen": len(mlp_inputs[(i, name)])})
    if a.json:
        print(json.dumps(report, indent=1))
        return 0
    print("%s (%s; every word of %d, %d random of %d and one per letter)" % (
        a.file, report["arithmetic"], a.exhaustive, a.random, long_len))
    last = {}
    for p in report["points"]:
        sig = (p["distinct"], p["function_of"], round(p["drift"], 12), tuple(p.get("range", ())))
        if last.get(p["subspace"]) == sig:
            continue  # unchanged since the previous point
        last[p["subspace"]] = sig
        print("  %-18s %-58s %5d values  f(%s)  drift %.3g%s" % (
            p["point"], p["subspace"][:58], p["distinct"], p["function_of"], p["drift"],
            "  range %s" % p["range"] if "range" in p else ""))
    for h in report["heads"]:
        if h["kind"] == "average":
            print("  head L%d.%d average: kept weights' largest relative spread %.3g  q:%s k:%s  (%s)" % (
                h["layer"], h["head"], h["kept_weight_spread"], h["query_reads"], h["key_reads"], h["name"]))
            continue
        print("  head L%d.%d %-8s gap %-10.6g leak %.3g at t=%s  q:%s k:%s  (%s)" % (
            h["layer"], h["head"], h["kind"], h["least_gap"], h["largest_leak"], h["at_t"],
            h["query_reads"], h["key_reads"], h["name"]))
    for b in report["mlp_blocks"]:
        print("  mlp L%d %-60s units %5d inputs %3d combos seen %6d  reads %s" % (
            b["layer"], b["block"][:60], b["units"], b["input_dims"], b["combinations_seen"], b["reads"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
