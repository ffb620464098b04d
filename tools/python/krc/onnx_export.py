"""A krc network as an ONNX model (tools/README.md "ONNX"), built node by node with onnx.helper
from the float32 module of krc.torch_module: no exporter, no tracing, nothing beyond the
pinned `onnx` package, and every operation is one the reader can check against
runtime/README.md's forward pass.

The graph takes `tokens` int64 [B, T] (<bos> = 0 first, then letter ids + 1, T <= max_len + 1)
and gives `logits` float32 [B, T, states]: x = W_E[tokens] + W_pos[:T]; per layer x +=
attention (causal: a key after its query scores -inf; score = scale * q.k; softmax, or under
hard attention the latest argmax for `select` heads), then x += W_out ReLU(W_in x + b_in) +
b_out; logits = x W_U + b_U. The causal mask is built from T in the graph, not stored, so the
file holds only the weights. ONNX files cannot exceed 2 GiB (protobuf); a larger network is
refused with that reason, and so is a network whose dense tensors (counted from the file's
header before anything is read) pass the budget `max_dense_bytes`: ONNX initializers are
dense, and krc's compiled MLPs are almost all zeros."""
import os

import numpy as np

from krc.dense_budget import DEFAULT_MAX_DENSE_BYTES, check_dense_budget, dense_bytes, dense_shapes
from krc.torch_module import load_torch

OPSET = 17  # Softmax on the last axis, Shape with start/end, ArgMax select_last_index
TWO_GIB = 2 ** 31


class Graph:
    """The nodes and initializers of one ONNX graph, with fresh names for intermediates."""

    def __init__(self):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.initializers, self.count, self.bytes = [], [], 0, 0

    def const(self, name, array):
        array = np.ascontiguousarray(array)
        self.bytes += array.nbytes
        self.initializers.append(self.numpy_helper.from_array(array, name))
        return name

    def op(self, kind, inputs, **attributes):
        self.count += 1
        out = "%s_%d" % (kind.lower(), self.count)
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], **attributes))
        return out


def attention(g, x, attn, i, hard, future, keys):
    """x + the layer's heads (H of width e): [B, T, d] -> [B, T, d]."""
    H, d, e = attn.W_Q.shape
    p = "blocks.%d.attn." % i
    heads = g.const(p + "heads_shape", np.array([0, 0, H, e], np.int64))
    split = {}
    for name, W, b in (("q", attn.W_Q, attn.b_Q), ("k", attn.W_K, attn.b_K),
                       ("v", attn.W_V, attn.b_V)):
        W2 = W.permute(1, 0, 2).reshape(d, H * e).numpy()  # column h*e + j is W[h][:, j]
        y = g.op("Add", [g.op("MatMul", [x, g.const(p + "W_" + name, W2)]),
                         g.const(p + "b_" + name, b.reshape(H * e).numpy())])
        split[name] = g.op("Reshape", [y, heads])  # [B, T, H, e]
    q = g.op("Transpose", [split["q"]], perm=[0, 2, 1, 3])
    kT = g.op("Transpose", [split["k"]], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [split["v"]], perm=[0, 2, 1, 3])
    s = g.op("MatMul", [q, kT])  # [B, H, T, T]
    if attn.scale != 1.0:
        s = g.op("Mul", [s, g.const(p + "scale", np.array(attn.scale, np.float32))])
    s = g.op("Where", [future, g.const(p + "minus_inf", np.array(-np.inf, np.float32)), s])
    pattern = g.op("Softmax", [s], axis=-1)
    select = np.array([k == "select" for k in attn.kinds])
    if hard and select.any():
        latest = g.op("ArgMax", [s], axis=-1, keepdims=1, select_last_index=1)  # [B, H, T, 1]
        one_hot = g.op("Cast", [g.op("Equal", [latest, keys])], to=1)  # 1: FLOAT
        mask = g.const(p + "select", select.reshape(1, H, 1, 1))
        pattern = g.op("Where", [mask, one_hot, pattern])
    z = g.op("Transpose", [g.op("MatMul", [pattern, v])], perm=[0, 2, 1, 3])
    z = g.op("Reshape", [z, g.const(p + "z_shape", np.array([0, 0, H * e], np.int64))])
    out = g.op("MatMul", [z, g.const(p + "W_O", attn.W_O.reshape(H * e, d).numpy())])
    return g.op("Add", [x, g.op("Add", [out, g.const(p + "b_O", attn.b_O.numpy())])])


