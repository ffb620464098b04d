"""A krc MLP kept sparse in PyTorch, in float32, bfloat16 or float16: what
`load_torch(path, sparse_mlp=True)` builds instead of krc.torch_layers.MLP, so that a network
whose dense MLPs would not fit in memory (d_model x d_mlp entries, almost all zero) runs at all.

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


def csr_of_stored(stored, transpose=False):
    """A CSR matrix from a file's tensor: either ("sparse", indices [nnz, 2], values [nnz],
    shape) or a dense 2-D tensor (its nonzeros); transpose=True gives the transposed matrix."""
    if isinstance(stored, tuple):
        _, indices, values, shape = stored
        rows, cols = indices[:, 0], indices[:, 1]
    else:
        shape = list(stored.shape)
        rows, cols = torch.nonzero(stored, as_tuple=True)
        values = stored[rows, cols]
    if transpose:
        rows, cols, shape = cols, rows, [shape[1], shape[0]]
    return csr(rows, cols, values, shape)


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
        """Already sparse; a dense MLP needs a dense load (load_torch without sparse_mlp)."""
        if not on:
            raise ValueError("this MLP was loaded sparse (sparse_mlp=True); load the file "
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
