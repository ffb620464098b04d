#!/usr/bin/env python3
"""Independent checker of `krc certify`'s certificates for scan and kr networks.

Usage: tools/check_certificate.py WEIGHTS.safetensors CERT.json [--json] [--obligations-only]

kr networks: `krc certify` certifies those whose heads are all whole-sum counters (parity,
cyclic_p); the checker re-derives their heads (certificate_kr.py) and their combs and
unembedding (certificate_kr_points.py). Of the others it writes a report that does not claim
the network certified; with --obligations-only the checker re-derives every head obligation
such a report records (and refuses --obligations-only on a certified one, and a certified
one's claim without its combs).

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
binary coordinates) are re-derived by check_selector (certificate_selector.py), its own way: the units' supports are
checked (a bit of slot q reads only the fetched slot q, that bit of the prefix slots and the
positions), then for every (q, s) four rows over the whole residual, with y(s)'s bits and slot
q's old bits each in one class in lockstep, every other bit at its hull; each new bit must be
y(s)'s. Its cost grows as n^2 rows of the whole MLP: small networks, not the 55-state ones.

The interval arithmetic (bounds sound for any float32 summation order) is certificate_bounds.py.

Exit status: 0 the certificate holds, 1 it does not (the reason is printed), 2 bad input.
"""
import argparse
import hashlib
import json
import math
import sys

import numpy as np

from certificate_bounds import (DRIFT, TOLERANCE, Refuse, add_rounded, f32_inside, head_adds, idot,
                                mlp_rows, rounder, score_bounds, store)
from certificate_kr import check_kr
from certificate_selector import check_selector
from certificate_weights import load_weights


def compose(x, y):
    return tuple(y[q] for q in x)


def check_header(weights_path, cert):
    """The claim's identity: these weights (SHA-256), claimed certified, by one known rule."""
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
    return rules


