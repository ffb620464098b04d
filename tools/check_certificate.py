#!/usr/bin/env python3
"""Independent checker of `krc certify`'s certificates for scan networks.

Usage: tools/check_certificate.py WEIGHTS.safetensors CERT.json [--json]

Shares no code with the C++: it reads the weights through `safetensors`, rounds with numpy
and `ml_dtypes`, and re-derives every obligation of compiler/certify.md from the weights and
the automaton the file carries, then checks the certificate's claims against what it derived:

- the weights are the certificate's (SHA-256 of the file);
- the position part of the residual (dimensions no layer writes) is a function of t, and the
  rest a function of the window's transformation: the checker enumerates the windows' domain
  itself and refuses a certificate whose recorded domain differs (an element removed);
- each select head's target max(t - 2^l, 0) outscores every other key at every t by at least
  the certificate's min_gap;
- every MLP evaluated on every (fetched, current) pair of the domain, and the unembedding's
  margin at least the certificate's.

Certificates that rest on the selector rule (`krc certify --rule selector`, per state slot, for
binary coordinates) are re-derived by check_selector, its own way: the units' supports are
checked (a bit of slot q reads only the fetched slot q, that bit of the prefix slots and the
positions), then for every (q, s) four rows over the whole residual, with y(s)'s bits and slot
q's old bits each in one class in lockstep, every other bit at its hull; each new bit must be
y(s)'s. Its cost grows as n^2 rows of the whole MLP: small networks, not the 55-state ones.

Bounds are sound for any float32 summation order: |fl(sum) - sum| <= gamma_n sum |terms|,
or exact when every product is a multiple of 2^g and their magnitudes add to at most 2^24 2^g;
rounding to a format is monotone, so an interval's ends round to bounds of the rounded value.

Exit status: 0 the certificate holds, 1 it does not (the reason is printed), 2 bad input.
"""
import argparse
import hashlib
import json
import math
import sys

import ml_dtypes
import numpy as np
from safetensors import safe_open

U = 2.0 ** -24
# The certificate's figures (min_gap, margin) are reports: the checker proves its own bounds
# from the weights and accepts a figure no larger than its own but for this much (its any-
# order bounds are derived apart from the C++'s and may be a few ulps looser).
TOLERANCE = 1e-6
DRIFT = 2.0 ** -30  # past this, a layer changed an encoding (far above the softmax's leaks)


class Refuse(Exception):
    pass


def load_weights(path):
    with safe_open(path, framework="np") as f:
        meta = f.metadata() or {}
        raw = {k: f.get_tensor(k) for k in f.keys()}
    sparse = json.loads(meta.get("sparse", "{}"))
    tensors = {}
    for name, shape in sparse.items():
        dense = np.zeros(shape, dtype=np.float32)
        idx = raw[name + ".indices"].astype(np.int64)
        if len(idx):
            dense[tuple(idx.T)] = raw[name + ".values"]
        tensors[name] = dense
    for name, t in raw.items():
        if not (name.endswith(".indices") or name.endswith(".values")) or name.rsplit(".", 1)[0] not in sparse:
            tensors[name] = t
    return tensors, meta


def rounder(fmt):
    if fmt == "float32":
        return lambda x: np.asarray(x, dtype=np.float32).astype(np.float64)
    dtype = ml_dtypes.bfloat16 if fmt == "bf16" else np.float16
    return lambda x: np.asarray(x, dtype=np.float32).astype(dtype).astype(np.float64)


def f32_inside(lo, hi):
    """The float32 numbers in [lo, hi] (a computed float32 lies there)."""
    flo = np.asarray(lo, dtype=np.float32)
    flo = np.where(flo.astype(np.float64) < lo, np.nextafter(flo, np.float32(np.inf)), flo)
    fhi = np.asarray(hi, dtype=np.float32)
    fhi = np.where(fhi.astype(np.float64) > hi, np.nextafter(fhi, np.float32(-np.inf)), fhi)
    return flo.astype(np.float64), fhi.astype(np.float64)


