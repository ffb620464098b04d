#!/usr/bin/python3
"""A design probe for certifying kr networks (Theorem 2's cascade) and the clamped walk
(Theorem 3), issue 36 items 1 and 4: it measures what compiler/certify.md's section "kr and walk
networks: the design" argues. It is not a certifier and proves nothing: it samples.

Usage: kr_invariant_probe.py FILE [--exhaustive L] [--random N] [--long-len T] [--seed S]
                             [--float32] [--json]
       kr_invariant_probe.py FILE --structure [--max-work W] [--json]
       kr_invariant_probe.py - --walk-lemma N

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
  seen (restricted to those subspaces, rounded to 1/64), and the units.

--structure reads the weights only (no words): per MLP block the finite check's size (gate
combinations x the integer form's range), a comb's largest sum of |output terms| over the
counts that can occur, a whole-sum count's float32 error bound in any order; per select head
the gaps over every query t, key s <= t and key value; per average head its kept sets and leak.
--walk-lemma N checks Theorem 3's lemma on its finite abstraction (no weights).

The figures are observations over the words run, not bounds over all words."""
import argparse
import itertools
import json
import os
import struct
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
STATIC_ROLES = {"constant", "position", "position code", "log remaining", "bos", "block code",
                "block start", "log remaining in block", "log remaining blocks"}


def count_producer(t, config, subspaces, dim):
    """The whole-sum head that writes count dimension dim, and the largest increment one
    position adds to that count: the value group's values (the letters' embedding rows when
    the embedding writes it, else an increment's 0..p-1) through W_V and W_O, over T + 1 (the
    head's weights are 1/(T + 1), its output weight T + 1). None when no head writes it."""
    T = config["max_len"]
    for i, layer in enumerate(config["layers"]):
        for h, head in enumerate(layer["heads"]):
            O = t["layers.%d.attn.o" % i][h]
            if head["kind"] != "average" or not np.any(O[:, dim]):
                continue
            V = t["layers.%d.attn.v" % i][h]
            per_unit = (V @ O)[:, dim]  # one unit of each residual dimension, into the count
            reads = np.flatnonzero(per_unit)
            rows = t["embed.token"][1:]
            if np.any(rows[:, reads]):
                largest = float(np.abs(rows @ per_unit).max())
            else:
                # written by an MLP: an increment 0..p-1, else a one-hot or a flag (0 or 1)
                largest = float(np.abs(per_unit[reads]).max())
                for g in subspaces:
                    if (g["first"] <= reads[0] < g["first"] + g["width"] and "(Z" in g["name"]
                            and g["role"]["kind"] == "counter increment"):
                        p = int(g["name"].split("(Z")[1].split(")")[0])
                        largest *= p - 1
            return {"layer": i, "head": h, "largest_increment": largest / (T + 1)}
    return None


def whole_sum_epsilon(t, config, i, h, dim, largest_increment, u=2.0 ** -24, exp_ulps=2):
    """A sound bound, for every t <= T, on |computed count - z| for a whole-sum head (BOS
    scores sigma(t) = scale * q(t) * k, one product each; every other key 0), in float32 with
    any summation order, when every position adds at most largest_increment (z <= that * t):
    the bias of exact arithmetic, z * |c(t) - 1| with c(t) = (T + 1) e^-sigma / (1 + t e^-sigma)
    (sigma is float32's rounding of ln(T + 1 - t), not the logarithm), plus the roundings: exp
    within exp_ulps ulps, the normaliser's t + 1 terms (gamma_t), the division, the products,
    the weighted sum's t + 1 terms (gamma_(t+1)) and the output product. Returns the largest
    bound and its t."""
    T = config["max_len"]
    f = np.float32
    scale = f(config["attention"]["scale"])
    Wq, Wk = t["layers.%d.attn.q" % i][h].astype(f), t["layers.%d.attn.k" % i][h].astype(f)
    O = float(t["layers.%d.attn.o" % i][h][:, dim].max())
    x = (t["embed.token"][1][None] + t["embed.position"][:T + 1]).astype(f)
    bos = (t["embed.token"][0] + t["embed.position"][0]).astype(f)
    q = x @ Wq  # one nonzero term each in the zoo's heads: exact products, rounded once
    k0 = bos @ Wk
    sigma = (scale * (q @ k0)).astype(f).astype(np.float64)  # BOS's score at each t
    worst, at = 0.0, None
    d = exp_ulps * 2.0 ** -23
    for tq in range(1, T + 1):
        e = np.exp(-sigma[tq])
        c = O * e / (1.0 + tq * e)  # what one unit of value becomes, in exact arithmetic
        z = largest_increment * tq
        gamma_t = tq * u / (1 - tq * u)
        gamma_t1 = (tq + 1) * u / (1 - (tq + 1) * u)
        rho = (1 + d) / (1 - d) * (1 + d) / (1 - gamma_t) * (1 + u) - 1  # each weight's relative error
        rel = (1 + rho) * (1 + u) * (1 + gamma_t1) * (1 + u) - 1  # products, the sum, the output weight
        bound = z * abs(c - 1) + z * c * rel
        if bound > worst:
            worst, at = bound, tq
    return worst, at


