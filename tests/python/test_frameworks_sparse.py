"""Issue 31 item 3: frameworks keep sparsity where they can. load_torch(sparse=True) keeps
every MLP and attention weight matrix sparse (krc.torch_sparse) in float32, bfloat16 and
float16: right at every position against the automaton the file carries, bit for bit the dense
module cast to the same dtype, and never holding a dense [d, m] matrix. Dense loads (plain,
uniform, ONNX) are refused up front, naming the bytes they would need, past max_dense_bytes;
tools/torch_verify.py --sparse."""
import json
import os
import subprocess
import sys

import pytest
import torch

from frameworks_support import compile_zoo, Oracle, REPO

pytestmark = pytest.mark.frameworks

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
PRECISION = {"bfloat16": "bf16", "float16": "fp16"}


def states_of(model, words):
    """The module's state names at every position of every word (argmax, ties to the lowest)."""
    argmax = model(model.tokens(words)).float().argmax(dim=2)
    return [[model.states[s] for s in argmax[w, : len(word) + 1].tolist()]
            for w, word in enumerate(words)]


def file_header(path):
    """{name: shape} and the metadata of a safetensors file, read here by hand (8-byte length,
    JSON header), not through krc."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    metadata = header.pop("__metadata__", {})
    return {name: t["shape"] for name, t in header.items()}, metadata


def dense_float32_bytes(path):
    """4 bytes per entry of every tensor at its dense shape (sparse X at its "sparse" shape)."""
    shapes, metadata = file_header(path)
    sparse = json.loads(metadata.get("sparse", "{}"))
    entries = 0
    for name, shape in list(shapes.items()) + list(sparse.items()):
        if name.endswith((".indices", ".values")) and name.rsplit(".", 1)[0] in sparse:
            continue
        n = 1
        for s in shape:
            n *= s
        entries += n
    return 4 * entries


def layer_weight_nonzeros(path):
    """Nonzero MLP and attention weights of a krc file, counted from its tensors (dense or
    sparse)."""
    from safetensors import safe_open

    count = 0
    with safe_open(path, framework="pt") as f:
        for name in f.keys():
            if (".mlp." in name and ".weight" in name) or ".attn." in name:
                t = f.get_tensor(name)
                count += t.numel() if name.endswith(".values") else \
                    0 if name.endswith(".indices") else int(torch.count_nonzero(t))
    return count


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_a_network_compiled_for_the_dtype_is_right_at_every_position_with_sparse_mlps(
        dtype, tmp_path):
    from krc.torch_module import load_torch
    from krc.torch_sparse import SparseAttention, SparseMLP

    path = compile_zoo(tmp_path, "gridworld_4", "scan", 128, "--precision", PRECISION[dtype])
    model = load_torch(path, dtype=dtype, sparse=True)
    mlps = [b.mlp for b in model.blocks if b.mlp is not None]
    assert mlps and all(isinstance(m, SparseMLP) for m in mlps)
    heads = [b.attn for b in model.blocks if b.attn is not None]
    assert heads and all(isinstance(a, SparseAttention) for a in heads)
    assert all(a.W_Q_T.dtype == DTYPES[dtype] for a in heads)
    assert all(m.W_in_T.dtype == DTYPES[dtype] and m.b_in.dtype == DTYPES[dtype] for m in mlps)
    oracle = Oracle.of_file(path)
    words = oracle.words(31, 6, 128, 40)
    assert states_of(model, words) == [oracle.run(w) for w in words]


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_sparse_mlps_give_the_dense_modules_bits_in_the_dtype(dtype, tmp_path):
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "flipflop_3", "scan", 48, "--precision", PRECISION[dtype])
    dense = load_torch(path, dtype=dtype)
    sparse = load_torch(path, dtype=dtype, sparse=True)
    words = Oracle.of_file(path).words(5, 4, 48, 30)
    tokens = dense.tokens(words)
    logits_dense, cache_dense = dense.run_with_cache(tokens)
    logits_sparse, cache_sparse = sparse.run_with_cache(tokens)
    assert logits_sparse.dtype == DTYPES[dtype]
    assert any(name.endswith("hook_mlp_out") for name in cache_sparse)
    assert cache_dense.keys() == cache_sparse.keys()
    for name in cache_dense:
        assert torch.equal(cache_dense[name], cache_sparse[name]), name
    assert torch.equal(logits_dense, logits_sparse)


def test_a_float32_kr_network_sparse_is_the_dense_one_bit_for_bit(tmp_path):
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "symmetric_3", "kr", 64)
    dense, sparse = load_torch(path), load_torch(path, sparse=True)
    csr = load_torch(path).use_sparse_mlp()  # the older float32 CSR path
    oracle = Oracle.of_file(path)
    words = oracle.words(2, 5, 64, 20)
    tokens = dense.tokens(words)
    assert torch.equal(dense(tokens), sparse(tokens)) and torch.equal(csr(tokens), sparse(tokens))
    assert states_of(sparse, words) == [oracle.run(w) for w in words]


def test_the_sparse_load_holds_the_nonzeros_and_no_dense_layer_weights(tmp_path):
    from krc.torch_module import load_torch
    from krc.dense_budget import DenseBudgetError

    path = compile_zoo(tmp_path, "gridworld_9", "scan", 256, "--precision", "bf16")
    model = load_torch(path, dtype="bfloat16", sparse=True)
    mlps = [b.mlp for b in model.blocks if b.mlp is not None]
    heads = [b.attn for b in model.blocks if b.attn is not None]
    assert sum(m.nonzeros() for m in mlps + heads) == layer_weight_nonzeros(path)
    d = model.embed.W_E.shape[1]
    dense_shapes = {s for m in mlps for s in ((d, m.d_mlp), (m.d_mlp, d))}
    dense_shapes |= {s for a in heads for s in ((a.heads, d, a.width), (a.heads, a.width, d))}
    held = list(model.parameters()) + list(model.buffers())
    assert not any(t.layout == torch.strided and tuple(t.shape) in dense_shapes for t in held)
    # A budget below the dense network but above everything but its layers' weights: the
    # dense load is refused and the sparse one is not.
    dense_layer_bytes = sum(4 * d * m.d_mlp * 2 for m in mlps) + \
        sum(4 * a.heads * d * a.width * 4 for a in heads)
    budget = dense_float32_bytes(path) - dense_layer_bytes // 2
    with pytest.raises(DenseBudgetError):
        load_torch(path, max_dense_bytes=budget)
    load_torch(path, sparse=True, max_dense_bytes=budget)


def test_dense_loads_past_the_budget_are_refused_before_reading_with_the_size(
        tmp_path, monkeypatch):
    import krc
    import krc.torch_module
    from krc.dense_budget import DenseBudgetError
    from krc.onnx_export import to_onnx
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "gridworld_4", "kr", 32)
    needed = dense_float32_bytes(path)

    def never(*_):
        raise AssertionError("the tensors were read before the refusal")

    monkeypatch.setattr(krc.torch_module, "read_safetensors", never)
    with pytest.raises(DenseBudgetError) as refused:
        load_torch(path, max_dense_bytes=needed - 1)
    error = refused.value
    assert isinstance(error, ValueError) and isinstance(error, krc.LimitError)
    assert error.needed == needed and error.option == "max_dense_bytes"
    assert str(needed) in str(error) and "sparse=True" in str(error)
    with pytest.raises(DenseBudgetError) as refused:
        load_torch(path, uniform=True, max_dense_bytes=needed)  # padding needs more
    assert refused.value.needed > needed
    with pytest.raises(DenseBudgetError):
        to_onnx(path, str(tmp_path / "never.onnx"), max_dense_bytes=needed - 1)
    assert not os.path.exists(tmp_path / "never.onnx")
    with pytest.raises(ValueError):
        load_torch(path, uniform=True, sparse=True)
    monkeypatch.undo()
    assert load_torch(path, max_dense_bytes=needed).max_len == 32  # at the budget: loaded


TOOL = os.path.join(REPO, "tools", "torch_verify.py")


def test_torch_verify_sparse(tmp_path):
    path = compile_zoo(tmp_path, "gridworld_4", "scan", 64, "--precision", "bf16")
    out = subprocess.run([sys.executable, TOOL, "--dtype", "bfloat16", "--sparse",
                          "--words", "2", path], capture_output=True, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 0, out.stderr
    assert rows[0]["sparse"] is True and rows[0]["first_wrong"] == [None, None]
    # A float32 kr network in bfloat16 is wrong (test_frameworks_torch_verify says why), and
    # the sparse path says so too.
    path = compile_zoo(tmp_path, "parity", "kr", 64)
    out = subprocess.run([sys.executable, TOOL, "--dtype", "bfloat16", "--sparse",
                          "--length", "40", path], capture_output=True, text=True)
    assert out.returncode == 1, out.stderr


# The arithmetic by hand (runtime/README.md "bf16 and fp16"): with p significant bits, base =
# 2^p is the first number whose neighbours are 2 apart. x = [base, 1, 1] times [1, 1, 1] sums
# to base + 2 in float32 (exact in the dtype) but to base if summed in the dtype (base + 1 is a
# tie, to even); base + 1 rounded is base, and R(base + 1) - 1 = base - 1 where a fused
# R(base + 1 - 1) is base; (base + 2) + (base - 1) = 2 base + 1 rounds to 2 base, and
# R(2 base) - 2 = 2 base - 2 where a fused R(2 base + 1 - 2) is 2 base (a tie, to even).
SIGNIFICANT_BITS = {torch.bfloat16: 8, torch.float16: 11}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_sparse_mlp_sums_in_float32_and_rounds_each_product_then_each_bias(dtype):
    from krc.torch_sparse import SparseMLP, csr_of_stored

    base = 2.0 ** SIGNIFICANT_BITS[dtype]
    W_in_T = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # unit 0: x0+x1+x2, unit 1: x0+x1
    W_out_T = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    mlp = SparseMLP(csr_of_stored(W_in_T), torch.tensor([0.0, -1.0]), csr_of_stored(W_out_T),
                    torch.tensor([0.0, 0.0, -2.0])).to(dtype)
    out = mlp(torch.tensor([[[base, 1.0, 1.0]]], dtype=dtype), 1 << 20)
    assert out.dtype == dtype
    assert out.float().flatten().tolist() == [base + 2, base - 1, 2 * base - 2]
    exact = SparseMLP(csr_of_stored(W_in_T), torch.tensor([0.0, -1.0]), csr_of_stored(W_out_T),
                      torch.tensor([0.0, 0.0, -2.0]))
    assert exact(torch.tensor([[[base, 1.0, 1.0]]]), 1 << 20).flatten().tolist() == \
        [base + 2, base, 2 * base]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_sparse_attention_projections_sum_in_float32_and_round_once(dtype):
    from krc.torch_sparse import SparseAttention

    base = 2.0 ** SIGNIFICANT_BITS[dtype]
    ones = torch.ones(1, 3, 1)  # one head of width 1 reading x0 + x1 + x2
    attn = SparseAttention(ones, ones, ones, ones.transpose(1, 2), ["average"], 1.0).to(dtype)
    q, k, v = attn.project(torch.tensor([[[base, 1.0, 1.0]]], dtype=dtype))
    assert [t.float().item() for t in (q, k, v)] == [base + 2] * 3
    z = torch.tensor([[[base + 2]]], dtype=dtype)  # W_O copies it to all 3 dimensions
    assert attn.output(z).float().flatten().tolist() == [base + 2] * 3


def test_network_to_torch_sparse():
    krc = pytest.importorskip("krc")
    if not hasattr(krc, "compile"):
        pytest.skip("krc without its compiled core")
    from krc.torch_sparse import SparseMLP

    net = krc.compile(krc.zoo("parity"), strategy="kr", max_len=16)
    dense, sparse = net.to_torch(), net.to_torch(sparse=True)
    assert any(isinstance(b.mlp, SparseMLP) for b in sparse.blocks)
    tokens = dense.tokens([list("0110100111")])
    assert torch.equal(dense(tokens), sparse(tokens))


def test_sparse_mlp_units_with_a_positive_bias_fire_without_input():
    from krc.torch_sparse import SparseMLP, csr_of_stored

    # unit 0 reads x0 (bias 0), unit 1 reads nothing (bias 3); output 0 = h0 + h1, 1 = h1.
    mlp = SparseMLP(csr_of_stored(torch.tensor([[1.0, 0.0], [0.0, 0.0]])), torch.tensor([0.0, 3.0]),
                    csr_of_stored(torch.tensor([[1.0, 1.0], [0.0, 1.0]])), torch.tensor([0.0, 0.5]))
    x = torch.tensor([[[0.0, 0.0], [2.0, 5.0], [-4.0, 1.0]]])
    assert mlp(x, 1 << 20).flatten().tolist() == [3.0, 3.5, 5.0, 3.5, 3.0, 3.5]
    assert mlp(x, 2).flatten().tolist() == [3.0, 3.5, 5.0, 3.5, 3.0, 3.5]  # one row a chunk
