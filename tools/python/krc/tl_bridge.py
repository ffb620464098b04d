"""A krc network as a TransformerLens 4 TransformerBridge (tools/README.md "PyTorch and
TransformerLens").

TransformerLens 4 removed HookedTransformer; a model that comes from no Hugging Face checkpoint
is built with TransformerBridge.boot_native(TransformerBridgeConfig(...)) and its weights loaded
by the native module's names, as transformer_lens/utilities/tracr.py does for Tracr. The native
model (transformer_lens/model_bridge/sources/native/model.py) is what krc's forward pass is once
the options say so: no normalisation (nn.Identity for ln1, ln2 and ln_out), ReLU MLPs, learned
absolute positions (an nn.Embedding of n_ctx = max_len + 1 rows), causal softmax attention.

Three things need care, each exact:
- Uniform layers. The native model has n_heads heads of width d_head and d_mlp hidden units in
  every layer; krc.torch_module's uniform module pads with zero heads and zero units, which add
  exact zeros, and a layer without heads gets one zero head (a zero head's values are zero).
- The score scale. NativeAttention divides q.k by cfg.attn_scale when use_attn_scale, else by
  sqrt(d_head), and refuses attn_scale 1.0 with d_head > 1 (it would saturate a trained model's
  softmax; krc's networks want exactly that). So the bridge boots with the default and then
  sets each NativeAttention's `scale` (the divisor its forward reads) to 1 / krc's scale, and
  the config to match: q.k / 1 is q.k, bit for bit (exact for any power-of-two scale).
- Hard attention. TransformerLens has none: the bridge runs every head as softmax, as a file
  compiled for softmax (krc's default) is meant to run.

The bridge carries krc's names: `residual_labels` (one per d_model dimension), `heads` (each
layer's heads: role, kind, ...; the padding heads are not listed), `states`, `vocabulary`
(token 0 is <bos>) and `automaton`, and `tokens(words)` makes its input."""
import os  # noqa: F401  (the annotations name os.PathLike)
import warnings
from typing import Any, Optional, Union

import torch

from krc.dense_budget import DEFAULT_MAX_DENSE_BYTES
from krc.arguments import checked
from krc.torch_module import KrcFileError, load_torch, torch_device, word_tokens


def bridge_config(model):
    """The TransformerBridgeConfig of a uniform KrcTransformer."""
    from transformer_lens.config import TransformerBridgeConfig

    c = model.transformer_lens_config()
    return TransformerBridgeConfig(
        n_layers=c["n_layers"], d_model=c["d_model"], d_head=c["d_head"], n_heads=c["n_heads"],
        n_ctx=c["n_ctx"], d_vocab=c["d_vocab"], d_vocab_out=c["d_vocab_out"],
        d_mlp=c["d_mlp"], attn_only=c["attn_only"], act_fn="relu", normalization_type=None,
        positional_embedding_type="standard", attention_dir="causal", init_weights=False,
        tokenizer_prepends_bos=False, model_name="krc", dtype=torch.float32)


def native_state_dict(model):
    """A uniform KrcTransformer's weights under NativeModel's names and nn.Linear's [out, in]
    layout (TransformerLens 4's convert_tl_checkpoint: W_Q [H, d, e] -> q.weight [H e, d])."""
    state = {"tok_embed.weight": model.embed.W_E, "pos.weight": model.pos_embed.W_pos,
             "head.weight": model.unembed.W_U.T, "head.bias": model.unembed.b_U}
    for i, block in enumerate(model.blocks):
        a, p = block.attn, "layers.%d." % i
        H, d, e = a.W_Q.shape
        for name, W, b in (("q", a.W_Q, a.b_Q), ("k", a.W_K, a.b_K), ("v", a.W_V, a.b_V)):
            state[p + "attn.%s.weight" % name] = W.transpose(1, 2).reshape(H * e, d)
            state[p + "attn.%s.bias" % name] = b.reshape(H * e)
        state[p + "attn.o.weight"] = a.W_O.reshape(H * e, d).T
        state[p + "attn.o.bias"] = a.b_O
        if block.mlp is not None:
            m = block.mlp
            state.update({p + "mlp.fc_in.weight": m.W_in.T, p + "mlp.fc_in.bias": m.b_in,
                          p + "mlp.fc_out.weight": m.W_out.T, p + "mlp.fc_out.bias": m.b_out})
    return {name: t.detach().contiguous().clone() for name, t in state.items()}


@checked
def to_transformer_lens(path: Union[str, "os.PathLike[str]"], device: Any = None,
                        max_dense_bytes: Optional[int] = DEFAULT_MAX_DENSE_BYTES):
    """A TransformerLens 4 TransformerBridge running the network of a krc weights file (or a
    `krc export` file) in float32, on `device` (default the CPU). Its logits for tokens [B, T]
    (<bos> = 0 first, then letter ids + 1; see bridge.tokens) are krc's [B, T, states].
    TransformerLens needs dense uniform layers: past max_dense_bytes of them the load is
    refused up front (krc.dense_budget.DenseBudgetError, naming the bytes)."""
    try:
        from transformer_lens.model_bridge import TransformerBridge
        import transformer_lens.model_bridge.sources.native  # noqa: F401  (adds boot_native)
    except ImportError as e:
        raise ImportError("to_transformer_lens needs TransformerLens 4 (transformer-lens>=4.3, "
                          "requirements.txt): %s" % e) from None
    device = torch_device(device, "krc.to_transformer_lens")
    model = load_torch(path, uniform=True, max_dense_bytes=max_dense_bytes)
    if model.attention == "hard":
        warnings.warn("%s was compiled for hard attention; the TransformerLens bridge runs "
                      "every head as softmax" % path)
    cfg = bridge_config(model)
    bridge = TransformerBridge.boot_native(cfg)
    result = bridge.load_state_dict(native_state_dict(model), strict=False)
    if result.unexpected_keys:
        raise KrcFileError("%s: TransformerLens refused the weights %s"
                           % (path, sorted(result.unexpected_keys)))
    divisor = 1.0 / model.scale
    for layer in bridge.original_model.layers:
        layer.attn.scale = divisor
    bridge.cfg.use_attn_scale, bridge.cfg.attn_scale = True, divisor
    bridge.residual_labels, bridge.heads = list(model.residual_labels), model.heads
    bridge.states, bridge.vocabulary = list(model.states), list(model.vocabulary)
    bridge.automaton = model.automaton
    vocabulary = bridge.vocabulary
    native = bridge.original_model  # tokens on the device the bridge is on when called
    bridge.tokens = lambda words: word_tokens(vocabulary, words, native.tok_embed.weight.device)
    bridge.eval()
    return bridge if device is None else bridge.to(device)
