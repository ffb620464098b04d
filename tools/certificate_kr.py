"""The kr heads' obligations, re-derived for tools/check_certificate.py (numpy only; no code
shared with the C++; compiler/certify.md, "kr and walk networks: the design", network
obligations 2-4).

Every head's query must read static dimensions (written by no layer, the same for every
letter) and its key static ones plus at most one letter group (written by no layer, differing
between letters), so a score is a function of (t, s, v). Over every t <= T, s <= t and v:
- select heads: an (s*, v*) can be some word's argmax when its score's upper end reaches
  the least lower end of every other key's; no run of overlapping scores may hold two keys
  and such an argmax, and the others' weight is at most the sum of e^(hi - lo*) over what
  scores below it;
- whole-sum average heads (role "counter sum", every letter's key the same vector): BOS's value 0, each letter's
  increment (its value through the output over N + 1) an integer, and the count within eps(t)
  of the integer sum of the increments, eps(t) < 3/8, by Higham's gamma_n for any order.
A recorded figure better than the one derived here (a larger min_gap, a smaller leak or eps,
other increments) is refused, as is an obligation the weights do not bear out.
"""
import hashlib
import json
import math

import numpy as np

from certificate_bounds import TOLERANCE, U, Refuse, f32_inside, idot, score_bounds
from certificate_kr_points import check_kr_points
from certificate_weights import load_weights

TOLERANCE_COUNT = 0.375


class NotBuilt(Refuse):
    """A head the kr certifier does not cover (its key or value reads what a layer writes)."""


def gamma(n):
    return n * U / (1 - n * U)


def f32_out(lo, hi):
    """The nearest float32 numbers at or outside [lo, hi] (a computed float32 of a real in
    [lo, hi] lies between them)."""
    flo, fhi = np.float32(lo), np.float32(hi)
    if float(flo) > lo:
        flo = np.nextafter(flo, np.float32(-np.inf))
    if float(fhi) < hi:
        fhi = np.nextafter(fhi, np.float32(np.inf))
    return float(flo), float(fhi)


def possible_tie(sl, sh, ks, wins):
    """A key whose score range overlaps another key's in a run that holds a possible argmax
    (runs of overlapping score ranges, sorted by lower end), or None: the argmax is unique."""
    by_lo = np.argsort(sl, kind="stable")
    reach = np.maximum.accumulate(sh[by_lo])
    run = np.concatenate([[0], np.cumsum(sl[by_lo][1:] > reach[:-1])])
    first_key = np.full(run[-1] + 1, -1)
    first_key[run[::-1]] = ks[by_lo][::-1]
    mixed = np.zeros(run[-1] + 1, dtype=bool)
    np.logical_or.at(mixed, run, ks[by_lo] != first_key[run])
    won = np.zeros(run[-1] + 1, dtype=bool)
    np.logical_or.at(won, run, wins[by_lo])
    if not (mixed & won).any():
        return None
    return by_lo[np.flatnonzero((mixed & won)[run])[0]]


def leak_and_gap(sl, sh, ks, wins, nv):
    """Over every possible argmax (wins) at one query: the largest total weight the keys
    scoring below its lower end can take (the leak), and the least gap (gap, key, runner-up
    key) between its lower end and the best score of another key below it; (0.0, None) where
    nothing scores below."""
    by_hi = np.argsort(sh, kind="stable")
    ss, sk = sh[by_hi], ks[by_hi]
    lse = np.logaddexp.accumulate(ss)
    c = np.flatnonzero(wins)
    below = np.searchsorted(ss, sl[c], side="left")
    c, below = c[below > 0], below[below > 0]
    if not len(c):
        return 0.0, None
    leak = np.exp(lse[below - 1] - sl[c]) * (1 + 2.0 ** -20) + below * 2.0 ** -149
    runner = np.full(len(c), -1)
    for back in range(1, nv + 2):
        idx = below - back
        ok = (runner < 0) & (idx >= 0)
        ok[ok] &= sk[idx[ok]] != ks[c[ok]]
        runner[ok] = idx[ok]
    ok = runner >= 0
    if not ok.any():
        return float(leak.max()), None
    gaps = sl[c[ok]] - ss[runner[ok]]
    m = int(np.argmin(gaps))
    return float(leak.max()), (float(gaps[m]), int(ks[c[ok][m]]), int(sk[runner[ok][m]]))