class ScanCheck:
    """The re-derivation for one certificate: the network read and rounded to the claimed
    arithmetic, the static (position) part of the residual, the windows' domain, then the
    obligations layer by layer (fetch head, MLP on every pair, drift against the encodings)
    and the unembedding's margin."""

    def __init__(self, weights_path, cert):
        self.claim = cert.get("claim", {})
        self.obligations = cert.get("obligations", [])
        self.read_network(weights_path)
        self.find_static()
        self.first_domain(cert)
        self.derived = {"select": [], "margin": None}

    def read_network(self, weights_path):
        tensors, meta = load_weights(weights_path)
        config = json.loads(meta["config"])
        compiler = json.loads(meta.get("compiler", "{}"))
        automaton = json.loads(meta["automaton"])
        if compiler.get("strategy") != "scan":
            raise Refuse("the checker covers scan networks only")
        self.fmt = fmt = self.claim.get("arithmetic")
        if fmt not in ("float32", "bf16", "fp16"):
            raise Refuse(f"unknown arithmetic {fmt!r}")
        R = self.R = rounder(fmt)
        self.T = T = int(self.claim["max_len"])
        if not 0 <= T <= config["max_len"]:
            raise Refuse(f"max_len {T} past the network's {config['max_len']}")
        self.states = states = automaton["states"]
        sidx = {s: i for i, s in enumerate(states)}
        if config["states"] != states:
            raise Refuse("the logits are not the automaton's states")
        self.q0 = sidx[automaton["initial"]]
        self.letter_tau = []
        for a in automaton["alphabet"]:  # transitions: {letter: [target of each state, in order]}
            row = automaton["transitions"][a]
            self.letter_tau.append(tuple(sidx[x] if isinstance(x, str) else int(x) for x in row))
        self.n_layers = config["n_layers"]
        if self.n_layers < 31 and 2 ** self.n_layers < T:
            raise Refuse(f"{self.n_layers} steps compose fewer than {T} letters")
        self.W = {k: R(v) for k, v in tensors.items()}
        self.scale = float(R(np.float32(config["attention"]["scale"])))
        self.d = config["d_model"]
        self.labels = json.loads(meta["residual_labels"])

    def find_static(self):
        """The dimensions no layer writes (a function of t), the q and k projections reading only
        them and v only the others, and the static part at every t stored in the format."""
        W, R, T = self.W, self.R, self.T
        written = np.zeros(self.d, dtype=bool)
        for i in range(self.n_layers):
            written |= (W[f"layers.{i}.attn.o"] != 0).any(axis=(0, 1))
            written |= (W[f"layers.{i}.mlp.out.weight"] != 0).any(axis=1)
            written |= W[f"layers.{i}.mlp.out.bias"] != 0
        self.static = static = ~written
        for i in range(self.n_layers):
            for name, want_static in (("q", True), ("k", True), ("v", False)):
                reads = (W[f"layers.{i}.attn.{name}"] != 0).any(axis=(0, 2))
                if (reads & (static != want_static)).any():
                    raise Refuse(f"layer {i}: the {name} projection reads the wrong kind of dimension")
        self.tok = tok = W["embed.token"]
        pos = W["embed.position"]
        if (pos[: T + 1][:, ~static] != 0).any():
            raise Refuse("the position embedding writes a window dimension")
        if len(tok) > 1 and (tok[1:][:, static] != tok[1][static]).any():
            raise Refuse("the letters' embeddings differ on a position dimension")
        # t = 0 holds BOS, t >= 1 a letter.
        self.st = st = np.zeros((T + 1, self.d))
        st[0] = R(np.float32(tok[0]) + np.float32(pos[0]))
        if len(tok) > 1 and T >= 1:
            st[1:] = R(np.float32(tok[1])[None, :] + np.float32(pos[1: T + 1]))
        st[:, ~static] = 0.0

    def first_domain(self, cert):
        """Each letter's window and BOS's as intervals over the data dimensions; the
        certificate's recorded domains; the encoding of each window as first seen."""
        def data_vec(row):
            v = np.where(self.static, 0.0, self.R(np.float32(row)))
            return (v.copy(), v.copy())

        self.identity = tuple(range(len(self.states)))
        self.bos = data_vec(self.tok[0])
        self.domain = {}
        for a, tau in enumerate(self.letter_tau):
            v = data_vec(self.tok[a + 1])
            if tau in self.domain:
                v = (np.minimum(self.domain[tau][0], v[0]), np.maximum(self.domain[tau][1], v[1]))
            self.domain[tau] = v
        self.recorded = {inv["after_layer"]: {tuple(t) for t in inv["domain"]}
                         for inv in cert.get("invariant", []) if "domain" in inv}
        self.check_domain(-1)
        self.reference = dict(self.domain)
        self.reference[self.identity] = self.bos

    def check_domain(self, layer):
        got, domain = self.recorded.get(layer), self.domain
        if got is None or got != set(domain):
            missing = set(domain) - (got or set())
            raise Refuse(f"the certificate's domain after layer {layer} is not the windows' "
                         f"transformations (missing {len(missing)}, e.g. {sorted(missing)[:1]}; "
                         f"extra {len((got or set()) - set(domain))})")

    def claimed(self, kind, layer, key):
        for o in self.obligations:
            if o.get("kind") == kind and o.get("layer") == layer:
                return o[key]
        raise Refuse(f"the certificate has no {kind} obligation for layer {layer}")

    def fetch_head(self, i):
        """The select obligation of layer i: the target's weight and the others' bound."""
        W, fmt, T, st = self.W, self.fmt, self.T, self.st
        q, k = W[f"layers.{i}.attn.q"][0], W[f"layers.{i}.attn.k"][0]
        ql, qh = store(fmt, *idot(q.T, st, st))
        kl, kh = store(fmt, *idot(k.T, st, st))
        slo, shi = store(fmt, *score_bounds(ql, qh, kl, kh))  # [t, s] = q_t . k_s
        if self.scale != 1.0:
            slo, shi = store(fmt, *f32_inside(np.float32(slo * self.scale), np.float32(shi * self.scale)))
        ts = np.arange(T + 1)
        target = np.maximum(ts - 2 ** i, 0)
        causal = ts[None, :] <= ts[:, None]
        others = causal & (ts[None, :] != target[:, None])
        gaps = np.where(others, slo[ts, target][:, None] - shi, np.inf)
        min_gap = float(gaps.min()) if others.any() else math.inf
        if min_gap <= 0:
            raise Refuse(f"layer {i}: a key outscores the fetch's target")
        leak = float(np.where(others, np.exp(-np.where(others, gaps, 0.0)) * (1 + 2.0 ** -20) + 2.0 ** -149, 0.0)
                     .sum(axis=1).max()) if others.any() else 0.0
        c_gap = self.claimed("select", i, "min_gap")
        if c_gap is None or c_gap > min_gap + TOLERANCE * (1 + abs(min_gap)):
            raise Refuse(f"layer {i}: the certificate claims min_gap {c_gap}, the weights give {min_gap}")
        self.derived["select"].append(min_gap)
        s_hi = f32_inside(1.0, 1.0 + 2.0 * leak * (1 + 2.0 ** -10))[1]
        plo, phi = store(fmt, *f32_inside(np.nextafter(1.0 / s_hi, 0.0), 1.0))
        oth = leak
        if fmt == "bf16":
            oth = oth * (1 + 2.0 ** -7) + (T + 1) * 2.0 ** -133
        elif fmt == "fp16":
            oth = oth * 2.0
        return plo, phi, oth

    def selector(self, cert):
        net = {"states": self.states, "letter_tau": self.letter_tau, "q0": self.q0, "tok": self.tok,
               "n_layers": self.n_layers}
        return check_selector(cert, net, self.W, self.fmt, self.T, self.static, self.st, self.labels,
                              self.fetch_head, self.claimed, self.derived)

    def pairs_layer(self, i):
        """Layer i by the pairs rule: the head adds the fetched window, the MLP runs on every
        (fetched, current) pair at every position pattern it reads, and the images must be the
        composed windows' encodings."""
        W, fmt, static, st, domain = self.W, self.fmt, self.static, self.st, self.domain
        plo, phi, oth = self.fetch_head(i)
        keys = [self.identity] + list(domain)
        vecs = [self.bos] + [domain[t] for t in domain]
        al, ah = head_adds(fmt, self.T, W[f"layers.{i}.attn.v"][0], W[f"layers.{i}.attn.o"][0],
                           plo, phi, oth, np.stack([x[0] for x in vecs]),
                           np.stack([x[1] for x in vecs]))  # [element, d]
        sread = (W[f"layers.{i}.mlp.in.weight"] != 0).any(axis=0) & static
        pats = {}
        for t in range(1, self.T + 1):
            pats.setdefault(tuple(st[t][sread]), t)
        cur = list(domain)
        pairs = [(xi, yi) for xi in range(len(keys)) for yi in range(len(cur))]
        new = {}
        for t in list(pats.values()):
            xi = np.array([p[0] for p in pairs])
            il, ih = add_rounded(fmt, np.stack([domain[cur[yi]][0] for _, yi in pairs]),
                                 np.stack([domain[cur[yi]][1] for _, yi in pairs]), al[xi], ah[xi])
            lo, hi = self.mlp_at(i, t, il, ih)
            for r, (a_, b_) in enumerate(pairs):
                tau = compose(keys[a_], cur[b_])
                if tau in new:
                    new[tau] = (np.minimum(new[tau][0], lo[r]), np.maximum(new[tau][1], hi[r]))
                else:
                    new[tau] = (lo[r].copy(), hi[r].copy())
        il, ih = add_rounded(fmt, self.bos[0][None, :], self.bos[1][None, :], al[:1], ah[:1])
        lo, hi = self.mlp_at(i, 0, il, ih)
        self.bos = (lo[0], hi[0])
        self.domain = new
        self.check_domain(i)
        if i + 1 < self.n_layers:  # every encoding as it was first seen (the last feeds only logits)
            self.check_drift(i)

    def mlp_at(self, i, t, il, ih):
        """Layer i's MLP on rows whose static part is position t's."""
        il[:, self.static] = self.st[t][self.static]
        ih[:, self.static] = self.st[t][self.static]
        return mlp_rows(self.W, i, self.fmt, self.static, il, ih)

    def check_drift(self, i):
        for tau, (lo, hi) in [(self.identity, self.bos)] + list(self.domain.items()):
            if tau not in self.reference:
                mid = 0.5 * (lo + hi)
                self.reference[tau] = (lo, hi)
                rlo, rhi = mid, mid
            else:
                rlo, rhi = self.reference[tau]
            bad = np.flatnonzero(~self.static & ((lo < rlo - DRIFT) | (hi > rhi + DRIFT)))
            if len(bad):
                c = bad[0]
                raise Refuse(f"layer {i}: after composing, '{self.labels[c]}' of the window {tau} "
                             f"is [{lo[c]}, {hi[c]}] where its encoding is [{rlo[c]}, {rhi[c]}]")

    def unembedding(self):
        """The least margin of the state's logit over the others, on every window at every
        position pattern the unembedding reads, against the certificate's."""
        static, st, fmt = self.static, self.st, self.fmt
        U_ = self.W["unembed"]
        uread = (U_ != 0).any(axis=1) & static
        upats = {}
        for t in range(1, self.T + 1):
            upats.setdefault(tuple(st[t][uread]), t)
        margin = math.inf
        cases = [(self.identity, self.bos, 0)] + [(tau, v, t) for t in upats.values()
                                                  for tau, v in self.domain.items()]
        for tau, (lo, hi), t in cases:
            lo = np.where(static, st[t], lo)
            hi = np.where(static, st[t], hi)
            ll, lh = store(fmt, *idot(U_.T, lo[None, :], hi[None, :]))
            ans = tau[self.q0]
            rest = np.delete(lh[0], ans)
            if len(rest):
                margin = min(margin, float(ll[0, ans] - rest.max()))
        if margin <= 0:
            raise Refuse(f"the unembedding's margin is {margin}: some prefix's argmax is not its state")
        c_margin = self.claimed("unembedding", self.n_layers, "margin")
        if c_margin is None or c_margin > margin + TOLERANCE * (1 + abs(margin)) or \
                self.claim.get("margin") != c_margin:
            raise Refuse(f"the certificate claims margin {c_margin}, the weights give {margin}")
        self.derived["margin"] = margin
        return self.derived


