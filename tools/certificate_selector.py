"""The selector rule, re-derived its own way for tools/check_certificate.py (numpy only; no code
shared with the C++; compiler/certify.md): slot q of the prefix holds the code of f(q) (bit i
of s: +1 set, -1 clear), the fetched copy 0. Per layer and per (q, s): the fetched slot q at
fetch(code(s)), and four rows in lockstep over the bits: y(s)'s bits all in class cy, slot q's
old bits all in class co, every other prefix bit at its hull. Lockstep is sound because the
units writing bit i of slot q are checked to read only the fetched slot q, bit i of the prefix
slots and position dimensions; each new bit must be y(s)'s within DRIFT, each fetched
dimension of slot q back to 0. Its cost grows as n^2 rows of the whole MLP.
"""
import math
import re

import numpy as np

from certificate_bounds import DRIFT, TOLERANCE, Refuse, add_rounded, head_adds, idot, mlp_rows, store


def slot_dimensions(states, labels, static):
    """P[q, i], F[q, i]: the residual dimensions of bit i of the prefix and fetched slot q, read
    from the labels ('... prefix:f(q):bit<i>')."""
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
    return P, F, b


class SelectorCheck:
    """The value sets of one network's slots, layer by layer: cls[0]/cls[1] ([lo, hi] each)
    for each prefix bit when it is -1/+1, one interval [fl, fh] for each fetched bit."""

    def __init__(self, net, W, fmt, T, static, st, labels):
        self.net, self.W, self.fmt, self.T = net, W, fmt, T
        self.static, self.st, self.labels = static, st, labels
        self.states = net["states"]
        self.n = len(self.states)
        self.P, self.F, self.b = slot_dimensions(self.states, labels, static)
        n, b = self.n, self.b
        self.code = np.array([[1.0 if (s >> i) & 1 else -1.0 for i in range(b)] for s in range(n)])
        tok = net["tok"]
        for row, tau in [(0, tuple(range(n)))] + [(a + 1, t) for a, t in enumerate(net["letter_tau"])]:
            got = np.asarray(np.float32(tok[row]), dtype=np.float64)
            if not (got[self.P] == self.code[list(tau)]).all():
                raise Refuse(f"token {row}'s prefix slots are not the codes of its images")
        fetched = np.array([np.float32(tok[r])[self.F.ravel()] for r in range(len(tok))])
        self.fl = fetched.min(axis=0).astype(np.float64)
        self.fh = fetched.max(axis=0).astype(np.float64)
        self.cls_lo = np.array([[-1.0] * n * b, [1.0] * n * b])
        self.cls_hi = self.cls_lo.copy()

    def bits(self, q):
        return q * self.b + np.arange(self.b)

    def hull_row(self):
        d = len(self.labels)
        lo, hi = np.zeros(d), np.zeros(d)
        lo[self.P.ravel()], hi[self.P.ravel()] = self.cls_lo.min(axis=0), self.cls_hi.max(axis=0)
        lo[self.F.ravel()], hi[self.F.ravel()] = self.fl, self.fh
        return lo, hi

    def check_supports(self, i):
        """The head writes the fetched slots only; a unit writing bit i of prefix slot q reads
        only the fetched slot q, bit i of the prefix slots and positions; one writing the
        fetched slot q, that slot and positions."""
        W, P, F, static, labels = self.W, self.P, self.F, self.static, self.labels
        o = W[f"layers.{i}.attn.o"][0]
        if ((o != 0).any(axis=0) & ~np.isin(np.arange(len(labels)), F.ravel())).any():
            raise Refuse(f"layer {i}: the head writes outside the fetched slots")
        wout, win = W[f"layers.{i}.mlp.out.weight"], W[f"layers.{i}.mlp.in.weight"]
        for q in range(self.n):
            for bit in range(self.b):
                for dim, prefix_bit in ((P[q, bit], True), (F[q, bit], False)):
                    allowed = static.copy()
                    allowed[F[q]] = True
                    if prefix_bit:
                        allowed[P[:, bit]] = True
                    units = wout[dim] != 0
                    if ((win[units] != 0) & ~allowed[None, :]).any():
                        raise Refuse(f"layer {i}: a unit writing '{labels[dim]}' reads more than "
                                     + ("its fetched slot, its bit of the prefix slots and positions"
                                        if prefix_bit else "its fetched slot and positions"))

    def pre_mlp(self, i, head):
        """The residual before layer i's MLP: row 0 the hull plus what the head adds to it;
        row 1 + q n + s with the key's slot q at the code of s."""
        plo, phi, oth = head
        hlo, hhi = self.hull_row()
        keys_lo, keys_hi = [hlo], [hhi]
        for q in range(self.n):
            for s in range(self.n):
                lo, hi = hlo.copy(), hhi.copy()
                sel = (self.code[s] > 0).astype(int)
                lo[self.P[q]] = self.cls_lo[sel, self.bits(q)]
                hi[self.P[q]] = self.cls_hi[sel, self.bits(q)]
                keys_lo.append(lo)
                keys_hi.append(hi)
        v, o = self.W[f"layers.{i}.attn.v"][0], self.W[f"layers.{i}.attn.o"][0]
        al, ah = head_adds(self.fmt, self.T, v, o, plo, phi, oth, np.stack(keys_lo), np.stack(keys_hi))
        return add_rounded(self.fmt, hlo[None, :], hhi[None, :], al, ah)

    def rows(self, i, pre_lo, pre_hi, last):
        """Every (q, s, cy, co) and static pattern the MLP of layer i reads, as residual rows."""
        P, F, static, st = self.P, self.F, self.static, self.st
        win = self.W[f"layers.{i}.mlp.in.weight"]
        sread = (win != 0).any(axis=0) & static
        pats = {}
        for t in range(0, self.T + 1):
            pats.setdefault(tuple(st[t][sread]), t)
        rows_lo, rows_hi, meta = [], [], []
        for q in range(self.n):
            if last and q != self.net["q0"]:
                continue
            for s in range(self.n):
                r = 1 + q * self.n + s
                for cy in (0, 1):
                    for co in (0, 1):
                        if s == q and cy != co:
                            continue
                        for t in pats.values():
                            lo, hi = pre_lo[0].copy(), pre_hi[0].copy()
                            lo[F[q]], hi[F[q]] = pre_lo[r, F[q]], pre_hi[r, F[q]]
                            lo[P[s]], hi[P[s]] = self.cls_lo[cy, self.bits(s)], self.cls_hi[cy, self.bits(s)]
                            if s != q:
                                lo[P[q]], hi[P[q]] = self.cls_lo[co, self.bits(q)], self.cls_hi[co, self.bits(q)]
                            lo[static], hi[static] = st[t][static], st[t][static]
                            rows_lo.append(lo)
                            rows_hi.append(hi)
                            meta.append((q, s, cy))
        return np.stack(rows_lo), np.stack(rows_hi), meta

    def layer(self, i, head, last):
        """Layer i: every new bit y(s)'s, every fetched copy cleared (but after the last)."""
        self.check_supports(i)
        pre_lo, pre_hi = self.pre_mlp(i, head)
        rows_lo, rows_hi, meta = self.rows(i, pre_lo, pre_hi, last)
        out_lo, out_hi = mlp_rows(self.W, i, self.fmt, self.static, rows_lo, rows_hi)
        n, b, P, F = self.n, self.b, self.P, self.F
        new_lo, new_hi = np.full((2, n * b), np.inf), np.full((2, n * b), -np.inf)
        new_fl, new_fh = np.zeros(n * b), np.zeros(n * b)
        for row, (q, s, cy) in enumerate(meta):
            want = 1.0 if cy else -1.0
            got_lo, got_hi = out_lo[row, P[q]], out_hi[row, P[q]]
            bad = np.flatnonzero((got_lo < want - DRIFT) | (got_hi > want + DRIFT))
            if len(bad):
                raise Refuse(f"layer {i}: '{self.labels[P[q, bad[0]]]}' becomes [{got_lo[bad[0]]}, "
                             f"{got_hi[bad[0]]}] where it must be {want} (fetched slot names "
                             f"{self.states[s]})")
            idx = self.bits(q)
            new_lo[cy, idx] = np.minimum(new_lo[cy, idx], got_lo)
            new_hi[cy, idx] = np.maximum(new_hi[cy, idx], got_hi)
            if not last:
                cl, ch = out_lo[row, F[q]], out_hi[row, F[q]]
                if (np.maximum(np.abs(cl), np.abs(ch)) > DRIFT).any():
                    raise Refuse(f"layer {i}: the fetched copy of {self.states[q]} is not cleared")
                new_fl[idx] = np.minimum(new_fl[idx], cl)
                new_fh[idx] = np.maximum(new_fh[idx], ch)
        if not last:
            self.cls_lo, self.cls_hi, self.fl, self.fh = new_lo, new_hi, new_fl, new_fh
        else:
            q0 = self.bits(self.net["q0"])
            self.cls_lo[:, q0] = new_lo[:, q0]
            self.cls_hi[:, q0] = new_hi[:, q0]

    def margin(self):
        """The least gap of the right logit over the others, for every state the initial
        state's slot may name and every static pattern the unembedding reads."""
        U_, static, st, q0 = self.W["unembed"], self.static, self.st, self.net["q0"]
        reads = (U_ != 0).any(axis=1)
        only = static.copy()
        only[self.P[q0]] = True
        if (reads & ~only).any():
            raise Refuse("the unembedding reads more than the initial state's slot and positions")
        upats = {}
        for t in range(0, self.T + 1):
            upats.setdefault(tuple(st[t][reads & static]), t)
        margin = math.inf
        for t in upats.values():
            for s in range(self.n):
                sel = (self.code[s] > 0).astype(int)
                lo, hi = np.zeros(len(self.labels)), np.zeros(len(self.labels))
                lo[static], hi[static] = st[t][static], st[t][static]
                lo[self.P[q0]], hi[self.P[q0]] = self.cls_lo[sel, self.bits(q0)], self.cls_hi[sel, self.bits(q0)]
                ll, lh = store(self.fmt, *idot(U_.T, lo[None, :], hi[None, :]))
                rest = np.delete(lh[0], s)
                if len(rest):
                    margin = min(margin, float(ll[0, s] - rest.max()))
        return margin


def check_selector(cert, net, W, fmt, T, static, st, labels, fetch_head, claimed, derived):
    """A selector-rule certificate re-derived: every layer, then the unembedding's margin
    against the certificate's. `net`: the automaton's states, letter_tau, q0, the token rows
    tok and n_layers."""
    check = SelectorCheck(net, W, fmt, T, static, st, labels)
    n_layers = net["n_layers"]
    for i in range(n_layers):
        check.layer(i, fetch_head(i), i + 1 == n_layers)
    margin = check.margin()
    if margin <= 0:
        raise Refuse(f"the unembedding's margin is {margin}")
    c_margin = claimed("unembedding", n_layers, "margin")
    if c_margin is None or c_margin > margin + TOLERANCE * (1 + abs(margin)) or cert["claim"].get("margin") != c_margin:
        raise Refuse(f"the certificate claims margin {c_margin}, the weights give {margin}")
    derived["margin"] = margin
    return derived