def mlp(g, x, m, i):
    p = "blocks.%d.mlp." % i
    hidden = g.op("Relu", [g.op("Add", [g.op("MatMul", [x, g.const(p + "W_in", m.W_in.numpy())]),
                                        g.const(p + "b_in", m.b_in.numpy())])])
    out = g.op("Add", [g.op("MatMul", [hidden, g.const(p + "W_out", m.W_out.numpy())]),
                       g.const(p + "b_out", m.b_out.numpy())])
    return g.op("Add", [x, out])


def build_graph(model, hard):
    """The ONNX GraphProto of a float32 KrcTransformer."""
    from onnx import TensorProto

    g = Graph()
    T = g.op("Shape", ["tokens"], start=1, end=2)  # [1]
    positions = g.op("Range", [g.const("zero", np.array(0, np.int64)),
                               g.op("Squeeze", [T]), g.const("one", np.array(1, np.int64))])
    keys = g.op("Unsqueeze", [positions, g.const("axis_0", np.array([0], np.int64))])  # [1, T]
    queries = g.op("Unsqueeze", [positions, g.const("axis_1", np.array([1], np.int64))])
    future = g.op("Greater", [keys, queries])  # [T, T]: key after query
    x = g.op("Gather", [g.const("embed.W_E", model.embed.W_E.numpy()), "tokens"], axis=0)
    pos = g.op("Slice", [g.const("pos_embed.W_pos", model.pos_embed.W_pos.numpy()),
                         g.const("zero_1", np.array([0], np.int64)), T, "axis_0"])
    x = g.op("Add", [x, pos])
    for i, block in enumerate(model.blocks):
        if block.attn is not None:
            x = attention(g, x, block.attn, i, hard, future, keys)
        if block.mlp is not None:
            x = mlp(g, x, block.mlp, i)
    logits = g.op("MatMul", [x, g.const("unembed.W_U", model.unembed.W_U.numpy())])
    b_U = g.const("unembed.b_U", model.unembed.b_U.numpy())
    g.nodes.append(g.helper.make_node("Add", [logits, b_U], ["logits"]))
    inputs = [g.helper.make_tensor_value_info("tokens", TensorProto.INT64, ["batch", "positions"])]
    outputs = [g.helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                               ["batch", "positions", len(model.states)])]
    if g.bytes >= TWO_GIB - (1 << 24):
        raise ValueError("the network's %d bytes of weights exceed ONNX's 2 GiB limit" % g.bytes)
    return g.helper.make_graph(g.nodes, "krc", inputs, outputs, g.initializers)


def to_onnx(weights_path, onnx_path, attention=None, max_dense_bytes=DEFAULT_MAX_DENSE_BYTES):
    """Writes the network of a krc weights file (or `krc export` file) to onnx_path as an ONNX
    model that onnxruntime runs in float32; `attention` ("softmax" or "hard") defaults to what
    the file was compiled for. The file appears whole or not at all. Returns onnx_path.
    Refused up front (krc.dense_budget.DenseBudgetError, a ValueError, naming the bytes) when
    the dense weights would pass min(max_dense_bytes, ONNX's 2 GiB)."""
    import onnx

    if attention not in (None, "softmax", "hard"):
        raise ValueError("attention %r: softmax or hard" % (attention,))
    try:
        shapes, _ = dense_shapes(weights_path)
    except Exception:  # not a safetensors file: load_torch names the problem
        shapes = None
    if shapes is not None:
        limit = TWO_GIB - (1 << 24)
        budget = limit if max_dense_bytes is None else min(max_dense_bytes, limit)
        check_dense_budget(weights_path, dense_bytes(shapes), budget, "an ONNX export",
                           "ONNX initializers are dense and one file holds at most 2 GiB; run "
                           "it in PyTorch with load_torch(path, sparse=True) instead")
    model = load_torch(weights_path, max_dense_bytes=max_dense_bytes)
    hard = (attention or model.attention) == "hard"
    proto = onnx.helper.make_model(build_graph(model, hard), producer_name="krc",
                                   opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    proto.ir_version = 8  # what onnxruntime 1.x reads for opset 17
    for key, value in (("states", "\n".join(model.states)),
                       ("vocabulary", "\n".join(model.vocabulary)),
                       ("attention", "hard" if hard else "softmax")):
        onnx.helper.set_model_props(proto, {**{p.key: p.value for p in proto.metadata_props},
                                            key: value})
    onnx.checker.check_model(proto)
    # krc's one writer (as `krc export`): whole or not at all, never over a device, a FIFO or
    # the weights file it was made from.
    from . import _core
    _core.write_file(os.fspath(onnx_path), proto.SerializeToString(),
                     [os.fspath(weights_path)], "onnx_path")
    return onnx_path