def lowbit(x):
    """Exponent of the lowest set bit of each value (a large number for 0)."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    m, e = np.frexp(x)
    mant = np.ldexp(m, 53).astype(np.uint64)
    lowest = mant & (~mant + np.uint64(1))  # the lowest set bit, a power of two
    tz = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1
    return np.where(x == 0, 10 ** 6, e.astype(np.int64) - 53 + tz)


def idot(W, lo, hi, bias=None):
    """Bounds on the float32 x @ W.T (+ bias as one more term), any order. W [out, in]; lo, hi
    [batch, in]. Returns the float32 numbers it can be. Three cases per output: every term a
    point on one grid 2^g with magnitudes <= 2^(24+g) (exact); such points plus inexact terms
    of total magnitude below 2^(g-24) (the point sum G when G != 0, since every partial sum of
    the points is a float32 and the rest is below half its ulp; else the inexact terms' sum);
    otherwise |fl(sum) - sum| <= gamma_n sum |terms|."""
    W = np.asarray(W, dtype=np.float64)
    if bias is not None:
        W = np.concatenate([W, np.asarray(bias, dtype=np.float64)[:, None]], axis=1)
        ones = np.ones((lo.shape[0], 1))
        lo, hi = np.concatenate([lo, ones], axis=1), np.concatenate([hi, ones], axis=1)
    Wp, Wn = np.maximum(W, 0), np.minimum(W, 0)
    nzW = (W != 0).astype(np.float64)
    point = hi == lo
    plo = np.where(point, lo, 0.0)
    nlo, nhi = np.where(point, 0.0, lo), np.where(point, 0.0, hi)
    g_sum = plo @ W.T
    mag_p = np.abs(plo) @ np.abs(W).T
    small = np.maximum(np.abs(nlo), np.abs(nhi)) @ np.abs(W).T
    s_lo = nlo @ Wp.T + nhi @ Wn.T
    s_hi = nhi @ Wp.T + nlo @ Wn.T
    mag_in = np.maximum(np.abs(lo), np.abs(hi))
    n = (mag_in > 0).astype(np.float64) @ nzW.T
    # g[b, o]: the least lowest-bit exponent of a product W[o, k] x[b, k] (min-plus product),
    # in chunks of the batch to bound the memory.
    LW = np.where(W != 0, lowbit(W), 10 ** 6)  # [out, in]
    LX = np.where(plo != 0, lowbit(plo), 10 ** 6)  # [batch, in]
    g = np.empty((lo.shape[0], W.shape[0]), dtype=np.int64)
    step = max(1, int(2e7 // max(1, W.size)))
    for b in range(0, lo.shape[0], step):
        g[b: b + step] = (LX[b: b + step, None, :] + LW[None, :, :]).min(axis=2)
    g = np.minimum(g, 4000)
    on_grid = (mag_p > 0) & (mag_p <= np.ldexp(1.0, np.clip(24 + g, -1000, 1000)))
    with np.errstate(over="ignore", invalid="ignore"):
        gamma = n * U / (1 - n * U)
    exact = on_grid & (small == 0)
    dominated = on_grid & (small > 0) & (small * (1 + 2 * n * U) < np.ldexp(1.0, np.clip(g - 24, -1000, 1000)))
    slack_all = (mag_p + small) * (gamma + n * 2.0 ** -52) * (1 + 2.0 ** -40)
    slack_small = small * (gamma + n * 2.0 ** -52) * (1 + 2.0 ** -40)
    total_lo, total_hi = g_sum + s_lo, g_sum + s_hi
    lo_out = np.where(exact | (dominated & (g_sum != 0)), g_sum,
                      np.where(dominated, s_lo - slack_small, total_lo - slack_all))
    hi_out = np.where(exact | (dominated & (g_sum != 0)), g_sum,
                      np.where(dominated, s_hi + slack_small, total_hi + slack_all))
    none = (mag_p == 0) & (small == 0)
    lo_out, hi_out = np.where(none, 0.0, lo_out), np.where(none, 0.0, hi_out)
    # Outward by double's own rounding of the products' sums (exact sums stay exact).
    pad = np.where(exact | (dominated & (g_sum != 0)) | none, 0.0, (mag_p + small) * n * 2.0 ** -52)
    return f32_inside(lo_out - pad, hi_out + pad)


def score_bounds(ql, qh, kl, kh):
    """Bounds on the float32 q_t . k_s for every (t, s), any order, both factors intervals."""
    qc, qr = (ql + qh) / 2, (qh - ql) / 2
    kc, kr = (kl + kh) / 2, (kh - kl) / 2
    center = qc @ kc.T
    rad = np.abs(qc) @ kr.T + qr @ np.abs(kc).T + qr @ kr.T
    qm, km = np.maximum(np.abs(ql), np.abs(qh)), np.maximum(np.abs(kl), np.abs(kh))
    mag = qm @ km.T
    n = (qm > 0).astype(np.float64) @ (km > 0).astype(np.float64).T
    g = (np.where(qc != 0, lowbit(qc), 10 ** 6).min(initial=10 ** 6)
         + np.where(kc != 0, lowbit(kc), 10 ** 6).min(initial=10 ** 6))
    exact = (not (qr.any() or kr.any())) and bool((mag <= np.ldexp(1.0, int(min(24 + g, 1000)))).all())
    slack = 0.0 if exact else mag * (n * U / (1 - n * U) + n * 2.0 ** -52) * (1 + 2.0 ** -40)
    return f32_inside(center - rad - slack, center + rad + slack)


def store(fmt, lo, hi):
    r = rounder(fmt)
    return (lo, hi) if fmt == "float32" else (r(lo), r(hi))


def add_rounded(fmt, alo, ahi, blo, bhi):
    """fl32(a + b) then stored: round to nearest is monotone, so the ends of the exact sum's
    range (taken outward in double) round to bounds of it."""
    lo = np.nextafter(alo + blo, -np.inf).astype(np.float32).astype(np.float64)
    hi = np.nextafter(ahi + bhi, np.inf).astype(np.float32).astype(np.float64)
    return store(fmt, lo, hi)


def compose(x, y):
    return tuple(y[q] for q in x)


def mlp_rows(W, i, fmt, static, in_lo, in_hi):
    """Layer i's MLP and residual add on a batch of residual intervals, in the format."""
    win, bin_ = W[f"layers.{i}.mlp.in.weight"], W[f"layers.{i}.mlp.in.bias"]
    wout, bout = W[f"layers.{i}.mlp.out.weight"], W[f"layers.{i}.mlp.out.bias"]
    if fmt == "float32":
        hl, hh = idot(win, in_lo, in_hi, bin_)
    else:
        hl, hh = store(fmt, *idot(win, in_lo, in_hi))
        hl, hh = add_rounded(fmt, hl, hh, bin_[None, :], bin_[None, :])
    hl, hh = np.maximum(hl, 0), np.maximum(hh, 0)
    if fmt == "float32":
        ol, oh = idot(wout, hl, hh, bout)
    else:
        ol, oh = store(fmt, *idot(wout, hl, hh))
        ol, oh = add_rounded(fmt, ol, oh, bout[None, :], bout[None, :])
    lo, hi = add_rounded(fmt, in_lo, in_hi, ol, oh)
    lo[:, static] = 0.0
    hi[:, static] = 0.0
    return lo, hi


def check_selector(cert, W, fmt, T, states, letter_tau, q0, static, st, labels, tok, n_layers,
                   fetch_head, claimed, derived):
    """The selector rule, re-derived its own way (compiler/certify.md): slot q of the prefix
    holds the code of f(q) (bit i of s: +1 set, -1 clear), the fetched copy 0. Per layer and
    per (q, s): the fetched slot q at fetch(code(s)), and four rows in lockstep over the bits:
    y(s)'s bits all in class cy, slot q's old bits all in class co, every other prefix bit at
    its hull. Lockstep is sound because the units writing bit i of slot q are checked to read
    only the fetched slot q, bit i of the prefix slots and position dimensions; each new bit
    must be y(s)'s within DRIFT, each fetched dimension of slot q back to 0."""
    import re
    n = len(states)
    b = max(1, (n - 1).bit_length())
    P, F = np.full((n, b), -1), np.full((n, b), -1)
    name = {s: j for j, s in enumerate(states)}
    for c, lab in enumerate(labels):
        m = re.match(r"^.* (prefix|fetched):f\((.*)\):bit(\d+)$", lab)
        if m and m.group(2) in name and int(m.group(3)) < b:
            (P if m.group(1) == "prefix" else F)[name[m.group(2)], int(m.group(3))] = c
    if (P < 0).any() or (F < 0).any():
        raise Refuse("the selector rule needs a binary-coordinate scan: prefix and fetched slots "
                     "of b bits for every state")
    slot_dims = np.zeros(len(labels), dtype=bool)
    slot_dims[P.ravel()] = True
    slot_dims[F.ravel()] = True
    if (~static & ~slot_dims).any():
        raise Refuse("a written dimension is neither a prefix nor a fetched slot")
    code = np.array([[1.0 if (s >> i) & 1 else -1.0 for i in range(b)] for s in range(n)])
    for row, tau in [(0, tuple(range(n)))] + [(a + 1, t) for a, t in enumerate(letter_tau)]:
        got = np.asarray(np.float32(tok[row]), dtype=np.float64)
        if not (got[P] == code[list(tau)]).all():
            raise Refuse(f"token {row}'s prefix slots are not the codes of its images")
    fl = np.min([np.float32(tok[r])[F.ravel()] for r in range(len(tok))], axis=0).astype(np.float64)
    fh = np.max([np.float32(tok[r])[F.ravel()] for r in range(len(tok))], axis=0).astype(np.float64)
    # The prefix bits' classes: cls[0] when the bit is -1, cls[1] when +1 ([lo, hi] each).
    cls_lo = np.array([[-1.0] * n * b, [1.0] * n * b])
    cls_hi = cls_lo.copy()
    d = len(labels)

    def hull_row():
        lo, hi = np.zeros(d), np.zeros(d)
        lo[P.ravel()], hi[P.ravel()] = cls_lo.min(axis=0), cls_hi.max(axis=0)
        lo[F.ravel()], hi[F.ravel()] = fl, fh
        return lo, hi

    for i in range(n_layers):
        plo, phi, oth = fetch_head(i)
        v, o = W[f"layers.{i}.attn.v"][0], W[f"layers.{i}.attn.o"][0]
        if ((o != 0).any(axis=0) & ~np.isin(np.arange(d), F.ravel())).any():
            raise Refuse(f"layer {i}: the head writes outside the fetched slots")
        wout, win = W[f"layers.{i}.mlp.out.weight"], W[f"layers.{i}.mlp.in.weight"]
        for q in range(n):
            for bit in range(b):
                allowed = static.copy()
                allowed[F[q]] = True
                allowed[P[:, bit]] = True
                units = wout[P[q, bit]] != 0
                if ((win[units] != 0) & ~allowed[None, :]).any():
                    raise Refuse(f"layer {i}: a unit writing '{labels[P[q, bit]]}' reads more "
                                 "than its fetched slot, its bit of the prefix slots and positions")
                allowed = static.copy()
                allowed[F[q]] = True
                units = wout[F[q, bit]] != 0
                if ((win[units] != 0) & ~allowed[None, :]).any():
                    raise Refuse(f"layer {i}: a unit writing '{labels[F[q, bit]]}' reads more "
                                 "than its fetched slot and positions")
        hlo, hhi = hull_row()
        keys_lo = [hlo]
        keys_hi = [hhi]
        for q in range(n):
            for s in range(n):
                lo, hi = hlo.copy(), hhi.copy()
                sel = (code[s] > 0).astype(int)
                lo[P[q]] = cls_lo[sel, q * b + np.arange(b)]
                hi[P[q]] = cls_hi[sel, q * b + np.arange(b)]
                keys_lo.append(lo)
                keys_hi.append(hi)
        xl, xh = np.stack(keys_lo), np.stack(keys_hi)
        vl, vh = store(fmt, *idot(v.T, xl, xh))
        bound = np.maximum(np.abs(vl), np.abs(vh)).max(axis=0)
        cands = np.stack([plo * vl, plo * vh, phi * vl, phi * vh])
        elo, ehi = cands.min(axis=0), cands.max(axis=0)
        exact_p = (elo == ehi) & (np.float32(elo).astype(np.float64) == elo)
        elo = np.where(exact_p, elo, elo - np.abs(elo) * U * 1.0001)
        ehi = np.where(exact_p, ehi, ehi + np.abs(ehi) * U * 1.0001)
        err = 2.0 * oth * bound * (1 + U) * (1 + (T + 1) * U * 1.01) * (1 + 2.0 ** -40)
        zl, zh = store(fmt, *f32_inside(elo - err, ehi + err))
        al, ah = store(fmt, *idot(o.T, zl, zh))  # [1 + n n, d]: what the head adds
        pre_lo, pre_hi = add_rounded(fmt, hlo[None, :], hhi[None, :], al, ah)
        # Every fetched dimension's hull over the keys (read by no unit of another slot).
        last = i + 1 == n_layers
        sread = (win != 0).any(axis=0) & static
        pats = {}
        for t in range(0, T + 1):
            pats.setdefault(tuple(st[t][sread]), t)
        rows_lo, rows_hi, meta = [], [], []
        for q in range(n):
            if last and q != q0:
                continue
            for s in range(n):
                r = 1 + q * n + s
                for cy in (0, 1):
                    for co in (0, 1):
                        if s == q and cy != co:
                            continue
                        for t in pats.values():
                            lo, hi = pre_lo[0].copy(), pre_hi[0].copy()
                            lo[F[q]], hi[F[q]] = pre_lo[r, F[q]], pre_hi[r, F[q]]
                            lo[P[s]], hi[P[s]] = cls_lo[cy, s * b + np.arange(b)], cls_hi[cy, s * b + np.arange(b)]
                            if s != q:
                                lo[P[q]], hi[P[q]] = cls_lo[co, q * b + np.arange(b)], cls_hi[co, q * b + np.arange(b)]
                            lo[static], hi[static] = st[t][static], st[t][static]
                            rows_lo.append(lo)
                            rows_hi.append(hi)
                            meta.append((q, s, cy))
        out_lo, out_hi = mlp_rows(W, i, fmt, static, np.stack(rows_lo), np.stack(rows_hi))
        new_lo = np.full((2, n * b), np.inf)
        new_hi = np.full((2, n * b), -np.inf)
        new_fl, new_fh = np.zeros(n * b), np.zeros(n * b)
        for row, (q, s, cy) in enumerate(meta):
            want = 1.0 if cy else -1.0
            got_lo, got_hi = out_lo[row, P[q]], out_hi[row, P[q]]
            bad = np.flatnonzero((got_lo < want - DRIFT) | (got_hi > want + DRIFT))
            if len(bad):
                raise Refuse(f"layer {i}: '{labels[P[q, bad[0]]]}' becomes [{got_lo[bad[0]]}, "
                             f"{got_hi[bad[0]]}] where it must be {want} (fetched slot names "
                             f"{states[s]})")
            idx = q * b + np.arange(b)
            new_lo[cy, idx] = np.minimum(new_lo[cy, idx], got_lo)
            new_hi[cy, idx] = np.maximum(new_hi[cy, idx], got_hi)
            if not last:
                cl, ch = out_lo[row, F[q]], out_hi[row, F[q]]
                if (np.maximum(np.abs(cl), np.abs(ch)) > DRIFT).any():
                    raise Refuse(f"layer {i}: the fetched copy of {states[q]} is not cleared")
                new_fl[idx] = np.minimum(new_fl[idx], cl)
                new_fh[idx] = np.maximum(new_fh[idx], ch)
        if not last:
            cls_lo, cls_hi, fl, fh = new_lo, new_hi, new_fl, new_fh
        else:
            cls_lo[:, q0 * b + np.arange(b)] = new_lo[:, q0 * b + np.arange(b)]
            cls_hi[:, q0 * b + np.arange(b)] = new_hi[:, q0 * b + np.arange(b)]

    U_ = W["unembed"]
    reads = (U_ != 0).any(axis=1)
    only = static.copy()
    only[P[q0]] = True
    if (reads & ~only).any():
        raise Refuse("the unembedding reads more than the initial state's slot and positions")
    upats = {}
    for t in range(0, T + 1):
        upats.setdefault(tuple(st[t][reads & static]), t)
    margin = math.inf
    for t in upats.values():
        for s in range(n):
            sel = (code[s] > 0).astype(int)
            lo, hi = np.zeros(len(labels)), np.zeros(len(labels))
            lo[static], hi[static] = st[t][static], st[t][static]
            lo[P[q0]], hi[P[q0]] = cls_lo[sel, q0 * b + np.arange(b)], cls_hi[sel, q0 * b + np.arange(b)]
            ll, lh = store(fmt, *idot(U_.T, lo[None, :], hi[None, :]))
            rest = np.delete(lh[0], s)
            if len(rest):
                margin = min(margin, float(ll[0, s] - rest.max()))
    if margin <= 0:
        raise Refuse(f"the unembedding's margin is {margin}")
    c_margin = claimed("unembedding", n_layers, "margin")
    if c_margin is None or c_margin > margin + TOLERANCE * (1 + abs(margin)) or cert["claim"].get("margin") != c_margin:
        raise Refuse(f"the certificate claims margin {c_margin}, the weights give {margin}")
    derived["margin"] = margin
    return derived


def check(weights_path, cert):
    with open(weights_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    claim = cert.get("claim", {})
    if claim.get("weights_sha256") != digest:
        raise Refuse(f"the certificate is for weights with SHA-256 {claim.get('weights_sha256')}, "
                     f"not this file's {digest}")
    if cert.get("certified") is not True:
        raise Refuse("the certificate does not claim the network certified")
    rules = {claim.get("rule", "pairs")} | {o.get("rule", "pairs") for o in cert.get("obligations", [])
                                           if isinstance(o, dict) and o.get("kind") == "mlp"}
    if rules not in ({"pairs"}, {"selector"}):
        raise Refuse(f"the certificate mixes or names unknown rules {sorted(rules)}")
    tensors, meta = load_weights(weights_path)
    config = json.loads(meta["config"])
    compiler = json.loads(meta.get("compiler", "{}"))
    automaton = json.loads(meta["automaton"])
    if compiler.get("strategy") != "scan":
        raise Refuse("the checker covers scan networks only")
    fmt = claim.get("arithmetic")
    if fmt not in ("float32", "bf16", "fp16"):
        raise Refuse(f"unknown arithmetic {fmt!r}")
    R = rounder(fmt)
    T = int(claim["max_len"])
    if not 0 <= T <= config["max_len"]:
        raise Refuse(f"max_len {T} past the network's {config['max_len']}")
    states = automaton["states"]
    letters = automaton["alphabet"]
    sidx = {s: i for i, s in enumerate(states)}
    if config["states"] != states:
        raise Refuse("the logits are not the automaton's states")
    q0 = sidx[automaton["initial"]]
    trans = automaton["transitions"]
    letter_tau = []
    for a in letters:  # transitions: {letter: [target of each state, in order]}
        row = trans[a]
        letter_tau.append(tuple(sidx[x] if isinstance(x, str) else int(x) for x in row))
    n_layers = config["n_layers"]
    if n_layers < 31 and 2 ** n_layers < T:
        raise Refuse(f"{n_layers} steps compose fewer than {T} letters")
    W = {k: R(v) for k, v in tensors.items()}
    scale = float(R(np.float32(config["attention"]["scale"])))
    d = config["d_model"]
    labels = json.loads(meta["residual_labels"])

    written = np.zeros(d, dtype=bool)
    for i in range(n_layers):
        written |= (W[f"layers.{i}.attn.o"] != 0).any(axis=(0, 1))
        written |= (W[f"layers.{i}.mlp.out.weight"] != 0).any(axis=1)
        written |= W[f"layers.{i}.mlp.out.bias"] != 0
    static = ~written
    for i in range(n_layers):
        for name, want_static in (("q", True), ("k", True), ("v", False)):
            reads = (W[f"layers.{i}.attn.{name}"] != 0).any(axis=(0, 2))
            if (reads & (static != want_static)).any():
                raise Refuse(f"layer {i}: the {name} projection reads the wrong kind of dimension")

    tok, pos = W["embed.token"], W["embed.position"]
    if (pos[: T + 1][:, ~static] != 0).any():
        raise Refuse("the position embedding writes a window dimension")
    if len(tok) > 1 and (tok[1:][:, static] != tok[1][static]).any():
        raise Refuse("the letters' embeddings differ on a position dimension")
    # Static part at every t (t = 0 holds BOS, t >= 1 a letter), stored in the format.
    st = np.zeros((T + 1, d))
    st[0] = R(np.float32(tok[0]) + np.float32(pos[0]))
    if len(tok) > 1 and T >= 1:
        st[1:] = R(np.float32(tok[1])[None, :] + np.float32(pos[1: T + 1]))
    st[:, ~static] = 0.0

    def data_vec(row):
        v = np.where(static, 0.0, R(np.float32(row)))
        return (v.copy(), v.copy())

    identity = tuple(range(len(states)))
    bos = data_vec(tok[0])
    domain = {}
    for a, tau in enumerate(letter_tau):
        v = data_vec(tok[a + 1])
        if tau in domain:
            v = (np.minimum(domain[tau][0], v[0]), np.maximum(domain[tau][1], v[1]))
        domain[tau] = v

    recorded = {inv["after_layer"]: {tuple(t) for t in inv["domain"]} for inv in cert.get("invariant", [])
                if "domain" in inv}
    obligations = cert.get("obligations", [])

    def check_domain(layer):
        got = recorded.get(layer)
        if got is None or got != set(domain):
            missing = set(domain) - (got or set())
            raise Refuse(f"the certificate's domain after layer {layer} is not the windows' "
                         f"transformations (missing {len(missing)}, e.g. {sorted(missing)[:1]}; "
                         f"extra {len((got or set()) - set(domain))})")

    def claimed(kind, layer, key):
        for o in obligations:
            if o.get("kind") == kind and o.get("layer") == layer:
                return o[key]
        raise Refuse(f"the certificate has no {kind} obligation for layer {layer}")

    check_domain(-1)
    reference = dict(domain)
    reference[identity] = bos
    derived = {"select": [], "margin": None}

    def fetch_head(i):
        """The select obligation of layer i: the target's weight and the others' bound."""
        q, k = W[f"layers.{i}.attn.q"][0], W[f"layers.{i}.attn.k"][0]
        ql, qh = store(fmt, *idot(q.T, st, st))
        kl, kh = store(fmt, *idot(k.T, st, st))
        slo, shi = store(fmt, *score_bounds(ql, qh, kl, kh))  # [t, s] = q_t . k_s
        if scale != 1.0:
            slo, shi = store(fmt, *f32_inside(np.float32(slo * scale), np.float32(shi * scale)))
        offset = 2 ** i
        ts = np.arange(T + 1)
        target = np.maximum(ts - offset, 0)
        causal = ts[None, :] <= ts[:, None]
        others = causal & (ts[None, :] != target[:, None])
        tgt_lo = slo[ts, target]
        gaps = np.where(others, tgt_lo[:, None] - shi, np.inf)
        min_gap = float(gaps.min()) if others.any() else math.inf
        if min_gap <= 0:
            raise Refuse(f"layer {i}: a key outscores the fetch's target")
        leak = float(np.where(others, np.exp(-np.where(others, gaps, 0.0)) * (1 + 2.0 ** -20) + 2.0 ** -149, 0.0)
                     .sum(axis=1).max()) if others.any() else 0.0
        c_gap = claimed("select", i, "min_gap")
        if c_gap is None or c_gap > min_gap + TOLERANCE * (1 + abs(min_gap)):
            raise Refuse(f"layer {i}: the certificate claims min_gap {c_gap}, the weights give {min_gap}")
        derived["select"].append(min_gap)
        s_hi = f32_inside(1.0, 1.0 + 2.0 * leak * (1 + 2.0 ** -10))[1]
        plo, phi = store(fmt, *f32_inside(np.nextafter(1.0 / s_hi, 0.0), 1.0))
        oth = leak
        if fmt == "bf16":
            oth = oth * (1 + 2.0 ** -7) + (T + 1) * 2.0 ** -133
        elif fmt == "fp16":
            oth = oth * 2.0
        return plo, phi, oth

    if rules == {"selector"}:
        return check_selector(cert, W, fmt, T, states, letter_tau, q0, static, st, labels, tok,
                              n_layers, fetch_head, claimed, derived)
    for i in range(n_layers):
        plo, phi, oth = fetch_head(i)
        q, k = W[f"layers.{i}.attn.q"][0], W[f"layers.{i}.attn.k"][0]
        v, o = W[f"layers.{i}.attn.v"][0], W[f"layers.{i}.attn.o"][0]

        keys = [identity] + list(domain)
        vecs = [bos] + [domain[t] for t in domain]
        xl = np.stack([x[0] for x in vecs])
        xh = np.stack([x[1] for x in vecs])
        vl, vh = store(fmt, *idot(v.T, xl, xh))
        bound = np.maximum(np.abs(vl), np.abs(vh)).max(axis=0)
        # z = fl(p v_target) + the others (see the module's docstring): every addition that
        # holds the target's term errs by at most its other operand, a sum of disjoint runs of
        # the small terms, so |z - fl(p v)| <= 2 others (1 + u)(1 + n u).
        cands = np.stack([plo * vl, plo * vh, phi * vl, phi * vh])
        elo, ehi = cands.min(axis=0), cands.max(axis=0)
        exact_p = (elo == ehi) & (np.float32(elo).astype(np.float64) == elo)
        elo = np.where(exact_p, elo, elo - np.abs(elo) * U * 1.0001)
        ehi = np.where(exact_p, ehi, ehi + np.abs(ehi) * U * 1.0001)
        err = 2.0 * oth * bound * (1 + U) * (1 + (T + 1) * U * 1.01) * (1 + 2.0 ** -40)
        zl, zh = store(fmt, *f32_inside(elo - err, ehi + err))
        al, ah = store(fmt, *idot(o.T, zl, zh))  # [element, d]

        win = W[f"layers.{i}.mlp.in.weight"]
        bin_ = W[f"layers.{i}.mlp.in.bias"]
        wout = W[f"layers.{i}.mlp.out.weight"]
        bout = W[f"layers.{i}.mlp.out.bias"]
        sread = (win != 0).any(axis=0) & static
        pats = {}
        for t in range(1, T + 1):
            pats.setdefault(tuple(st[t][sread]), t)
        cur = list(domain)
        pairs = [(xi, yi) for xi in range(len(keys)) for yi in range(len(cur))]
        new = {}

        def mlp_rows(in_lo, in_hi):
            if fmt == "float32":
                hl, hh = idot(win, in_lo, in_hi, bin_)
            else:
                hl, hh = store(fmt, *idot(win, in_lo, in_hi))
                hl, hh = add_rounded(fmt, hl, hh, bin_[None, :], bin_[None, :])
            hl, hh = np.maximum(hl, 0), np.maximum(hh, 0)
            if fmt == "float32":
                ol, oh = idot(wout, hl, hh, bout)
            else:
                ol, oh = store(fmt, *idot(wout, hl, hh))
                ol, oh = add_rounded(fmt, ol, oh, bout[None, :], bout[None, :])
            lo, hi = add_rounded(fmt, in_lo, in_hi, ol, oh)
            lo[:, static] = 0.0
            hi[:, static] = 0.0
            return lo, hi

        for t in list(pats.values()):
            yl = np.stack([domain[cur[yi]][0] for _, yi in pairs])
            yh = np.stack([domain[cur[yi]][1] for _, yi in pairs])
            xi = np.array([p[0] for p in pairs])
            il, ih = add_rounded(fmt, yl, yh, al[xi], ah[xi])
            il[:, static] = st[t][static]
            ih[:, static] = st[t][static]
            lo, hi = mlp_rows(il, ih)
            for r, (a_, b_) in enumerate(pairs):
                tau = compose(keys[a_], cur[b_])
                if tau in new:
                    new[tau] = (np.minimum(new[tau][0], lo[r]), np.maximum(new[tau][1], hi[r]))
                else:
                    new[tau] = (lo[r].copy(), hi[r].copy())
        il, ih = add_rounded(fmt, bos[0][None, :], bos[1][None, :], al[:1], ah[:1])
        il[:, static] = st[0][static]
        ih[:, static] = st[0][static]
        lo, hi = mlp_rows(il, ih)
        bos = (lo[0], hi[0])
        domain = new
        check_domain(i)
        if i + 1 < n_layers:  # every encoding as it was first seen (the last feeds only logits)
            for tau, (lo, hi) in [(identity, bos)] + list(domain.items()):
                if tau not in reference:
                    mid = 0.5 * (lo + hi)
                    reference[tau] = (lo, hi)
                    rlo, rhi = mid, mid
                else:
                    rlo, rhi = reference[tau]
                bad = np.flatnonzero(~static & ((lo < rlo - DRIFT) | (hi > rhi + DRIFT)))
                if len(bad):
                    c = bad[0]
                    raise Refuse(f"layer {i}: after composing, '{labels[c]}' of the window {tau} "
                                 f"is [{lo[c]}, {hi[c]}] where its encoding is [{rlo[c]}, {rhi[c]}]")

    U_ = W["unembed"]
    uread = (U_ != 0).any(axis=1) & static
    upats = {}
    for t in range(1, T + 1):
        upats.setdefault(tuple(st[t][uread]), t)
    margin = math.inf
    cases = [(identity, bos, 0)] + [(tau, v, t) for t in upats.values() for tau, v in domain.items()]
    for tau, (lo, hi), t in cases:
        lo = np.where(static, st[t], lo)
        hi = np.where(static, st[t], hi)
        ll, lh = store(fmt, *idot(U_.T, lo[None, :], hi[None, :]))
        ans = tau[q0]
        rest = np.delete(lh[0], ans)
        if len(rest):
            margin = min(margin, float(ll[0, ans] - rest.max()))
    if margin <= 0:
        raise Refuse(f"the unembedding's margin is {margin}: some prefix's argmax is not its state")
    c_margin = claimed("unembedding", n_layers, "margin")
    if c_margin is None or c_margin > margin + TOLERANCE * (1 + abs(margin)) or claim.get("margin") != c_margin:
        raise Refuse(f"the certificate claims margin {c_margin}, the weights give {margin}")
    derived["margin"] = margin
    return derived


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights")
    ap.add_argument("certificate")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        with open(args.certificate) as f:
            cert = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_certificate: {args.certificate}: {e}", file=sys.stderr)
        return 2
    try:
        derived = check(args.weights, cert)
    except Refuse as e:
        print(json.dumps({"holds": False, "reason": str(e)}) if args.json else f"REFUSED: {e}")
        return 1
    except (OSError, KeyError, IndexError, AttributeError, ValueError, TypeError) as e:
        print(f"check_certificate: {args.weights}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"holds": True, **derived}))
    else:
        print(f"the certificate holds: margin {derived['margin']}, "
              f"least fetch gap {min(derived['select'], default=math.inf)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
