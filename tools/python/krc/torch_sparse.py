"""krc's layers kept sparse in PyTorch, in float32, bfloat16 or float16: what
`load_torch(path, sparse=True)` builds instead of krc.torch_layers.MLP and Attention, so that a
network whose dense layers would not fit in memory runs at all. (The 127-state scan of the TCP
model at max-len 1024 has d_model 32,379, MLPs 2,080,641 wide and heads 16,129 wide: 5.5 TB of
float32 dense, 83 M nonzeros.) SparseMLP keeps W_in and W_out sparse, SparseAttention the
heads' q, k, v and o; scores, softmax and value sums stay the dense layer's.

The weights go from the file's X.indices/X.values (or a dense tensor's nonzeros) straight to
sparse CSR matrices, never through a dense one: memory is a few times the nonzeros (values,
int64 column indices, row pointers). W_in^T [m, d] has a row per hidden unit, W_out^T [d, m] a
row per output dimension.

Arithmetic, in the module's dtype D (runtime/README.md "bf16 and fp16"; R rounds to D):
the weights and biases are stored rounded to D (module.to(dtype) rounds them, as it rounds a
dense model's); a product sums the float32 products of D values (exact: two 8- or 11-bit
significands fit in float32's 24) in float32 and is rounded once, so
  a = R(R(x W_in) + b_in),  h = ReLU(a),  out = R(R(h W_out) + b_out)
with the bias sums in float32. In float32 R is the identity and this is the float32 CSR path of
krc.torch_layers.MLP.use_sparse, the same expression. The sparse product is torch's CSR times
dense matrix in float32 (D values widened to float32, exactly); a row's terms are summed in
its index order, and on compiled networks the sums are small integers, exact in any order.

Rows (positions) go in chunks of `max_hidden // m` so that [m, rows] stays bounded."""
import warnings

import torch
from torch import nn

from krc.torch_layers import Attention



def csr(rows, cols, values, shape):
    """A float32 sparse CSR matrix of `shape` from the (row, col, value) of its nonzeros, in any
    order (sorted here by row, then column, so each row sums in column order)."""
    rows, cols = rows.to(torch.long), cols.to(torch.long)
    order = torch.argsort(rows * shape[1] + cols, stable=True)
    rows, cols, values = rows[order], cols[order], values[order].to(torch.float32)
    crow = torch.zeros(shape[0] + 1, dtype=torch.long)
    crow[1:] = torch.cumsum(torch.bincount(rows, minlength=shape[0]), 0)
    with warnings.catch_warnings():  # torch warns once that CSR is "in beta"; it is what we use
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(crow, cols, values, size=tuple(shape),
                                       check_invariants=True)


def stored_shape(stored):
    """The dense shape of a file's tensor (see stored_coo)."""
    return list(stored[3]) if isinstance(stored, tuple) else list(stored.shape)


def stored_coo(stored):
    """(indices [nnz, rank] long, values [nnz], shape) of a file's tensor: either ("sparse",
    indices, values, shape), as krc.torch_module reads a sparse one, or a dense tensor."""
    if isinstance(stored, tuple):
        _, indices, values, shape = stored
        return indices.to(torch.long), values, list(shape)
    indices = torch.nonzero(stored)
    return indices, stored[tuple(indices.T)], list(stored.shape)


def csr_of_stored(stored, transpose=False):
    """A CSR matrix from a file's 2-D tensor (stored_coo); transpose=True: its transpose."""
    indices, values, shape = stored_coo(stored)
    rows, cols = indices[:, 0], indices[:, 1]
    if transpose:
        rows, cols, shape = cols, rows, [shape[1], shape[0]]
    return csr(rows, cols, values, shape)


def heads_csr(stored, output):
    """A CSR matrix from a file's attention tensor. q, k, v [H, d, e] (output=False) give the
    [H*e, d] matrix whose row h*e + j is head h's column j; o [H, e, d] (output=True) gives
    [d, H*e], column h*e + j being head h's row j: the transposes of the dense module's
    products, so that a sparse matrix times x^T is the projection."""
    indices, values, (H, a, b) = stored_coo(stored)
    h, i, j = indices[:, 0], indices[:, 1], indices[:, 2]
    if output:  # o[h, j=i, k=j]
        return csr(j, h * a + i, values, [b, H * a])
    return csr(h * b + j, i, values, [H * b, a])


def sparse_times(W_T, rows, dtype):
    """rows [n, k] (in `dtype`) times the matrix whose transpose is the float32-valued CSR
    W_T [out, k]: [n, out], the float32 sums rounded once to `dtype`."""
    return (W_T @ rows.T.to(torch.float32).contiguous()).T.to(dtype)


