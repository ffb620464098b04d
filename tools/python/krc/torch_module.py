"""krc networks in PyTorch: an nn.Module written from runtime/README.md's "Weights file
format" (and, for `krc export` files, tools/README.md's "Exporting"), on any device, in
float32 (krc's arithmetic; the default), bfloat16 or float16.

load_torch(path, device=None, dtype=None, uniform=False, sparse=False, max_dense_bytes=8 GiB)
reads any krc weights file (dense or sparse tensors) or `krc export` file, through the official
`safetensors` reader, into a KrcTransformer; the layers are in krc.torch_layers, the sparse MLPs
and attention projections of sparse=True in krc.torch_sparse, the refusal of a dense load too
large for memory in krc.dense_budget. Its parameters carry TransformerLens's
names and shapes:
  embed.W_E [V, d]   pos_embed.W_pos [max_len+1, d]   unembed.W_U [d, S]  unembed.b_U [S]
  blocks.{i}.attn.W_Q, W_K, W_V [H, d, e]  W_O [H, e, d]  b_Q, b_K, b_V [H, e]  b_O [d]
  blocks.{i}.mlp.W_in [d, m]  b_in [m]  W_out [m, d]  b_out [d]
A layer without heads has no `attn`, a layer without an MLP no `mlp`, unless the module is
built uniform: then every layer has the same H, e and m, padded with zero heads and zero
hidden units, which add exact zeros (tools/README.md "PyTorch and TransformerLens").

The forward pass is what runtime/README.md defines: x = W_E[tokens] + W_pos; per layer x +=
attention, then x += MLP (ReLU); logits = x W_U + b_U, every tensor and operation in the
module's dtype. Attention is causal; a score is scale * (q . k). Under hard attention a
`select` head takes the one-hot argmax of its scores, ties to the latest position, and an
`average` head keeps the softmax. Queries go in chunks of c rows against keys 0..t, c chosen
so that a chunk's score block stays under `max_scores` elements: no T x T matrix per head is
built for long words."""
import json
import os  # noqa: F401  (the annotations name os.PathLike)
from typing import Any, Optional, Union

import torch
from torch import nn

from krc.dense_budget import (DEFAULT_MAX_DENSE_BYTES, DenseBudgetError,  # noqa: F401
                               check_dense_budget, dense_bytes, dense_shapes)
from krc.arguments import checked
from krc.certified import warn_if_uncertified
from krc.errors import InputError
from krc.torch_layers import MLP, Attention, Block, Embed, PosEmbed, Unembed, uniform_blocks
from krc.torch_sparse import SparseAttention, SparseMLP, csr_of_stored

EXPORT_FORMAT = "krc-transformer-lens"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class KrcFileError(InputError):
    """A file this module cannot read, with the file's name in the message: a krc.InputError
    (and so a krc.KrcError and a ValueError), like every error krc raises on purpose."""