def comb_magnitude(t, i, rows, groups, forms, one, max_work, z_max=None):
    """For a block whose units read one integer form (a comb, gated or not): over every
    integer value z of the form's range and every combination of the finite groups' values
    (one-hots and 0; an increment 0..p-1; other 1-wide groups 0 and 1), the largest sum of |output terms| any output of the
    block adds (log2), in exact arithmetic: a sum of float32 terms on the grid 2^g is exact in
    every order while it stays at most 2^24 * 2^g (the comb's terms are multiples of 1/2, so
    2^23). None when the enumeration would pass max_work unit evaluations."""
    W, b = t["layers.%d.mlp.in.weight" % i], t["layers.%d.mlp.in.bias" % i]
    O = t["layers.%d.mlp.out.weight" % i]
    rows = list(rows)
    (coef, breakpoints), = forms.items()
    lo, hi = int(np.floor(min(breakpoints))), int(np.ceil(max(breakpoints)))
    choices = []
    for g in groups.values():
        if g["role"]["kind"] in INTEGER_ROLES or g["role"]["kind"] in STATIC_ROLES:
            continue
        if g["width"] == 1 and g["role"]["kind"] == "counter increment" and "(Z" in g["name"]:
            p = int(g["name"].split("(Z")[1].split(")")[0])
            options = [{g["first"]: float(v)} for v in range(p)]  # an increment: 0..p-1
        else:
            options = [{g["first"] + j: 1.0} for j in range(g["width"])] + [{}]
        choices.append(options)
    combos = list(itertools.product(*choices)) if choices else [()]
    zs = np.arange(max(lo, 0), hi + 1)
    if z_max is not None:
        zs = zs[zs <= z_max]  # the counts that can occur, not the comb's whole range
    if len(combos) * len(zs) * len(rows) > max_work:
        return None
    Wb, bb, Ob = W[rows], b[rows], O[:, rows]
    worst = 0.0
    for combo in combos:
        x = np.zeros((len(zs), W.shape[1]))
        for d in one:
            x[:, d] = 1.0
        for part in combo:
            for d, v in part.items():
                x[:, d] = v
        for d, c in coef:
            x[:, d] = zs * c
        h = np.maximum(x @ Wb.T + bb, 0.0)
        worst = max(worst, float((np.abs(h) @ np.abs(Ob).T).max()))
    return float(np.log2(worst)) if worst > 0 else None


def structure(t, config, subspaces, max_work=2e8):
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
            z_max = None
            whole = None
            if len(forms) == 1:
                (coef, _), = forms.items()
                if len(coef) == 1 and dim_group[coef[0][0]]["role"]["kind"] == "counter sum":
                    producer = count_producer(t, config, subspaces, coef[0][0])
                    if producer:
                        z_max = int(np.ceil(producer["largest_increment"] * T / coef[0][1] - 1e-9))
                        eps, at = whole_sum_epsilon(t, config, producer["layer"], producer["head"],
                                                    coef[0][0], producer["largest_increment"])
                        whole = {"largest_increment": producer["largest_increment"], "z_max": z_max,
                                 "epsilon": eps, "at_t": at}
            magnitude = comb_magnitude(t, i, rows, groups, forms, one, max_work, z_max) if len(forms) == 1 else None
            out["blocks"].append({"layer": i, "block": blk["name"], "units": blk["count"],
                                  "largest_output_magnitude_log2": magnitude, "whole_sum": whole,
                                  "finite_groups": kinds, "finite_combinations": finite,
                                  "forms": len(forms), "form_ranges": ranges, "points": joint,
                                  "static_read": sorted(g["name"] for g in groups.values()
                                                        if g["role"]["kind"] in STATIC_ROLES)})
            out["mlp_points_x_units"] += joint * blk["count"]
    return out