class SparseAttention(Attention):
    """krc.torch_layers.Attention with its projections kept sparse: q, k, v and the output
    projection are sparse CSR products (float32 sums of D values, rounded to D, then the zero
    biases added in D), the scores, softmax or argmax and value sums the dense layer's own. For
    networks whose attention matrices are large (a scan over n states has heads n^2 wide)."""

    def __init__(self, q, k, v, o, kinds, scale):
        nn.Module.__init__(self)
        self.register_buffer("W_Q_T", heads_csr(q, False))  # [H*e, d]
        self.register_buffer("W_K_T", heads_csr(k, False))
        self.register_buffer("W_V_T", heads_csr(v, False))
        self.register_buffer("W_O_T", heads_csr(o, True))   # [d, H*e]
        H, _, e = stored_shape(q)
        self.heads, self.width, self.value_width = H, e, stored_shape(v)[2]
        zeros = (lambda *shape: nn.Parameter(torch.zeros(*shape), requires_grad=False))
        self.b_Q, self.b_K, self.b_V = zeros(H, e), zeros(H, e), zeros(H, self.value_width)
        self.b_O = zeros(self.W_O_T.shape[0])
        self.kinds = list(kinds)
        self.scale = float(scale)
        self.register_buffer("select", torch.tensor([k == "select" for k in kinds]),
                             persistent=False)

    def nonzeros(self):
        return sum(W.values().numel() for W in (self.W_Q_T, self.W_K_T, self.W_V_T, self.W_O_T))

    def project(self, x):
        B, T, d = x.shape
        flat = x.reshape(B * T, d)
        out = []
        for W_T, b in ((self.W_Q_T, self.b_Q), (self.W_K_T, self.b_K), (self.W_V_T, self.b_V)):
            y = sparse_times(W_T.to(torch.float32), flat, x.dtype) + b.reshape(-1)
            out.append(y.view(B, T, self.heads, -1).transpose(1, 2))
        return out

    def output(self, z):
        B, T, _ = z.shape
        y = sparse_times(self.W_O_T.to(torch.float32), z.reshape(B * T, -1), z.dtype) + self.b_O
        return y.view(B, T, -1)


class SparseMLP(nn.Module):
    """x [B, T, d] -> W_out ReLU(W_in x + b_in) + b_out [B, T, d] with W_in_T [m, d] and
    W_out_T [d, m] sparse CSR buffers (in the module's dtype once .to(dtype) is called) and
    dense biases; see the module's docstring for the arithmetic."""

    def __init__(self, W_in_T, b_in, W_out_T, b_out):
        super().__init__()
        self.register_buffer("W_in_T", W_in_T)   # [m, d] CSR
        self.register_buffer("W_out_T", W_out_T)  # [d, m] CSR
        self.b_in = nn.Parameter(b_in.to(torch.float32).contiguous(), requires_grad=False)
        self.b_out = nn.Parameter(b_out.to(torch.float32).contiguous(), requires_grad=False)

    @property
    def d_mlp(self):
        return self.W_in_T.shape[0]

    def nonzeros(self):
        """Stored nonzeros of W_in and W_out."""
        return self.W_in_T.values().numel() + self.W_out_T.values().numel()

    def use_sparse(self, on):
        """Already sparse; a dense MLP needs a dense load (load_torch without sparse)."""
        if not on:
            raise ValueError("this MLP was loaded sparse (sparse=True); load the file "
                             "without it for a dense one")

    def forward(self, x, max_hidden):
        dtype = x.dtype
        W_in_T, W_out_T = self.W_in_T.to(torch.float32), self.W_out_T.to(torch.float32)
        b_in = self.b_in.unsqueeze(1)  # [m, 1], in the dtype
        flat = x.reshape(-1, x.shape[2])
        rows = max(1, max_hidden // max(1, self.d_mlp))
        parts = []
        for part in flat.split(rows):
            # [m, rows]: float32 sums rounded to the dtype, then the bias added in the dtype
            # (torch adds two bf16 or fp16 tensors in float32 and rounds once), in place: on a
            # wide MLP these passes over [m, rows] are most of the time.
            hidden = (W_in_T @ part.T.to(torch.float32).contiguous()).to(dtype)
            hidden.add_(b_in).relu_()
            out = (W_out_T @ hidden.to(torch.float32)).T.to(dtype)  # [rows, d]
            parts.append(out + self.b_out)
        return torch.cat(parts).reshape(x.shape)
