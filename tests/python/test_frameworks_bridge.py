"""The TransformerLens 4 bridge's cache and names (krc.tl_bridge), the ONNX model under hard
attention (krc.onnx_export), and the torch module on another device (krc.torch_module)."""
import json

import pytest
import torch

from frameworks_support import compile_zoo, onnx_session, Oracle

pytestmark = pytest.mark.frameworks


def test_the_bridge_caches_under_canonical_names_and_carries_labels_and_heads(tmp_path):
    from safetensors import safe_open

    from krc.tl_bridge import to_transformer_lens
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "symmetric_3", "kr", 64)  # layers with heads only, MLPs only, both
    with safe_open(path, framework="np") as f:
        metadata = f.metadata()
    config = json.loads(metadata["config"])
    bridge, module = to_transformer_lens(path), load_torch(path)
    assert bridge.residual_labels == json.loads(metadata["residual_labels"])
    assert bridge.heads == [layer["heads"] for layer in config["layers"]]
    assert bridge.states == config["states"] and bridge.vocabulary == config["vocabulary"]
    word = Oracle.of_file(path).words(3, 1, 64, 0)[0]
    tokens = module.tokens([word])
    assert torch.equal(bridge.tokens([word]), tokens)
    with torch.inference_mode():
        logits, cache = bridge.run_with_cache(tokens)
    mine_logits, mine = module.run_with_cache(tokens)
    assert torch.equal(logits, mine_logits)
    names = ["hook_embed", "hook_pos_embed"]
    for i in range(len(config["layers"])):
        names += ["blocks.%d.%s" % (i, n) for n in
                  ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out",
                   "hook_resid_post", "attn.hook_pattern", "mlp.hook_pre", "mlp.hook_post")]
    assert not [n for n in names if n not in cache], sorted(cache.keys())
    for name, value in mine.items():  # the residual stream bit for bit, block by block
        assert torch.equal(cache[name], value), name
    # A layer without heads has one zero head in the bridge: it writes exact zeros.
    for i, layer in enumerate(config["layers"]):
        if not layer["heads"]:
            assert not cache["blocks.%d.hook_attn_out" % i].any()


@pytest.mark.parametrize("case", [("flipflop_3", "kr", ()), ("gridworld_4", "scan", ("--dense",))])
def test_onnx_under_hard_attention(case, tmp_path):
    from krc.onnx_export import to_onnx
    from krc.torch_module import load_torch

    name, strategy, options = case
    path = compile_zoo(tmp_path, name, strategy, 48, "--attention", "hard", *options)
    module, oracle = load_torch(path), Oracle.zoo(name)
    assert module.attention == "hard"
    words = oracle.words(5, 8, 48, 48)
    for attention in ("hard", "softmax"):
        onnx = to_onnx(path, str(tmp_path / ("%s.onnx" % attention)),
                       attention=None if attention == "hard" else attention)
        session = onnx_session(onnx)
        for word in words:
            tokens = module.tokens([word])
            got = session.run(["logits"], {"tokens": tokens.numpy()})[0][0].argmax(-1)
            assert [module.states[s] for s in got.tolist()] == oracle.run(word), (attention, word)
            assert got.tolist() == module(tokens, attention)[0].argmax(-1).tolist()


def test_the_module_moves_to_a_device(tmp_path):
    from krc.torch_module import load_torch

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    path = compile_zoo(tmp_path, "cyclic_5", "scan", 64)
    oracle = Oracle.zoo("cyclic_5")
    word = oracle.words(9, 1, 64, 0)[0]
    for device in devices:
        module = load_torch(path, device=device)
        assert all(p.device.type == device for p in module.parameters())
        tokens = module.tokens([word])
        assert tokens.device.type == device
        logits = module(tokens)[0]
        assert [module.states[s] for s in logits.argmax(-1).tolist()] == oracle.run(word), device