def count_error(t, b, l_, A, Oa, N):
    """A counter-sum head's error at query t, per written dimension: the weights of BOS (score
    range b) and of the t letters (each l_) against the exact 1/(N+1), on values of magnitude at
    most A per head dimension, through the output weights' magnitudes Oa, with every float32
    rounding of the softmax, the sum and the output projection."""
    m = (max(b[0], l_[0]), max(b[1], l_[1])) if t else b

    def expo(s):
        if s[0] == s[1] == m[0] == m[1]:
            return 1.0, 1.0
        dl, dh = f32_out(s[0] - m[1], s[1] - m[0])
        return math.exp(dl) * (1 - 2.0 ** -21), math.exp(dh) * (1 + 2.0 ** -21)
    e0, e1 = expo(b), expo(l_)
    g = gamma(t + 1)
    # The computed sum is a float32 in Higham's bound: the float32 numbers inside it.
    s_lo, s_hi = f32_inside((e0[0] + t * e1[0]) * (1 - g), (e0[1] + t * e1[1]) * (1 + g))
    # e/S, e*(1/S) (two roundings) or the sum divided at the end: 2^-23 each.
    w_lo, w_hi = f32_out(e1[0] / s_hi * (1 - 2.0 ** -23), e1[1] / s_lo * (1 + 2.0 ** -23))
    delta = max(abs(w_lo - 1 / (N + 1)), abs(w_hi - 1 / (N + 1)))
    err = A * delta + g * w_hi * A  # per head dimension
    return (err @ Oa + (gamma(Oa.shape[0]) + 2.0 ** -23) * ((w_hi * A + err) @ Oa)) * (1 + 2.0 ** -40)