def static_part(t, config, subspaces, token):
    """The static dimensions (constant, positions, BOS) of the embedding at every position
    0..T for one token: what a head whose query or key reads only those sees."""
    T = config["max_len"]
    keep = np.zeros(t["embed.token"].shape[1], dtype=bool)
    for g in subspaces:
        if g["role"]["kind"] in STATIC_ROLES:
            keep[g["first"]:g["first"] + g["width"]] = True
    x = t["embed.token"][token][None] + t["embed.position"][:T + 1]
    return np.where(keep[None], x, 0.0), keep


def select_gaps(t, config, subspaces, i, h):
    """Every query t and key s <= t of a select head whose query reads static groups only and
    whose key reads static groups and at most finite ones (a flag, a one-hot): the key at s is
    its static part plus one value v of the finite groups (every one-hot value, and 0). A value
    v *matches* when its finite part scores above the least one's at t = 1; BOS's key is its
    whole residual before the layer (one fixed vector, taken from a forward of the empty word). The head is a latest-match select
    when, for every t, (1) the latest matching key beats every earlier matching one, (2) every
    matching key beats BOS and (3) BOS beats every non-matching key; returned: the least gap of
    each over every t, and where (1) is least. A head whose key reads static groups only is a
    position fetch: the least gap between its best and second-best key over every t."""
    T = config["max_len"]
    kr = support(t["layers.%d.attn.k" % i][h], subspaces)
    qr = support(t["layers.%d.attn.q" % i][h], subspaces)
    kinds = {g["name"]: g for g in subspaces}
    if any(kinds[n]["role"]["kind"] not in STATIC_ROLES for n in qr):
        return None
    letters, keep = static_part(t, config, subspaces, 1)
    # BOS is one fixed vector at every layer (the empty prefix): its residual before layer i
    points, _ = forward(t, config, np.zeros((1, 1), dtype=int), t["embed.token"].dtype.type)
    bos = [x for name, x in points if name == ("embedding" if i == 0 else
                                                 "layer %d mlp" % (i - 1))][-1][0, 0]
    scale = config["attention"]["scale"]
    Wq, Wk = t["layers.%d.attn.q" % i][h], t["layers.%d.attn.k" % i][h]
    Q = letters @ Wq
    Q[0] = bos @ Wq
    Ks = letters @ Wk
    Ks[0] = bos @ Wk
    S = scale * (Q @ Ks.T)  # (T+1, T+1): static scores, query t, key s
    causal = np.tril(np.ones_like(S, dtype=bool))
    finite = [kinds[n] for n in kr if kinds[n]["role"]["kind"] not in STATIC_ROLES]
    if not finite:
        Sm = np.where(causal, S, -np.inf)
        top = np.sort(Sm, axis=1)
        gap = (top[:, -1] - top[:, -2])[1:]
        return {"kind": "position fetch", "least_gap": float(gap.min()), "at_t": int(np.argmin(gap)) + 1}
    values = []
    d = Wk.shape[0]
    for g in finite:
        if g["width"] > 1:
            for j in range(g["width"]):
                v = np.zeros(d)
                v[g["first"] + j] = 1
                values.append(v)
        else:
            v = np.zeros(d)
            v[g["first"]] = 1
            values.append(v)
    values.append(np.zeros(d))
    M = scale * (Q @ (np.array(values) @ Wk).T)  # (T+1, V): the finite part's score per query
    bos_score = S[:, 0]
    match = M[1] > M[1].min() + 1e-9  # the values the query prefers (decided at t = 1)
    worst = {"latest over earlier": np.inf, "match over BOS": np.inf, "BOS over non-match": np.inf}
    at = None
    for tq in range(1, T + 1):
        row = S[tq, 1:tq + 1]
        for v in np.flatnonzero(match):
            sc = row + M[tq, v]
            if tq >= 2:
                g1 = float(np.min(sc[1:] - sc[:-1])) if len(match) else np.inf
                if g1 < worst["latest over earlier"]:
                    worst["latest over earlier"], at = g1, tq
            worst["match over BOS"] = min(worst["match over BOS"], float(sc.min() - bos_score[tq]))
        nonmatch = np.flatnonzero(~match)
        if len(nonmatch):
            worst["BOS over non-match"] = min(worst["BOS over non-match"],
                                              float(bos_score[tq] - (row.max() + M[tq, nonmatch].max())))
    return {"kind": "latest match", "matching_values": int(match.sum()), "values": len(values),
            **worst, "at_t": at}


