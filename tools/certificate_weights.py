"""A weights file's tensors as dense float32 numpy arrays (a sparse tensor X stored as
X.indices and X.values densified at the shape the "sparse" metadata gives) and its metadata,
read with the `safetensors` package: the checker's only reader of the file, sharing no code
with krc's C++ reader."""
import json

import numpy as np
from safetensors import safe_open


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
