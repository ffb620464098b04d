"""The kr counters' combs and the unembedding, re-derived for tools/check_certificate.py (numpy
only; no code shared with the C++; compiler/certify.md, "kr: the counters' combs and the
unembedding (built)").

Covers what `krc certify` certifies of kr networks: every head a whole sum of letter
increments (its figures re-derived by certificate_kr.py), every MLP unit reading the counts as
a comb does. A prefix is summarised by (its state, each count's integer, its last token); the
summaries reachable within max-len come from the automaton the file carries, by a search of
its own. On each, the residual is the embedding's (checked the same at every t >= 1 where the
MLPs and the unembedding read), the count a float32 within the re-derived eps of its integer.
A comb unit's sum is one rounding of M + c x (two terms: any order gives it), monotone in x,
so it takes every float32 between the roundings at the ends of x's interval, and the checker
tries each, the bias added after (the combs' stated order). The outputs must be exact integers
(their terms on a grid 2^g, magnitudes adding to at most 2^(24 + g)), the same whatever the
rounding; the logits' argmax the summary's state, by the least margin, compared with the
certificate's.
"""
import json
import math

import numpy as np

from certificate_bounds import TOLERANCE, Refuse, f32_inside, idot, lowbit


def reachable(automaton, vocab, counts, T):
    """(state, counts, token) of every prefix of length <= T: a search from (q0, 0, BOS)."""
    states = automaton["states"]
    sidx = {s: i for i, s in enumerate(states)}
    step = {a: [sidx[x] if isinstance(x, str) else int(x) for x in automaton["transitions"][a]]
            for a in automaton["alphabet"]}
    bound = [max(inc[1:]) * T for _, inc, _ in counts]
    start = (sidx[automaton["initial"]], tuple(0 for _ in counts), 0)
    seen, todo = {start}, [start]
    while todo:
        q, z, _ = todo.pop()
        for a in range(1, len(vocab)):
            nz = tuple(z[c] + counts[c][1][a] for c in range(len(counts)))
            nxt = (step[vocab[a]][q], nz, a)
            if all(v <= b for v, b in zip(nz, bound)) and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(seen)


def exact_sum(terms):
    """The float32 sum of these float32 products in any order, when it is exact (else None)."""
    terms = terms[terms != 0]
    if not len(terms):
        return 0.0
    if (terms.astype(np.float32).astype(np.float64) != terms).any():
        return None
    g = int(lowbit(terms).min())
    return float(terms.sum()) if np.abs(terms).sum() <= math.ldexp(1.0, 24 + g) else None


