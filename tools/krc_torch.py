#!/usr/bin/python3
"""krc networks in PyTorch: a plain float32 nn.Module written from README's "Weights file
format" section alone (and, for `krc export` files, from README's "Exporting").

Legend: B words in a batch, T positions (the letters plus <bos>), d d_model, H heads of a
layer, e head width (d_head), m MLP hidden units (d_mlp), S states, V vocabulary (<bos> first),
c query rows per attention chunk.

load(path) reads any krc weights file (dense or sparse tensors) or `krc export` file into a
KrcTransformer. Its parameters carry TransformerLens's names and shapes:
  embed.W_E [V, d]   pos_embed.W_pos [max_len+1, d]   unembed.W_U [d, S]  unembed.b_U [S]
  blocks.{i}.attn.W_Q, W_K, W_V [H, d, e]  W_O [H, e, d]  b_Q, b_K, b_V [H, e]  b_O [d]
  blocks.{i}.mlp.W_in [d, m]  b_in [m]  W_out [m, d]  b_out [d]
A layer without heads has no `attn`, a layer without an MLP no `mlp`, unless the module is
built uniform (load(path, uniform=True)): then every layer has the same H, e and m, padded
with zero heads and zero hidden units, which add exact zeros, and state_dict() loads into a
HookedTransformer built from transformer_lens_config() (README "PyTorch and TransformerLens").

The forward pass is what README defines, every tensor and operation in float32: x = W_E[tokens]
+ W_pos; per layer x += attention, then x += MLP (ReLU); logits = x W_U + b_U. Attention is
causal; a score is scale * (q . k). Under hard attention a `select` head takes the one-hot
argmax of its scores, ties to the latest position, and an `average` head keeps the softmax.
Queries go in chunks of c rows against keys 0..t, c chosen so that a chunk's score block stays
under `max_scores` elements: no T x T matrix per head is built for long words.

The command line (tools/krc_torch.py FILE [LETTER ...]) is in krc_torch_cli.py."""
import json
import struct
import sys
import warnings

import numpy as np
import torch
from torch import nn

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}
EXPORT_FORMAT = "krc-transformer-lens"


class KrcFileError(ValueError):
    """A file this module cannot read, with the file's name in the message."""