def check(weights_path, cert, obligations_only=False):
    """What the weights give (least fetch gaps, margin), or Refuse with the first claim of the
    certificate they do not bear out."""
    if cert.get("claim", {}).get("strategy") == "kr":
        return check_kr(weights_path, cert, obligations_only)
    rules = check_header(weights_path, cert)
    scan = ScanCheck(weights_path, cert)
    if rules == {"selector"}:
        return scan.selector(cert)
    for i in range(scan.n_layers):
        scan.pairs_layer(i)
    return scan.unembedding()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights")
    ap.add_argument("certificate")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--obligations-only", action="store_true",
                    help="kr: re-derive the recorded head obligations of a report that does not "
                         "claim the network certified")
    args = ap.parse_args()
    try:
        with open(args.certificate) as f:
            cert = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_certificate: {args.certificate}: {e}", file=sys.stderr)
        return 2
    try:
        derived = check(args.weights, cert, args.obligations_only)
    except Refuse as e:
        print(json.dumps({"holds": False, "reason": str(e)}) if args.json else f"REFUSED: {e}")
        return 1
    except (OSError, KeyError, IndexError, AttributeError, ValueError, TypeError) as e:
        print(f"check_certificate: {args.weights}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"holds": True, **derived}))
    elif "kr_heads" in derived:
        print(f"the {len(derived['kr_heads'])} head obligations hold (the network is not certified: "
              "its MLP and unembedding obligations are not built)")
    else:
        print(f"the certificate holds: margin {derived['margin']}, "
              f"least fetch gap {min(derived['select'], default=math.inf)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
