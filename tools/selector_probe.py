"""Probe of the selector rule (compiler/certify.md, branch selector-design) on a real network:
for every written coordinate of every MLP, the common inputs S of its units, and for each value
of S in {-1,0,1}^|S| restricted to +-1, how many units stay open with every other input in
[-1, 1] (the binary form's invariant), and how many coordinates the open units read."""
import itertools, json, sys
import numpy as np
sys.path.insert(0, "/work/main/tools")
from reference_forward import load
t, meta = load(sys.argv[1], np.float64)
config = json.loads(meta["config"])
labels = json.loads(meta["residual_labels"])
worst = {}
for i, layer in enumerate(config["layers"]):
    p = "layers.%d." % i
    if layer["mlp_hidden"] is None: continue
    W, b, O = t[p + "mlp.in.weight"], t[p + "mlp.in.bias"], t[p + "mlp.out.weight"]
    const = [c for c, l in enumerate(labels) if "constant" in l or l == "one"]
    stats = []
    for c in np.nonzero(np.abs(O).sum(1))[0]:
        units = np.nonzero(O[c])[0]
        reads = [set(np.nonzero(W[u])[0]) - set(const) for u in units]
        count = {}
        for r in reads:
            for x in r: count[x] = count.get(x, 0) + 1
        S = sorted(x for x, k in count.items() if k > len(units) / 2 and k >= 2)
        if len(S) > 12: stats.append((c, len(units), len(S), None, None)); continue
        most_open, most_coords = 0, 0
        for v in itertools.product([-1.0, 1.0], repeat=len(S)):
            fixed = dict(zip(S, v))
            opened, coords = 0, set()
            for u, r in zip(units, reads):
                base = b[u] + sum(W[u, x] * fixed[x] for x in r if x in fixed) + sum(W[u, x] for x in const)
                rest = [W[u, x] for x in r if x not in fixed]
                hi = base + sum(abs(w) for w in rest); lo = base - sum(abs(w) for w in rest)
                if hi <= 0: continue
                opened += 1; coords |= {x for x in r if x not in fixed}
            most_open, most_coords = max(most_open, opened), max(most_coords, len(coords))
        stats.append((c, len(units), len(S), most_open, most_coords))
    bad = [s for s in stats if s[3] is None or s[4] > 4]
    print("layer %d: %d written coordinates, units per coordinate up to %d, |S| up to %d, open units up to %s, "
          "their other coordinates up to %s; beyond the rule: %d" % (
              i, len(stats), max(s[1] for s in stats), max(s[2] for s in stats),
              max(s[3] or 0 for s in stats), max(s[4] or 0 for s in stats), len(bad)))
