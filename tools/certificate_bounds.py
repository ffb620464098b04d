"""The interval arithmetic of tools/check_certificate.py (numpy only; no code shared with the
C++): sound bounds on float32 dot products for any summation order, rounding to bf16/fp16,
the residual adds, a layer's MLP on a batch of residual intervals and what a select head adds.

Bounds are sound for any float32 summation order: |fl(sum) - sum| <= gamma_n sum |terms|,
or exact when every product is a multiple of 2^g and their magnitudes add to at most 2^24 2^g;
rounding to a format is monotone, so an interval's ends round to bounds of the rounded value.
"""
import ml_dtypes
import numpy as np

U = 2.0 ** -24
# The certificate's figures (min_gap, margin) are reports: the checker proves its own bounds
# from the weights and accepts a figure no larger than its own but for this much (its any-
# order bounds are derived apart from the C++'s and may be a few ulps looser).
TOLERANCE = 1e-6
DRIFT = 2.0 ** -30  # past this, a layer changed an encoding (far above the softmax's leaks)


class Refuse(Exception):
    pass


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


def head_adds(fmt, T, v, o, plo, phi, oth, xl, xh):
    """What a select head adds to the residual for each key row [xl, xh]: the target's
    weight [plo, phi] times its value, plus the others' (total weight at most oth, each value
    at most the largest over the rows). z = fl(p v_target) + the others: every addition that
    holds the target's term errs by at most its other operand, a sum of disjoint runs of the
    small terms, so |z - fl(p v)| <= 2 others (1 + u)(1 + n u)."""
    vl, vh = store(fmt, *idot(v.T, xl, xh))
    bound = np.maximum(np.abs(vl), np.abs(vh)).max(axis=0)
    cands = np.stack([plo * vl, plo * vh, phi * vl, phi * vh])
    elo, ehi = cands.min(axis=0), cands.max(axis=0)
    exact_p = (elo == ehi) & (np.float32(elo).astype(np.float64) == elo)
    elo = np.where(exact_p, elo, elo - np.abs(elo) * U * 1.0001)
    ehi = np.where(exact_p, ehi, ehi + np.abs(ehi) * U * 1.0001)
    err = 2.0 * oth * bound * (1 + U) * (1 + (T + 1) * U * 1.01) * (1 + 2.0 ** -40)
    zl, zh = store(fmt, *f32_inside(elo - err, ehi + err))
    return store(fmt, *idot(o.T, zl, zh))  # [row, d]
