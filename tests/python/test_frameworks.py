"""Issue 21: every zoo automaton, compiled with both kr and scan at max-len 256, runs right in
the PyTorch module (krc.torch_module), the TransformerLens 4 bridge (krc.tl_bridge),
onnxruntime (krc.onnx_export) and krc's own forward pass (`krc run --json`): the state after
every prefix of 20 random words is the automaton's (the zoo JSON, run here letter by letter),
and the bridge's float32 logits are the torch module's bit for bit. One word per network is 256
letters long, the others up to 48, to keep the run to minutes on two cores."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from frameworks_support import compile_zoo, krc_run, onnx_session, Oracle, zoo_names

pytestmark = pytest.mark.frameworks


MAX_LEN, WORDS, SHORT = 256, 20, 48


def states_of(logits, states):
    return [states[i] for i in logits.argmax(-1).tolist()]


def margins_of(logits):
    top = torch.topk(logits, 2, dim=-1).values
    return (top[:, 0] - top[:, 1]).tolist()


@pytest.mark.parametrize("strategy", ["kr", "scan"])
@pytest.mark.parametrize("name", zoo_names())
def test_every_framework_runs_the_automaton(name, strategy, tmp_path):
    from krc.onnx_export import to_onnx
    from krc.tl_bridge import to_transformer_lens
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, name, strategy, MAX_LEN)
    oracle = Oracle.zoo(name)
    words = oracle.words(hash((name, strategy)) % 1000, WORDS, MAX_LEN, SHORT)
    with ThreadPoolExecutor(2) as pool:
        krc_out = list(pool.map(lambda w: krc_run(path, w), words))
    module, bridge = load_torch(path), to_transformer_lens(path)
    session = onnx_session(to_onnx(path, str(tmp_path / "model.onnx")))
    assert module.states == oracle.states and module.vocabulary[1:] == oracle.letters
    for w, word in enumerate(words):
        expected = oracle.run(word)
        tokens = module.tokens([word])
        logits = module(tokens)[0]
        with torch.inference_mode():
            bridged = bridge(tokens)[0]
        onnx = session.run(["logits"], {"tokens": tokens.numpy()})[0][0]
        where = "%s %s word %d (%d letters)" % (name, strategy, w, len(word))
        assert states_of(logits, module.states) == expected, where
        assert krc_out[w]["states"] == expected, where
        assert states_of(torch.from_numpy(onnx), module.states) == expected, where
        assert bridged.dtype == torch.float32 and torch.equal(bridged, logits), where
        # krc sums in its own order; the margins agree to float32 rounding.
        if len(module.states) > 1:
            assert np.allclose(margins_of(logits), krc_out[w]["margins"], rtol=1e-5, atol=1e-4), where