class KrHeads:
    def __init__(self, tensors, meta, max_len):
        config = json.loads(meta["config"])
        self.config, self.W = config, tensors
        self.N = config["max_len"]
        self.T = int(max_len)
        if not 0 <= self.T <= self.N:
            raise Refuse(f"max_len {self.T} past the network's {self.N}")
        self.labels = json.loads(meta["residual_labels"])
        self.groups = json.loads(meta.get("residual_subspaces", "[]"))
        self.vocab = config["vocabulary"]
        self.scale = float(np.float32(config["attention"]["scale"]))
        tok, pos = tensors["embed.token"], tensors["embed.position"]
        d = tok.shape[1]
        written = np.zeros(d, dtype=bool)
        for i in range(config["n_layers"]):
            written |= (tensors[f"layers.{i}.attn.o"] != 0).any(axis=(0, 1))
            if f"layers.{i}.mlp.out.weight" in tensors:
                written |= (tensors[f"layers.{i}.mlp.out.weight"] != 0).any(axis=1)
                written |= tensors[f"layers.{i}.mlp.out.bias"] != 0
        self.written = written
        self.letter = ~written & (tok[1:] != tok[1]).any(axis=0)
        # The embedding's residual per (t, token): one float32 add.
        self.emb = (tok[None, :, :] + pos[: self.T + 1, None, :]).astype(np.float32).astype(np.float64)

    def dim(self, r):
        return f"residual dimension {r} '{self.labels[r]}'"

    def group_of(self, r):
        for g in self.groups:
            if g["first"] <= r < g["first"] + g["width"]:
                return g["name"]
        return "letter dimensions"

    def head(self, i, j):
        h = self.config["layers"][i]["heads"][j]
        W = self.W
        return (h, W[f"layers.{i}.attn.q"][j].astype(np.float64), W[f"layers.{i}.attn.k"][j].astype(np.float64),
                W[f"layers.{i}.attn.v"][j].astype(np.float64), W[f"layers.{i}.attn.o"][j].astype(np.float64))

    def support(self, where, q, k):
        """The key's letter dimensions and one letter per distinct value of them."""
        for r in np.flatnonzero((q != 0).any(axis=1)):
            if self.written[r] or self.letter[r]:
                raise Refuse(f"{where}: the query reads {self.dim(r)}, not a function of t alone")
        reads = np.flatnonzero((k != 0).any(axis=1))
        if self.written[reads].any():
            raise NotBuilt(f"{where}: the key reads {self.dim(reads[self.written[reads]][0])}, "
                           "which a layer writes (not built)")
        letters = [r for r in reads if self.letter[r]]
        if len({self.group_of(r) for r in letters}) > 1:
            raise Refuse(f"{where}: the key reads two letter groups")
        group = self.group_of(letters[0]) if letters else ""
        tok = self.W["embed.token"]
        reps = {}
        for a in range(1, tok.shape[0]):
            reps.setdefault(tuple(tok[a, letters]), a)
        return group, list(reps.values())

    def scores(self, ql, qh, keys):
        lo, hi = score_bounds(ql, qh, keys, keys)
        if self.scale != 1.0:
            lo, hi = f32_inside(np.nextafter(np.float32(lo * self.scale), np.float32(-np.inf)),
                                np.nextafter(np.float32(hi * self.scale), np.float32(np.inf)))
        return lo, hi

    def select(self, i, j):
        h, q, k, _, _ = self.head(i, j)
        where = f"layer {i} head '{h['name']}'"
        group, reps = self.support(where, q, k)
        T, nv = self.T, len(reps)
        E = self.emb
        Q = np.concatenate([E[:1, 0], E[1:, 1]]) @ q
        # Keys: BOS at s = 0, then (s, v) for s >= 1, v over the letters' values.
        key_s = np.concatenate([[0], np.repeat(np.arange(1, T + 1), nv)])
        key_v = np.concatenate([[-1], np.tile(np.arange(nv), T)])
        rows = np.concatenate([E[:1, 0], E[key_s[1:], np.array(reps)[key_v[1:]]]]) if T else E[:1, 0]
        keys = rows @ k
        name = lambda v: "<bos>" if v < 0 else self.vocab[reps[v]]
        min_gap, leak_max, at = math.inf, 0.0, None
        chunk = max(1, int(2e6 // len(keys)))  # score rows at a time: memory bounded
        for t in range(T + 1):
            if t % chunk == 0:
                lo, hi = self.scores(Q[t: t + chunk], Q[t: t + chunk], keys)
            n = 1 + t * nv
            sl, sh, ks, kv = lo[t % chunk, :n], hi[t % chunk, :n], key_s[:n], key_v[:n]
            least = np.full(t + 1, np.inf)
            np.minimum.at(least, ks, sl)
            order = np.argsort(-least, kind="stable")
            top, second = order[0], (least[order[1]] if t else -np.inf)
            wins = sh >= np.where(ks == top, second, least[top])
            tied = possible_tie(sl, sh, ks, wins)
            if tied is not None:
                raise Refuse(f"{where}: at t = {t} key {ks[tied]} ('{name(kv[tied])}', score in "
                             f"[{sl[tied]}, {sh[tied]}]) may score as another key: the argmax is not unique")
            leak, gap = leak_and_gap(sl, sh, ks, wins, nv)
            leak_max = max(leak_max, leak)
            if gap is not None and gap[0] < min_gap:
                min_gap, at = gap[0], (t, gap[1], gap[2])
        return {"kind": "select", "layer": i, "head": h["name"], "key_group": group,
                "key_values": nv, "min_gap": min_gap, "leak": leak_max, "at": at}

    def average(self, i, j):
        h, q, k, v, o = self.head(i, j)
        where = f"layer {i} head '{h['name']}'"
        if h.get("role", {}).get("kind") != "counter sum":
            raise NotBuilt(f"{where}: an average head that is not a kr counter's sum (not built)")
        group, _ = self.support(where, q, k)
        if group:
            raise Refuse(f"{where}: an average head's key reads the letter group '{group}'")
        vr = np.flatnonzero((v != 0).any(axis=1))
        if self.written[vr].any():
            raise NotBuilt(f"{where}: the value reads {self.dim(vr[self.written[vr]][0])}, "
                           "which a layer writes (not built)")
        E, T, N = self.emb, self.T, self.N
        K = E[1:, 1] @ k
        if T and (K != K[0]).any():
            raise NotBuilt(f"{where}: the letters' keys differ (a window, block or dyadic sum: not built)")
        xl, xh = idot(v.T, E.reshape(-1, E.shape[2]), E.reshape(-1, E.shape[2]))
        if (xl != xh).any():
            raise Refuse(f"{where}: a value is not exact in float32")
        X = xl.reshape(E.shape[0], E.shape[1], -1)
        if (X[0, 0] != 0).any():
            raise Refuse(f"{where}: BOS's value is not 0")
        cols = np.flatnonzero((o != 0).any(axis=0))
        inc = (X[1:, 1:] @ o[:, cols]) / (N + 1)  # [s, letter, written]
        if (inc != np.round(inc)).any():
            s, a, r = np.argwhere(inc != np.round(inc))[0]
            raise Refuse(f"{where}: the increment of '{self.vocab[a + 1]}' to {self.dim(cols[r])} "
                         f"is {inc[s, a, r]}, not an integer")
        if (E[0, 0, cols] != 0).any() or (E[1:, 1, cols] != 0).any():
            raise Refuse(f"{where}: the count's dimension is not 0 before the head")
        A = np.concatenate([np.zeros((1, X.shape[2])), np.cumsum(np.abs(X[1:, 1:]).max(axis=1), axis=0)])
        Qt = np.concatenate([E[:1, 0], E[1:, 1]]) @ q
        bl, bh = self.scores(Qt, Qt, E[:1, 0] @ k)
        ll, lh = self.scores(Qt, Qt, (E[1:2, 1] if T else E[:1, 0]) @ k)
        worst, worst_t = 0.0, 0
        Oa = np.abs(o[:, cols])
        for t in range(T + 1):
            eps = count_error(t, (bl[t, 0], bh[t, 0]), (ll[t, 0], lh[t, 0]), A[t], Oa, N)
            if eps.max() > worst:
                worst, worst_t = float(eps.max()), t
            if eps.max() >= TOLERANCE_COUNT:
                raise Refuse(f"{where}: at t = {t} the count is within eps = {eps.max():.9g} of its "
                             "integer, not within 3/8 (the combs' tolerance)")
        return {"kind": "average", "layer": i, "head": h["name"], "epsilon": worst, "at_t": worst_t,
                "increments": {self.vocab[a + 1]: float(inc[0, a, 0]) for a in range(inc.shape[1])}
                if T and inc.shape[2] else {}}


def check_kr_obligations(tensors, meta, cert):
    """Re-derives every head obligation the certificate records; Refuse on the first that the
    weights do not bear out (naming its layer and head). Returns the derived figures."""
    kr = KrHeads(tensors, meta, cert["claim"]["max_len"])
    heads = {(li, h["name"]): (li, j, h["kind"]) for li, layer in enumerate(kr.config["layers"])
             for j, h in enumerate(layer["heads"])}
    derived = []
    for rec in cert.get("obligations", []):
        if rec.get("kind") in ("summaries", "mlp", "unembedding"):
            continue  # certificate_kr_points.py's
        key = (rec.get("layer"), rec.get("head"))
        if key not in heads or rec.get("kind") not in ("select", "average"):
            raise Refuse(f"the certificate records an obligation for no head of this network: {key}")
        i, j, kind = heads[key]
        if rec["kind"] != kind:
            raise Refuse(f"layer {i} head '{key[1]}' is a {kind} head, not {rec['kind']}")
        got = kr.select(i, j) if kind == "select" else kr.average(i, j)
        where = f"layer {i} head '{key[1]}'"
        if kind == "select":
            if rec["min_gap"] > got["min_gap"] + TOLERANCE * (1 + abs(got["min_gap"])):
                raise Refuse(f"{where}: the certificate claims min_gap {rec['min_gap']}, the weights give "
                             f"{got['min_gap']}")
            if rec["leak"] < got["leak"] * (1 - TOLERANCE):
                raise Refuse(f"{where}: the certificate claims leak {rec['leak']}, the weights give {got['leak']}")
            if rec["key_values"] != got["key_values"]:
                raise Refuse(f"{where}: the certificate claims {rec['key_values']} key values, "
                             f"the weights give {got['key_values']}")
        else:
            if rec["epsilon"]["max"] < got["epsilon"] * (1 - TOLERANCE):
                raise Refuse(f"{where}: the certificate claims eps {rec['epsilon']['max']}, "
                             f"the weights give {got['epsilon']}")
            if rec["increments"] != got["increments"]:
                raise Refuse(f"{where}: the certificate claims increments {rec['increments']}, "
                             f"the weights give {got['increments']}")
        derived.append(got)
    return derived


def check_kr(weights_path, cert, obligations_only):
    """kr networks: the heads' obligations (certificate_kr.py) of a report that does not claim
    the network certified (--obligations-only), or those and the combs' and the unembedding's
    (certificate_kr_points.py) of a certificate that does."""
    with open(weights_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if cert["claim"].get("weights_sha256") != digest:
        raise Refuse(f"the certificate is for weights with SHA-256 {cert['claim'].get('weights_sha256')}, "
                     f"not this file's {digest}")
    if obligations_only == (cert.get("certified") is True):
        raise Refuse("for kr networks the checker re-derives the heads' obligations of a report that "
                     "does not claim the network certified (--obligations-only), or the whole "
                     "certificate of one that does (without it)")
    tensors, meta = load_weights(weights_path)
    if json.loads(meta.get("compiler", "{}")).get("strategy") != "kr":
        raise Refuse("the certificate says kr, the weights file does not")
    heads = check_kr_obligations(tensors, meta, cert)
    if obligations_only:
        return {"select": [], "margin": None, "kr_heads": heads}
    by_head = {(h["layer"], h["head"]): h for h in heads}
    points = check_kr_points(tensors, meta, cert, by_head)
    return {"select": [h["min_gap"] for h in heads if h["kind"] == "select"], "margin": points["margin"],
            "summaries": points["summaries"], "kr_certified_heads": heads}