def average_scores(t, config, subspaces, i, h, kept_within=20.0):
    """An average head's static scores over every query t <= T and key s <= t (None when its
    query or key reads a non-static group). Per query, the keys within kept_within of the
    row's maximum are the ones the construction means to weigh (BOS's share included); the
    others should get nothing. Returns the most distinct score levels among the kept keys of
    one query (1: a tie set, whose weights 1/|set| are exact when |set| is a power of 2), the
    largest tie set that is not a power of 2, the least gap from a row's maximum to a key
    outside the kept ones, and the largest leak: those keys' total weight relative to the
    kept ones' (0 where every such gap is past float32's underflow, about 104)."""
    T = config["max_len"]
    kinds = {g["name"]: g for g in subspaces}
    reads = support(t["layers.%d.attn.q" % i][h], subspaces) + support(t["layers.%d.attn.k" % i][h], subspaces)
    if any(kinds[n]["role"]["kind"] not in STATIC_ROLES for n in reads):
        return None
    letters, _ = static_part(t, config, subspaces, 1)
    points, _ = forward(t, config, np.zeros((1, 1), dtype=int), t["embed.token"].dtype.type)
    bos = [x for name, x in points if name == ("embedding" if i == 0 else "layer %d mlp" % (i - 1))][-1][0, 0]
    Wq, Wk = t["layers.%d.attn.q" % i][h], t["layers.%d.attn.k" % i][h]
    Q, K = letters @ Wq, letters @ Wk
    Q[0], K[0] = bos @ Wq, bos @ Wk
    S = config["attention"]["scale"] * (Q @ K.T)
    levels, odd_set, drop, leak, at = 0, 0, np.inf, 0.0, None
    for tq in range(T + 1):
        row = S[tq, :tq + 1] - S[tq, :tq + 1].max()
        kept = row > -kept_within
        levels = max(levels, len(np.unique(row[kept])))
        n_top = int((row == 0).sum())
        if len(np.unique(row[kept])) == 1 and n_top & (n_top - 1):
            odd_set = max(odd_set, n_top)
        if (~kept).any():
            if -row[~kept].max() < drop:
                drop, at = float(-row[~kept].max()), tq
            leak = max(leak, float(np.exp(row[~kept]).sum() / np.exp(row[kept]).sum()))
    return {"most_kept_levels": levels, "largest_tie_set_not_power_of_2": odd_set,
            "least_dropped_gap": drop, "at_t": at, "largest_leak": leak}