class KrPoints:
    def __init__(self, tensors, meta, T, heads):
        self.W, self.T = tensors, T
        self.config = json.loads(meta["config"])
        self.automaton = json.loads(meta["automaton"])
        self.labels = json.loads(meta["residual_labels"])
        self.vocab = self.config["vocabulary"]
        if self.config["states"] != self.automaton["states"]:
            raise Refuse("the logits are not the automaton's states")
        tok, pos = tensors["embed.token"], tensors["embed.position"]
        self.emb = (tok[None, :, :] + pos[: T + 1, None, :]).astype(np.float32).astype(np.float64)
        self.counts = []  # (dim, increment per token, eps)
        N = self.config["max_len"]
        for i, layer in enumerate(self.config["layers"]):
            for j, h in enumerate(layer["heads"]):
                if h["kind"] != "average":
                    raise Refuse(f"layer {i} head '{h['name']}': a select head's copy is not "
                                 "followed (the checker, like krc certify, covers whole sums only)")
                if (i, h["name"]) not in heads:
                    raise Refuse(f"layer {i} head '{h['name']}': the certificate records no "
                                 "obligation for it")
                eps = heads[(i, h["name"])]["epsilon"]
                v, o = tensors[f"layers.{i}.attn.v"][j], tensors[f"layers.{i}.attn.o"][j]
                for r in np.flatnonzero((o != 0).any(axis=0)):
                    inc = (self.emb[1, :] @ v.astype(np.float64)) @ o[:, r].astype(np.float64) / (N + 1)
                    inc[0] = 0.0
                    self.counts.append((i, [int(round(x)) for x in inc], eps, int(r)))

    def block(self, i, dim):
        wout = self.W[f"layers.{i}.mlp.out.weight"]
        unit = int(np.flatnonzero(wout[dim] != 0)[0]) if (wout[dim] != 0).any() else 0
        for b in self.config["layers"][i].get("mlp_blocks", []):
            if b["first"] <= unit < b["first"] + b["count"]:
                return b["name"]
        return "mlp"

    def mlp(self, i, lo, hi, where):
        """Layer i's MLP on one summary's residual: the written values (exact integers)."""
        win, bin_ = self.W[f"layers.{i}.mlp.in.weight"], self.W[f"layers.{i}.mlp.in.bias"]
        wout, bout = self.W[f"layers.{i}.mlp.out.weight"], self.W[f"layers.{i}.mlp.out.bias"]
        wide = np.flatnonzero(lo != hi)
        fixed = np.setdiff1d(np.arange(len(lo)), wide)
        pl, ph = idot(win[:, fixed], lo[None, fixed], hi[None, fixed])
        if (pl != ph).any():
            raise Refuse(f"{where}: a unit's point terms are not exact in float32")
        P = pl[0]
        C = win[:, wide].astype(np.float64)
        reads = (C != 0).sum(axis=1)
        points = ((win[:, fixed] != 0) & (lo[None, fixed] != 0)).sum(axis=1)
        if (reads > 1).any() or ((reads == 1) & (points > 1)).any():
            raise Refuse(f"{where}: a unit reads more than one count and one constant (not a comb "
                         "unit: not covered)")
        live = np.flatnonzero(reads == 1)
        col = np.argmax(C[live] != 0, axis=1)
        c = C[live, col]
        keys = set(zip(P[live].tolist(), c.tolist(), col.tolist()))
        cands = [P.astype(np.float32)]
        if keys:
            if len(keys) > 1:
                raise Refuse(f"{where}: the comb's units read the count with different weights or "
                             "offsets (not covered)")
            p, cw, k = keys.pop()
            if abs(math.frexp(cw)[0]) != 0.5:
                raise Refuse(f"{where}: the comb reads the count with weight {cw}, not a power of "
                             "two (its product would round)")
            ends = np.float32(p) + np.float32(cw) * np.float32([lo[wide[k]], hi[wide[k]]])
            s, top = np.float32(ends.min()), np.float32(ends.max())
            cands = []
            while s <= top:
                row = P.astype(np.float32)
                row[live] = s
                cands.append(row)
                s = np.nextafter(s, np.float32(np.inf))
        out = None
        for S in cands:
            H = np.maximum(S + bin_, np.float32(0)).astype(np.float64)  # the bias added last
            vals = []
            for d in np.flatnonzero((wout != 0).any(axis=1) | (bout != 0)):
                v = exact_sum(np.append(wout[d].astype(np.float64) * H, float(bout[d])))
                if v is None or v != round(v):
                    raise Refuse(f"layer {i} block '{self.block(i, d)}': {where}: the value "
                                 f"written to '{self.labels[d]}' is not an exact integer")
                vals.append((int(d), v))
            if out is not None and out != vals:
                raise Refuse(f"layer {i} block '{self.block(i, vals[0][0])}': {where}: the "
                             "output depends on how the count rounds")
            out = vals
        return out

    def check(self):
        """The least margin of the summaries' states, and how many summaries."""
        T, E, cfg = self.T, self.emb, self.config
        used = np.zeros(E.shape[2], dtype=bool)
        for i, layer in enumerate(cfg["layers"]):
            if f"layers.{i}.mlp.in.weight" in self.W:
                used |= (self.W[f"layers.{i}.mlp.in.weight"] != 0).any(axis=0)
        used |= (self.W["unembed"] != 0).any(axis=1)
        for _, _, _, r in self.counts:
            used[r] = False
        if T > 1 and (E[2:, 1:][:, :, used] != E[1, 1:][None, :, used]).any():
            raise Refuse("an MLP or the unembedding reads a dimension that changes with t")
        summaries = reachable(self.automaton, self.vocab,
                              [(r, inc, eps) for _, inc, eps, r in self.counts], T)
        margin = math.inf
        for q, z, a in summaries:
            where = f"state {self.automaton['states'][q]}, counts {list(z)}, token '{self.vocab[a]}'"
            lo = hi = E[0 if a == 0 else 1, a].copy()
            hi = hi.copy()
            for i in range(cfg["n_layers"]):
                for k, (li, _, eps, r) in enumerate(self.counts):
                    if li == i:
                        lo[r], hi[r] = f32_inside(z[k] - eps, z[k] + eps)
                if f"layers.{i}.mlp.in.weight" in self.W:
                    for d, v in self.mlp(i, lo, hi, where):
                        s_lo = np.float32(lo[d]) + np.float32(v)
                        s_hi = np.float32(hi[d]) + np.float32(v)
                        lo[d], hi[d] = float(s_lo), float(s_hi)
            ll, lh = idot(self.W["unembed"].T, lo[None, :], hi[None, :])
            rest = np.delete(lh[0], q)
            m = float(ll[0, q] - rest.max()) if len(rest) else math.inf
            if m <= 0:
                raise Refuse(f"the unembedding: {where}: the state's logit is not above the others'")
            margin = min(margin, m)
        return margin, len(summaries)


def check_kr_points(tensors, meta, cert, heads):
    """The comb and unembedding obligations of a certified kr network against the weights."""
    margin, n = KrPoints(tensors, meta, int(cert["claim"]["max_len"]), heads).check()
    rec = {o["kind"]: o for o in cert.get("obligations", []) if o.get("kind") in ("summaries", "unembedding")}
    if rec.get("summaries", {}).get("reachable") != n:
        raise Refuse(f"the certificate claims {rec.get('summaries', {}).get('reachable')} prefix "
                     f"summaries, the automaton gives {n}")
    claimed = rec.get("unembedding", {}).get("margin")
    if claimed is None or claimed > margin + TOLERANCE * (1 + abs(margin)) or \
            cert["claim"].get("margin") != claimed:
        raise Refuse(f"the certificate claims margin {claimed}, the weights give {margin}")
    return {"margin": margin, "summaries": n}
