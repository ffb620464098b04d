"""How many bytes a dense load of a krc weights file would allocate, read from the file's header
alone, and the refusal when that passes a budget: a compiled network is almost all zeros, so a
large one (the 55-state TCP model at max-len 1024 has d_model x d_mlp entries worth 269 GB dense)
must be refused up front with its size, not die in the allocator or the OOM killer.

The count is the float32 bytes of every tensor the dense module holds: the file's tensors at
their dense shapes (a sparse tensor X at the shape the "sparse" metadata gives it), and for a
uniform module (TransformerLens) the padded blocks it builds besides. `keep_sparse` names
tensors the caller will not densify (the MLP weights of a sparse load)."""
import json

from krc.errors import LimitError

DEFAULT_MAX_DENSE_BYTES = 8 << 30  # 8 GiB: far beyond every zoo network, below a laptop's RAM
FLOAT32 = 4


class DenseBudgetError(LimitError, ValueError):
    """A dense load or export refused because its dense tensors would pass max_dense_bytes.
    ``needed`` is that size in bytes, ``budget`` the limit; ``option`` the keyword that raises
    it ("max_dense_bytes"). A ValueError too, so callers that catch bad arguments catch it."""

    def __init__(self, path, what, needed, budget, advice):
        self.path, self.what, self.needed, self.budget, self.advice = path, what, needed, budget, advice
        super().__init__(self.message_naming("max_dense_bytes=%d" % budget), "max_dense_bytes")

    def message_naming(self, limit):
        """The message with the limit spelt as the caller's door names it: "max_dense_bytes=N"
        in Python, "--max-bytes N" on the command line (tools/export_onnx.py)."""
        return "%s: %s would need %d bytes (%s) of dense float32 tensors, more than %s (%s); %s" % (
            self.path, self.what, self.needed, gib(self.needed), limit, gib(self.budget),
            self.advice)


def dense_shapes(path):
    """{name: dense shape} of a safetensors file's tensors and its metadata, from the header
    alone (nothing is read into memory): X.indices/X.values become X at its "sparse" shape."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        metadata = f.metadata() or {}
        shapes = {name: list(f.get_slice(name).get_shape()) for name in f.keys()}
    for name, shape in json.loads(metadata.get("sparse", "{}")).items():
        shapes.pop(name + ".indices", None)
        shapes.pop(name + ".values", None)
        shapes[name] = list(shape)
    return shapes, metadata


def numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def uniform_padding_bytes(shapes):
    """Bytes of the padded blocks uniform_blocks builds: per layer 4 x [H, d, e] attention
    weights and [d, m] twice for the MLP, with H, e, m the widest of the network (at least one
    head of width 1), from the tensors' shapes (krc's names or `krc export`'s)."""
    layers = {}
    for name, shape in shapes.items():
        parts = name.split(".")
        if parts[0] in ("layers", "blocks") and len(parts) > 2:
            layers.setdefault(parts[1], {})[".".join(parts[2:])] = shape
    d = next((s[1] for n, s in shapes.items() if n in ("embed.token", "embed.W_E")), 0)
    heads, width, hidden = 1, 1, 0
    for layer in layers.values():
        q = layer.get("attn.q") or layer.get("attn.W_Q")
        if q:
            heads, width = max(heads, q[0]), max(width, q[2])
        if "mlp.in.weight" in layer:
            hidden = max(hidden, layer["mlp.in.weight"][0])
        if "mlp.W_in" in layer:
            hidden = max(hidden, layer["mlp.W_in"][1])
    per_layer = 4 * heads * d * width + 3 * heads * width + d + 2 * d * hidden + hidden + d
    return FLOAT32 * len(layers) * per_layer


def dense_bytes(shapes, uniform=False, keep_sparse=()):
    """float32 bytes of the dense module's tensors (see the module's docstring)."""
    total = FLOAT32 * sum(numel(s) for n, s in shapes.items() if n not in keep_sparse)
    return total + (uniform_padding_bytes(shapes) if uniform else 0)


def gib(n):
    return "%.1f GiB" % (n / float(1 << 30)) if n >= 1 << 30 else "%.1f MiB" % (n / float(1 << 20))


def check_dense_budget(path, needed, budget, what, advice):
    """Raises DenseBudgetError when needed > budget; `what` names the dense thing, `advice`
    says what to do instead."""
    if budget is not None and needed > budget:
        raise DenseBudgetError(path, what, needed, budget, advice)