def sequential_whole_sum(t, config):
    """Layer 0 head 0, when it is a whole-sum counter: every t <= T, every word of one letter
    repeated (the counts' extremes), the head run in float32 with running sums (np.cumsum in
    float32 sums in order: the normaliser, then the weighted values in key order), against
    the exact count. Returns the largest |computed count - count|: one summation order,
    for comparison with whole_sum_epsilon's any-order bound."""
    f = np.float32
    T = config["max_len"]
    Wq, Wk, Wv, Wo = (t["layers.0.attn." + k][0].astype(f) for k in "qkvo")
    dim = int(np.flatnonzero(Wo[0])[0])
    bos = (t["embed.token"][0] + t["embed.position"][0]).astype(f)
    worst = 0.0
    for letter in range(1, t["embed.token"].shape[0]):
        x = (t["embed.token"][letter][None] + t["embed.position"][:T + 1]).astype(f)
        x[0] = bos
        q, k, v = x @ Wq, (x @ Wk)[:, 0], (x @ Wv)[:, 0]
        for tq in range(1, T + 1):
            s = (f(config["attention"]["scale"]) * (q[tq, 0] * k[:tq + 1]).astype(f)).astype(f)
            e = np.exp((s - s.max()).astype(f)).astype(f)
            w = (e / np.cumsum(e, dtype=f)[-1]).astype(f)
            count = f(np.cumsum((w * v[:tq + 1]).astype(f), dtype=f)[-1] * Wo[0, dim])
            z = float(v[1:tq + 1].astype(np.float64).sum() * Wo[0, dim].astype(np.float64) / (T + 1))
            worst = max(worst, abs(float(count) - z))
    return worst


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
    ap.add_argument("--sequential-whole-sum", action="store_true",
                    help="only run layer 0's whole-sum head with running float32 sums on one-letter words")
    ap.add_argument("--max-work", type=float, default=2e8,
                    help="--structure: the most unit evaluations one comb's magnitude check may take")
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
    try:
        t, metadata = load(a.file, dtype)
        config = json.loads(metadata["config"])
        strategy = json.loads(metadata["compiler"]).get("strategy")
    except (OSError, ValueError, KeyError, struct.error) as e:
        print("kr_invariant_probe: %s: not a krc weights file (%s)" % (a.file, e), file=sys.stderr)
        return 2
    if strategy != "kr":
        print("kr_invariant_probe: %s: strategy %r; this probe reads kr and walk networks only" % (a.file, strategy),
              file=sys.stderr)
        return 2
    automaton = json.loads(metadata["automaton"])
    subspaces = json.loads(metadata["residual_subspaces"])
    alphabet = config["vocabulary"][1:]
    T = config["max_len"]
    if a.sequential_whole_sum:
        head = config["layers"][0]["heads"][0]
        if head["kind"] != "average" or head.get("role", {}).get("kind") != "counter sum":
            print("%s: layer 0 head 0 is not a whole-sum counter" % a.file)
            return 1
        print("%s: running float32 sums, one-letter words, every t <= %d: largest |count - z| %.6g" % (
            a.file, T, sequential_whole_sum(t, config)))
        return 0
    if a.structure:
        st = structure(t, config, subspaces, a.max_work)
        if a.json:
            print(json.dumps(st, indent=1))
            return 0
        print("%s: max-len %d, %d layers" % (a.file, T, len(config["layers"])))
        for blk in st["blocks"]:
            print("  mlp L%d %-58s units %5d finite %5d forms %d ranges %s points %.3g  |out| 2^%s  static %s" % (
                blk["layer"], blk["block"][:58], blk["units"], blk["finite_combinations"], blk["forms"],
                ["[%g, %g] %d bp" % r for r in blk["form_ranges"]][:2], blk["points"],
                "%.2f" % blk["largest_output_magnitude_log2"] if blk["largest_output_magnitude_log2"] else "-",
                blk["static_read"]))
            if blk["whole_sum"] and blk["whole_sum"]["at_t"] is not None:
                w = blk["whole_sum"]
                print("      its count: whole sum, at most %g a position, z <= %d; float32 any-order error <= %.4g (t = %d)" % (
                    w["largest_increment"], w["z_max"], w["epsilon"], w["at_t"]))
        for h in st["heads"]:
            print("  head L%d.%d %-8s key values/position %d pairs %.3g  (%s)" % (
                h["layer"], h["head"], h["kind"], h["key_values_per_position"], h["pairs"], h["name"]))
        print("  total: MLP points x units %.3g, head score pairs %.3g" % (st["mlp_points_x_units"], st["head_pairs"]))
        for i, layer in enumerate(config["layers"]):
            for h, head in enumerate(layer["heads"]):
                if head["kind"] == "average":
                    print("  average L%d.%d over every t <= %d: %s" % (i, h, T, average_scores(t, config, subspaces, i, h)))
                if head["kind"] == "select":
                    print("  select L%d.%d over every t <= %d: %s" % (i, h, T, select_gaps(t, config, subspaces, i, h)))
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
    walk_d = set()
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
        sums = [g for g in subspaces if g["role"]["kind"] == "walk sum"]
        visits = sorted((g for g in subspaces if g["role"]["kind"] == "latest visit"),
                        key=lambda g: g["role"]["component"])
        if sums and visits:
            # the walk's decoder input: D_r = S_t - S(latest visit to class r), S_t the sum of
            # the blocks' sums; Theorem 3's lemma says the vectors D are at most n^2
            x = dict(points)["layer 1 attention"]
            S = sum(x[:, :, g["first"]] for g in sums)
            D = np.stack([S - x[:, :, g["first"]] for g in visits], axis=2).reshape(B * n, -1)
            walk_d.update(map(tuple, np.round(D).astype(int)))
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
    if walk_d:
        report["walk_distinct_D_vectors"] = len(walk_d)
    if a.json:
        print(json.dumps(report, indent=1))
        return 0
    if walk_d:
        print("walk: %d distinct vectors D_r = S_t - S(latest visit to r) seen" % len(walk_d))
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