def read_safetensors(path):
    """The tensors (float32 or integer torch tensors, on the CPU) and the metadata of a
    safetensors file, through the official reader; its errors name the file."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            metadata = f.metadata() or {}
            return {name: f.get_tensor(name) for name in f.keys()}, metadata
    except (SafetensorError, ValueError, TypeError, RuntimeError) as e:
        raise KrcFileError("%s: not a safetensors file (%s)" % (path, e)) from None


def dense_float32(raw, metadata, keep_sparse=()):
    """Every tensor dense, float32 (README: X.indices/X.values with X's shape in "sparse"),
    except that a sparse tensor named in keep_sparse stays ("sparse", indices, values, shape)."""
    raw = dict(raw)
    tensors = {}
    for name, shape in json.loads(metadata.get("sparse", "{}")).items():
        if name in keep_sparse:
            tensors[name] = ("sparse", raw.pop(name + ".indices"), raw.pop(name + ".values"),
                             shape)
            continue
        dense = torch.zeros(shape, dtype=torch.float32)
        indices, values = raw.pop(name + ".indices"), raw.pop(name + ".values")
        dense[tuple(indices.to(torch.long).T)] = values.to(torch.float32)
        tensors[name] = dense
    tensors.update({name: t.to(torch.float32) for name, t in raw.items()})
    return tensors


def word_tokens(vocabulary, words, device=None):
    """Words (lists of letters) as tokens [B, 1 + longest], <bos> (token 0) first, then each
    letter's index in `vocabulary`. Shorter words are padded at the end with <bos>, which by
    causality changes none of their positions. An unknown letter raises KrcFileError."""
    ids = {a: i for i, a in enumerate(vocabulary)}
    n = 1 + max((len(w) for w in words), default=0)
    try:
        rows = [[0] + [ids[a] for a in w] + [0] * (n - 1 - len(w)) for w in words]
    except KeyError as e:
        empty = "" if len(vocabulary) > 1 else \
            " (the alphabet is empty: the network reads only the empty word)"
        raise KrcFileError("letter %s is not in the network's alphabet%s" % (e, empty)) from None
    return torch.tensor(rows, dtype=torch.long, device=device)


class KrcTransformer(nn.Module):
    """A krc network. vocabulary[0] is "<bos>"; states, residual_labels, automaton, heads
    (each head's role and kind, per layer) and attention (the kind the file was compiled for)
    come from the file."""

    def __init__(self, embed, pos_embed, blocks, unembed, info):
        super().__init__()
        self.embed, self.pos_embed, self.unembed = embed, pos_embed, unembed
        self.blocks = nn.ModuleList(blocks)
        self.vocabulary, self.states = info["vocabulary"], info["states"]
        self.residual_labels, self.automaton = info["residual_labels"], info["automaton"]
        self.attention, self.max_len = info["attention"], info["max_len"]
        self.scale, self.heads = info["scale"], info["heads"]
        self.max_scores = 1 << 22  # elements of one attention chunk's scores (16 MB)
        self.max_hidden = 1 << 22  # elements of one chunk of MLP hidden units (rows x m)

    def use_sparse_mlp(self, on=True):
        """MLPs through sparse CSR weights (float32 only): the same products, each output
        summing its nonzero terms in index order (tools/README.md)."""
        for block in self.blocks:
            if block.mlp is not None:
                block.mlp.use_sparse(on)
        return self

    def run_with_cache(self, tokens, attention=None, names=None):
        """Logits [B, T, S] and a dict of named activations (TransformerLens's hook names):
        hook_embed, hook_pos_embed, blocks.{i}.hook_resid_pre, .hook_attn_out,
        .hook_resid_mid, .hook_mlp_out, .hook_resid_post, each [B, T, d]; `names` keeps some."""
        if tokens.shape[-1] > self.max_len + 1:
            raise InputError(
                "tokens: %d positions, more than the network's max_len %d + 1 (<bos> and %d "
                "letters); compile it with a larger max_len"
                % (tokens.shape[-1], self.max_len, self.max_len), "tokens", "",
                "more positions than max_len + 1")
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
                x = x + keep(p + "hook_mlp_out", block.mlp(x, self.max_hidden))
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
        """Words as tokens [B, 1 + longest] on the module's device (word_tokens)."""
        return word_tokens(self.vocabulary, words, self.embed.W_E.device)

    def transformer_lens_config(self):
        """HookedTransformerConfig arguments under which a uniform module's state_dict() runs
        the same network (tools/README.md "PyTorch and TransformerLens")."""
        attn = [b.attn for b in self.blocks if b.attn is not None]
        mlp = [b.mlp for b in self.blocks if b.mlp is not None]
        d_mlp = max((m.W_in.shape[1] if isinstance(m, MLP) else m.d_mlp for m in mlp), default=0)
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


def krc_blocks(t, config, sparse=False):
    """Blocks from a krc weights file's tensors (README: q, k, v [H, d, hd], o [H, hd, d],
    mlp.in.weight [m, d], mlp.out.weight [d, m]); sparse: SparseAttention and SparseMLPs
    (W_in^T is mlp.in.weight, W_out^T mlp.out.weight, as stored)."""
    blocks = []
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        attn = mlp = None
        if layer["heads"]:
            layer_attention = SparseAttention if sparse else Attention
            attn = layer_attention(*(t[p + "attn." + m] for m in "qkvo"),
                                   [h["kind"] for h in layer["heads"]],
                                   config["attention"]["scale"])
        if layer["mlp_hidden"] is not None and sparse:
            mlp = SparseMLP(csr_of_stored(t[p + "mlp.in.weight"]), t[p + "mlp.in.bias"],
                            csr_of_stored(t[p + "mlp.out.weight"]), t[p + "mlp.out.bias"])
        elif layer["mlp_hidden"] is not None:
            mlp = MLP(t[p + "mlp.in.weight"].T, t[p + "mlp.in.bias"], t[p + "mlp.out.weight"].T,
                      t[p + "mlp.out.bias"])
        blocks.append(Block(attn, mlp))
    return blocks


def export_blocks(t, config, heads, sparse=False):
    """Blocks from a `krc export` file (TransformerLens names, uniform; README "Exporting");
    sparse: SparseAttention and SparseMLPs (W_in [d, m] and W_out [m, d] transposed)."""
    blocks = []
    for i in range(config["n_layers"]):
        p = "blocks.%d." % i
        attn = (SparseAttention if sparse else Attention)(
            *(t[p + "attn.W_" + m] for m in "QKVO"), [h["kind"] for h in heads[i]],
            1.0 / config["attn_scale"] if config["use_attn_scale"] else 1.0)
        for name in ("b_Q", "b_K", "b_V", "b_O"):
            getattr(attn, name).copy_(t[p + "attn." + name])
        mlp = None
        if not config["attn_only"] and sparse:
            mlp = SparseMLP(csr_of_stored(t[p + "mlp.W_in"], transpose=True), t[p + "mlp.b_in"],
                            csr_of_stored(t[p + "mlp.W_out"], transpose=True), t[p + "mlp.b_out"])
        elif not config["attn_only"]:
            mlp = MLP(*(t[p + "mlp." + m] for m in ("W_in", "b_in", "W_out", "b_out")))
        blocks.append(Block(attn, mlp))
    return blocks


def module_parts(t, metadata, sparse=False):
    """(embed, pos_embed, blocks, unembed, info) of a krc file or a `krc export` file."""
    info = {"automaton": json.loads(metadata["automaton"]),
            "residual_labels": json.loads(metadata["residual_labels"])}
    config = json.loads(metadata["config"])
    if metadata.get("format") == EXPORT_FORMAT:
        krc = json.loads(metadata["krc"])
        info.update(vocabulary=krc["vocabulary"], states=krc["states"], max_len=krc["max_len"],
                    attention=krc["attention"], scale=krc["scale"], heads=krc["heads"])
        return (Embed(t["embed.W_E"]), PosEmbed(t["pos_embed.W_pos"]),
                export_blocks(t, config, krc["heads"], sparse),
                Unembed(t["unembed.W_U"], t["unembed.b_U"]), info)
    info.update(vocabulary=config["vocabulary"], states=config["states"],
                max_len=config["max_len"], attention=config["attention"]["kind"],
                scale=config["attention"]["scale"],
                heads=[layer["heads"] for layer in config["layers"]])
    return (Embed(t["embed.token"]), PosEmbed(t["embed.position"]),
            krc_blocks(t, config, sparse),
            Unembed(t["unembed"], torch.zeros(len(config["states"]))), info)


SPARSE_WEIGHTS = ("mlp.in.weight", "mlp.out.weight", "mlp.W_in", "mlp.W_out",
                  "attn.q", "attn.k", "attn.v", "attn.o",
                  "attn.W_Q", "attn.W_K", "attn.W_V", "attn.W_O")


def sparse_weight_names(names):
    """The MLP and attention weight matrices among a file's tensor names (krc's or `krc
    export`'s): what a sparse load keeps sparse."""
    return {n for n in names if n.startswith(("layers.", "blocks.")) and n.endswith(SPARSE_WEIGHTS)}


def torch_device(device: Any, where: str) -> Any:
    """`device` as a torch.device that works here, or None; a name torch does not know, or a
    device this machine does not have, raises ValueError naming it (torch says RuntimeError)."""
    if device is None:
        return None
    try:
        d = torch.device(device)
        torch.empty(0, device=d)
    except (RuntimeError, TypeError, AssertionError) as e:
        raise ValueError("%s: device %r: %s" % (where, device, e)) from None
    return d


def load_options(device, dtype, uniform, sparse, max_dense_bytes, warn_depth):
    """load_torch's device and dtype, each option checked (ValueError naming it)."""
    device = torch_device(device, "krc.load_torch")
    if max_dense_bytes is not None and not 0 < max_dense_bytes < 1 << 63:
        raise ValueError("krc.load_torch: max_dense_bytes %d is not in [1, 2**63-1] (None: no "
                         "limit)" % max_dense_bytes)
    if not 0 <= warn_depth <= 64:
        raise ValueError("krc.load_torch: warn_depth %d is not in [0, 64]" % warn_depth)
    dtype = DTYPES.get(dtype, dtype) if isinstance(dtype, str) else (dtype or torch.float32)
    if dtype not in DTYPES.values():
        raise ValueError("dtype %r: krc modules run in float32, bfloat16 or float16" % (dtype,))
    if uniform and sparse:
        raise ValueError("uniform=True (TransformerLens) needs dense layers; sparse=True "
                         "cannot be uniform")
    return device, dtype


@checked
def load_torch(path: Union[str, "os.PathLike[str]"], device: Any = None, dtype: Any = None,
               uniform: bool = False, sparse: bool = False,
               max_dense_bytes: Optional[int] = DEFAULT_MAX_DENSE_BYTES, warn_depth: int = 0):
    """A KrcTransformer from a krc weights file or a `krc export` file, its weights cast to
    `dtype` (default float32; a torch.dtype or "float32", "bfloat16", "float16") and moved to
    `device` (default the CPU). uniform=True pads every layer to the same heads and MLP width
    (what TransformerLens needs).

    sparse=True keeps every weight matrix of the layers sparse (krc.torch_sparse: the MLPs'
    W_in, W_out and the heads' q, k, v, o as CSR matrices built from the file's indices and
    values, never densified; float32 sums, each product rounded to `dtype`), for networks
    whose dense layers would not fit; embeddings and unembedding stay dense. It cannot be
    uniform.

    Before anything is allocated, the float32 bytes of the tensors the module would hold dense
    (all of them, or all but the layers' weight matrices under sparse; the padded blocks too
    when uniform) are counted from the file's header; past max_dense_bytes (default 8 GiB; None: no
    limit) krc.dense_budget.DenseBudgetError (a krc.LimitError and a ValueError) says how many
    bytes it would need.

    A dtype the file does not certify (its `compiler` metadata: krc info's "exact in") gives
    a krc.certified.UncertifiedFormatWarning naming the formats it is exact in; warn_depth
    adds stack levels for callers that wrap this function."""
    device, dtype = load_options(device, dtype, uniform, sparse, max_dense_bytes, warn_depth)
    try:
        shapes, _ = dense_shapes(path)
    except Exception:  # not a safetensors file: read_safetensors names the problem below
        shapes = None
    if shapes is not None:
        keep = sparse_weight_names(shapes) if sparse else ()
        check_dense_budget(
            path, dense_bytes(shapes, uniform, keep), max_dense_bytes,
            "a %s load" % ("sparse" if sparse else "uniform" if uniform else "dense"),
            "its embeddings alone are that large" if sparse else
            "load it with sparse=True, which keeps the layers' "
            "weights sparse, or raise max_dense_bytes")
    raw, metadata = read_safetensors(path)
    try:
        keep = sparse_weight_names(raw.keys() | set(json.loads(metadata.get("sparse", "{}"))))
        model = KrcTransformer(*module_parts(
            dense_float32(raw, metadata, keep if sparse else ()), metadata, sparse))
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as e:
        raise KrcFileError("%s: not a krc weights file (%s: %s)"
                           % (path, type(e).__name__, e)) from None
    del raw
    dtype_name = next(n for n, d in DTYPES.items() if d == dtype)
    warn_if_uncertified(metadata, dtype_name, str(path), stacklevel=4 + warn_depth)  # @checked
    if sparse:
        # A chunk of few rows repeats the whole CSR walk per chunk: on the TCP scan (m =
        # 2,080,641, bf16, one thread) 64 M elements (32 rows, 256 MB of float32) ran a
        # 128-letter word in 42.9 s against 52.7 s at 4 M (2 rows), peak RSS 2.3 GiB.
        model.max_hidden = 1 << 26
    if uniform:
        c = model.transformer_lens_config()
        model.blocks = nn.ModuleList(uniform_blocks(
            model.blocks, c["d_model"], c["n_heads"], c["d_head"], c["d_mlp"] or 0, model.scale))
    return model.to(device=device, dtype=dtype)


def load(path, uniform=False):
    """The float32 CPU module (tools/krc_torch.py's historical name for load_torch)."""
    return load_torch(path, uniform=uniform)
