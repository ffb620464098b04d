"""The layers of a krc network in PyTorch (see krc.torch_module for the whole model).

Legend: B words in a batch, T positions (the letters plus <bos>), d d_model, H heads of a
layer, e head width (d_head), m MLP hidden units (d_mlp), S states, V vocabulary (<bos> first),
c query rows per attention chunk.

Parameters carry TransformerLens's HookedTransformer names and shapes (W_Q [H, d, e], W_in
[d, m], ...), so that a uniform module's state_dict() loads into a HookedTransformer (the
legacy path, TransformerLens 2.x/3.x) and converts to a TransformerBridge (TransformerLens 4,
krc.tl_bridge). The products go through F.linear with the weights laid out as nn.Linear's
[out, in], exactly the calls of TransformerLens 4's NativeModel: then a TransformerBridge of the
same shapes gives the same float32 bits (an optimised BLAS may sum a product in another order
when the operands are laid out differently)."""
import warnings

import torch
import torch.nn.functional as F
from torch import nn


def frozen(tensor):
    return nn.Parameter(tensor.to(torch.float32).contiguous(), requires_grad=False)


class Embed(nn.Module):
    def __init__(self, W_E):
        super().__init__()
        self.W_E = frozen(W_E)  # [V, d]

    def forward(self, tokens):  # [B, T] -> [B, T, d]
        return self.W_E[tokens]


class PosEmbed(nn.Module):
    def __init__(self, W_pos):
        super().__init__()
        self.W_pos = frozen(W_pos)  # [max_len + 1, d]

    def forward(self, tokens):
        return self.W_pos[: tokens.shape[1]].unsqueeze(0)


class Unembed(nn.Module):
    def __init__(self, W_U, b_U):
        super().__init__()
        self.W_U, self.b_U = frozen(W_U), frozen(b_U)  # [d, S], [S]

    def forward(self, x):
        return F.linear(x, self.W_U.T.contiguous(), self.b_U)