def read_safetensors(path):
    """The tensors (numpy, read-only views) and the metadata of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise KrcFileError("%s: not a safetensors file (shorter than 8 bytes)" % path)
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise KrcFileError("%s: header: not JSON (%s)" % (path, e))
    metadata = header.pop("__metadata__", {})
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        if entry["dtype"] not in DTYPES or not 0 <= begin <= end <= len(body):
            raise KrcFileError("%s: tensor '%s': bad dtype or offsets" % (path, name))
        tensors[name] = np.frombuffer(body[begin:end], DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors, metadata


def dense_float32(raw, metadata):
    """Every tensor dense, float32 (README: X.indices/X.values with X's shape in "sparse")."""
    raw = dict(raw)
    tensors = {}
    for name, shape in json.loads(metadata.get("sparse", "{}")).items():
        dense = np.zeros(shape, dtype=np.float32)
        indices, values = raw.pop(name + ".indices"), raw.pop(name + ".values")
        dense[tuple(indices.T.astype(np.int64))] = values
        tensors[name] = dense
    tensors.update({name: t.astype(np.float32) for name, t in raw.items()})
    return {name: torch.from_numpy(np.ascontiguousarray(t)) for name, t in tensors.items()}


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
        return x @ self.W_U + self.b_U


def heads_first(x, W, b):
    """x [B, T, d], W [H, d, e], b [H, e] -> x W[h] + b[h] as [B, H, T, e]."""
    H, d, e = W.shape
    y = x @ W.permute(1, 0, 2).reshape(d, H * e) + b.reshape(H * e)
    return y.reshape(x.shape[0], x.shape[1], H, e).transpose(1, 2)


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

    def forward(self, x, hard, max_scores):  # [B, T, d] -> [B, T, d]
        B, T, _ = x.shape
        q, k, v = (heads_first(x, W, b) for W, b in
                   ((self.W_Q, self.b_Q), (self.W_K, self.b_K), (self.W_V, self.b_V)))
        H = q.shape[1]
        kT = k.transpose(2, 3).contiguous()  # [B, H, e, T]
        argmax = self.select if hard else torch.zeros_like(self.select)
        soft = argmax.logical_not()
        z = torch.empty(B, H, T, v.shape[3], dtype=x.dtype)
        c = max(1, min(T, max_scores // max(1, B * H * T)))
        # Within a chunk only the diagonal block has keys after their query.
        future = torch.ones(c, c, dtype=torch.bool).triu(1)
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
        e = self.W_O.shape[1]
        return z.transpose(1, 2).reshape(B, T, H * e) @ self.W_O.reshape(H * e, -1) + self.b_O


class MLP(nn.Module):
    def __init__(self, W_in, b_in, W_out, b_out):
        super().__init__()
        self.W_in, self.b_in, self.W_out, self.b_out = (frozen(w) for w in (W_in, b_in, W_out, b_out))
        self.sparse = None  # (W_in^T, W_out^T) as sparse CSR, once use_sparse() is called

    def use_sparse(self, on):
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
        self.sparse = (self.W_in.T.to_sparse_csr(), self.W_out.T.to_sparse_csr()) if on else None

    def forward(self, x, max_hidden):  # rows in chunks so that [rows, m] stays bounded
        flat = x.reshape(-1, x.shape[2])
        rows = max(1, max_hidden // max(1, self.W_in.shape[1]))
        if self.sparse is None:
            parts = [torch.relu(part @ self.W_in + self.b_in) @ self.W_out + self.b_out
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


class KrcTransformer(nn.Module):
    """A krc network. vocabulary[0] is "<bos>"; states, residual_labels, automaton and
    attention (the kind the file was compiled for) come from the file."""

    def __init__(self, embed, pos_embed, blocks, unembed, info):
        super().__init__()
        self.embed, self.pos_embed, self.unembed = embed, pos_embed, unembed
        self.blocks = nn.ModuleList(blocks)
        self.vocabulary, self.states = info["vocabulary"], info["states"]
        self.residual_labels, self.automaton = info["residual_labels"], info["automaton"]
        self.attention, self.max_len = info["attention"], info["max_len"]
        self.scale = info["scale"]
        self.max_scores = 1 << 22  # elements of one attention chunk's scores or MLP rows (16 MB)

    def use_sparse_mlp(self, on=True):
        """MLPs through sparse CSR weights: the same float32 products, each output summing its
        nonzero terms in index order (README "PyTorch and TransformerLens")."""
        for block in self.blocks:
            if block.mlp is not None:
                block.mlp.use_sparse(on)
        return self

    def run_with_cache(self, tokens, attention=None, names=None):
        """Logits [B, T, S] and a dict of named activations (TransformerLens's hook names):
        hook_embed, hook_pos_embed, blocks.{i}.hook_resid_pre, .hook_attn_out,
        .hook_resid_mid, .hook_mlp_out, .hook_resid_post, each [B, T, d]; `names` keeps some."""
        hard = (attention or self.attention) == "hard"
        cache = {}

        def keep(name, value):
            if names is None or name in names:
                cache[name] = value
            return value

        x = keep("hook_embed", self.embed(tokens)) + keep("hook_pos_embed", self.pos_embed(tokens))
        for i, block in enumerate(self.blocks):
            p = "blocks.%d." % i
            keep(p + "hook_resid_pre", x)
            if block.attn is not None:
                x = x + keep(p + "hook_attn_out", block.attn(x, hard, self.max_scores))
            keep(p + "hook_resid_mid", x)
            if block.mlp is not None:
                x = x + keep(p + "hook_mlp_out", block.mlp(x, self.max_scores))
            keep(p + "hook_resid_post", x)
        return self.unembed(x), cache

    @torch.no_grad()
    def forward(self, tokens, attention=None):
        """tokens [B, T] (0 = <bos> first, then letter ids + 1) -> logits [B, T, S]."""
        return self.run_with_cache(tokens, attention, names=())[0]

    def labelled(self, residual):
        """{label: value} of the nonzero entries of one residual vector [d]."""
        return {self.residual_labels[i]: float(residual[i]) for i in torch.nonzero(residual).flatten()}

    def tokens(self, words):
        """Words (lists of letters) as tokens [B, 1 + longest], <bos> first. Shorter words are
        padded at the end with <bos>, which by causality changes none of their positions."""
        ids = {a: i for i, a in enumerate(self.vocabulary)}
        n = 1 + max((len(w) for w in words), default=0)
        return torch.tensor([[0] + [ids[a] for a in w] + [0] * (n - 1 - len(w)) for w in words],
                            dtype=torch.long)

    def transformer_lens_config(self):
        """HookedTransformerConfig arguments under which a uniform module's state_dict() runs
        the same network (README "PyTorch and TransformerLens")."""
        attn = [b.attn for b in self.blocks if b.attn is not None]
        mlp = [b.mlp for b in self.blocks if b.mlp is not None]
        d_mlp = max((m.W_in.shape[1] for m in mlp), default=0)
        return {
            "n_layers": len(self.blocks), "d_model": self.embed.W_E.shape[1],
            "n_ctx": self.max_len + 1, "d_head": max([a.W_Q.shape[2] for a in attn] + [1]),
            "n_heads": max([a.W_Q.shape[0] for a in attn] + [1]),
            "d_mlp": d_mlp if mlp else None, "attn_only": not mlp,
            "d_vocab": len(self.vocabulary), "d_vocab_out": len(self.states),
            "act_fn": "relu", "normalization_type": None, "positional_embedding_type": "standard",
            "attention_dir": "causal", "use_attn_scale": self.scale != 1.0,
            "attn_scale": 1.0 / self.scale, "default_prepend_bos": False,
        }


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


def krc_blocks(t, config):
    """Blocks from a krc weights file's tensors (README: q, k, v [H, d, hd], o [H, hd, d],
    mlp.in.weight [m, d], mlp.out.weight [d, m])."""
    blocks = []
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        attn = mlp = None
        if layer["heads"]:
            attn = Attention(*(t[p + "attn." + m] for m in "qkvo"),
                             [h["kind"] for h in layer["heads"]], config["attention"]["scale"])
        if layer["mlp_hidden"] is not None:
            mlp = MLP(t[p + "mlp.in.weight"].T, t[p + "mlp.in.bias"], t[p + "mlp.out.weight"].T,
                      t[p + "mlp.out.bias"])
        blocks.append(Block(attn, mlp))
    return blocks


def export_blocks(t, config, heads):
    """Blocks from a `krc export` file (TransformerLens names, uniform; README "Exporting")."""
    blocks = []
    for i in range(config["n_layers"]):
        p = "blocks.%d." % i
        attn = Attention(*(t[p + "attn.W_" + m] for m in "QKVO"), [h["kind"] for h in heads[i]],
                         1.0 / config["attn_scale"] if config["use_attn_scale"] else 1.0)
        for name in ("b_Q", "b_K", "b_V", "b_O"):
            getattr(attn, name).copy_(t[p + "attn." + name])
        mlp = None
        if not config["attn_only"]:
            mlp = MLP(*(t[p + "mlp." + m] for m in ("W_in", "b_in", "W_out", "b_out")))
        blocks.append(Block(attn, mlp))
    return blocks


def load(path, uniform=False):
    """A KrcTransformer from a krc weights file or a `krc export` file."""
    raw, metadata = read_safetensors(path)
    t = dense_float32(raw, metadata)
    try:
        info = {"automaton": json.loads(metadata["automaton"]),
                "residual_labels": json.loads(metadata["residual_labels"])}
        if metadata.get("format") == EXPORT_FORMAT:
            config, krc = json.loads(metadata["config"]), json.loads(metadata["krc"])
            info.update(vocabulary=krc["vocabulary"], states=krc["states"], max_len=krc["max_len"],
                        attention=krc["attention"], scale=krc["scale"])
            blocks = export_blocks(t, config, krc["heads"])
            unembed = Unembed(t["unembed.W_U"], t["unembed.b_U"])
            embed, pos = Embed(t["embed.W_E"]), PosEmbed(t["pos_embed.W_pos"])
        else:
            config = json.loads(metadata["config"])
            info.update(vocabulary=config["vocabulary"], states=config["states"],
                        max_len=config["max_len"], attention=config["attention"]["kind"],
                        scale=config["attention"]["scale"])
            blocks = krc_blocks(t, config)
            unembed = Unembed(t["unembed"], torch.zeros(len(config["states"])))
            embed, pos = Embed(t["embed.token"]), PosEmbed(t["embed.position"])
    except (KeyError, TypeError, ValueError) as e:
        raise KrcFileError("%s: not a krc weights file (%s: %s)" % (path, type(e).__name__, e))
    model = KrcTransformer(embed, pos, blocks, unembed, info)
    if uniform:
        c = model.transformer_lens_config()
        model.blocks = nn.ModuleList(uniform_blocks(
            model.blocks, c["d_model"], c["n_heads"], c["d_head"], c["d_mlp"] or 0, model.scale))
    return model


if __name__ == "__main__":
    import krc_torch_cli

    sys.exit(krc_torch_cli.main(sys.argv))