def heads_first(x, W, b):
    """x [B, T, d], W [H, d, e], b [H, e] -> x W[h] + b[h] as [B, H, T, e]."""
    H, d, e = W.shape
    y = F.linear(x, W.transpose(1, 2).reshape(H * e, d), b.reshape(H * e))
    return y.view(x.shape[0], x.shape[1], H, e).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, W_Q, W_K, W_V, W_O, kinds, scale):
        super().__init__()
        H, d, e = W_Q.shape
        self.W_Q, self.W_K, self.W_V, self.W_O = (frozen(w) for w in (W_Q, W_K, W_V, W_O))
        self.b_Q, self.b_K, self.b_V = (frozen(torch.zeros(H, w.shape[2])) for w in (W_Q, W_K, W_V))
        self.b_O = frozen(torch.zeros(d))
        self.kinds = list(kinds)  # "select" or "average", one per head
        self.scale = float(scale)
        self.register_buffer("select", torch.tensor([k == "select" for k in kinds]), persistent=False)

    def project(self, x):
        """x [B, T, d] -> q, k, v, each [B, H, T, e] (krc.torch_sparse overrides it)."""
        return (heads_first(x, W, b) for W, b in
                ((self.W_Q, self.b_Q), (self.W_K, self.b_K), (self.W_V, self.b_V)))

    def output(self, z):
        """The heads' outputs z [B, T, H * e] -> z W_O + b_O [B, T, d]."""
        return F.linear(z, self.W_O.reshape(z.shape[2], -1).T.contiguous(), self.b_O)

    def forward(self, x, hard, max_scores):  # [B, T, d] -> [B, T, d]
        z = self.attend(*self.project(x), hard, max_scores)
        B, H, T, e = z.shape
        return self.output(z.transpose(1, 2).contiguous().view(B, T, H * e))

    def attend(self, q, k, v, hard, max_scores):
        """Each head's mix of its values: q, k [B, H, T, e], v [B, H, T, e_v] -> z [B, H, T,
        e_v], softmax or (hard, select heads) the latest maximum, causal; krc.torch_circuit
        calls it with each head's q, k and v computed from inputs of their own."""
        B, H, T, _ = q.shape
        kT = k.transpose(2, 3)  # [B, H, e, T]
        argmax = self.select if hard else torch.zeros_like(self.select)
        soft = argmax.logical_not()
        z = torch.empty(B, H, T, v.shape[3], dtype=q.dtype, device=q.device)
        c = max(1, min(T, max_scores // max(1, B * H * T)))
        # Within a chunk only the diagonal block has keys after their query.
        future = torch.ones(c, c, dtype=torch.bool, device=q.device).triu(1)
        for t0 in range(0, T, c):
            t1 = min(T, t0 + c)
            s = q[:, :, t0:t1] @ kT[:, :, :, :t1]  # [B, H, c, t1]
            if self.scale != 1.0:
                s *= self.scale
            s[:, :, :, t0:t1].masked_fill_(future[: t1 - t0, : t1 - t0], float("-inf"))
            if soft.all():
                z[:, :, t0:t1] = torch.softmax(s, dim=3) @ v[:, :, :t1]
            elif soft.any():
                z[:, soft, t0:t1] = torch.softmax(s[:, soft], dim=3) @ v[:, soft, :t1]
            if argmax.any():
                # The latest maximum: the first maximum of the keys in reverse order.
                latest = t1 - 1 - s[:, argmax].flip(3).argmax(dim=3)  # [B, Hs, c]
                vs = v[:, argmax, :t1]
                z[:, argmax, t0:t1] = torch.gather(
                    vs, 2, latest.unsqueeze(3).expand(-1, -1, -1, vs.shape[3]))
        return z


class MLP(nn.Module):
    def __init__(self, W_in, b_in, W_out, b_out):
        super().__init__()
        self.W_in, self.b_in, self.W_out, self.b_out = (frozen(w) for w in (W_in, b_in, W_out, b_out))
        self.sparse = None  # (W_in^T, W_out^T) as sparse CSR, once use_sparse() is called

    def use_sparse(self, on):
        if on and self.W_in.dtype != torch.float32:
            raise ValueError("sparse MLPs run in float32 only (the module is %s)" % self.W_in.dtype)
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        self.sparse = (self.W_in.T.to_sparse_csr(), self.W_out.T.to_sparse_csr()) if on else None

    def forward(self, x, max_hidden):  # rows in chunks so that [rows, m] stays bounded
        flat = x.reshape(-1, x.shape[2])
        rows = max(1, max_hidden // max(1, self.W_in.shape[1]))
        if self.sparse is None:
            W_in, W_out = self.W_in.T.contiguous(), self.W_out.T.contiguous()
            parts = [F.linear(F.relu(F.linear(part, W_in, self.b_in)), W_out, self.b_out)
                     for part in flat.split(rows)]
        else:
            W_in_T, W_out_T = self.sparse
            b_in = self.b_in.unsqueeze(1)
            parts = [(W_out_T @ torch.relu(W_in_T @ part.T.contiguous() + b_in)).T + self.b_out
                     for part in flat.split(rows)]
        return torch.cat(parts).reshape(x.shape)


class Block(nn.Module):
    def __init__(self, attn, mlp):
        super().__init__()
        self.attn, self.mlp = attn, mlp  # either may be None


def uniform_blocks(blocks, d, n_heads, d_head, d_mlp, scale):
    """Every block with n_heads heads of width d_head and (d_mlp > 0) d_mlp hidden units: the
    padding heads and units are zero, and a zero head or unit adds exact zeros."""
    out = []
    for block in blocks:
        W = torch.zeros(4, n_heads, d, d_head)
        kinds = ["average"] * n_heads
        a = block.attn
        if a is not None:
            H, _, e = a.W_Q.shape
            for j, w in enumerate((a.W_Q, a.W_K, a.W_V)):
                W[j, :H, :, :e] = w
            W[3, :H, :, :e] = a.W_O.transpose(1, 2)
            kinds[:H] = a.kinds
        attn = Attention(W[0], W[1], W[2], W[3].transpose(1, 2), kinds, scale)
        mlp = None
        if d_mlp:
            W_in, b_in, W_out = torch.zeros(d, d_mlp), torch.zeros(d_mlp), torch.zeros(d_mlp, d)
            b_out = torch.zeros(d)
            if block.mlp is not None:
                m = block.mlp.W_in.shape[1]
                W_in[:, :m], b_in[:m], W_out[:m] = block.mlp.W_in, block.mlp.b_in, block.mlp.W_out
                b_out = block.mlp.b_out
            mlp = MLP(W_in, b_in, W_out, b_out)
        out.append(Block(attn, mlp))
    return out
