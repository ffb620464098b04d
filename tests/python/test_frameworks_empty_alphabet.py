"""An automaton with an empty alphabet (issue 23's last refusal): JFLAP's jflapcheck__test_fa.jff,
whose every transition is an epsilon transition, and a two-state JSON automaton with
"alphabet": []. Each reads only the empty word, so krc compiles it to a network of no layers
whose vocabulary is <bos> alone. The torch module, tools/krc_torch.py, tools/reference_forward.py
and the Python package load it and answer position 0 as the automaton does (the oracle reads
the automaton from the file's own metadata); a letter is refused by name."""
import json
import os
import subprocess
import sys

import pytest

from frameworks_support import REPO, Oracle, krc

pytestmark = pytest.mark.frameworks

TEST_FA = os.path.join(REPO, "tests", "reference", "realworld", "files", "jflapcheck__test_fa.jff")
TWO = {"name": "two", "states": ["a", "b"], "alphabet": [], "initial": "b", "transitions": {}}


@pytest.fixture(scope="module")
def networks(tmp_path_factory):
    """{name: weights path}: test_fa by default (accepting bit) and by state, and `two`."""
    d = tmp_path_factory.mktemp("empty")
    two = d / "two.json"
    two.write_text(json.dumps(TWO))
    out = {}
    for name, source, options in (("accepting", TEST_FA, []),
                                  ("state", TEST_FA, ["--output-kind", "state"]),
                                  ("two", str(two), [])):
        out[name] = str(d / (name + ".safetensors"))
        result = krc("compile", source, "-o", out[name], *options)
        assert "the alphabet is empty: the network reads only the empty word" in result.stderr
    return out


@pytest.mark.parametrize("name", ["accepting", "state", "two"])
def test_torch_module_answers_the_empty_word(networks, name):
    from krc.torch_module import KrcFileError, load_torch

    path = networks[name]
    oracle = Oracle.of_file(path)
    assert oracle.letters == []
    model = load_torch(path)
    assert model.vocabulary == ["<bos>"]
    assert len(model.blocks) == 0
    logits = model(model.tokens([[]]))
    assert logits.shape == (1, 1, len(model.states))
    assert [model.states[i] for i in logits.argmax(-1)[0].tolist()] == oracle.run([])
    # The uniform module (what TransformerLens loads) has no blocks either, and agrees.
    uniform = load_torch(path, uniform=True)
    assert uniform.transformer_lens_config()["n_layers"] == 0
    assert uniform(uniform.tokens([[]])).argmax(-1).tolist() == logits.argmax(-1).tolist()
    with pytest.raises(KrcFileError, match="'a'.*the alphabet is empty"):
        model.tokens([["a"]])


def test_test_fa_answers_its_closure(networks):
    # The epsilon closure of q0 holds every state, q5 (final) among them: {ε} is the language.
    assert Oracle.of_file(networks["accepting"]).run([]) == ["accept"]
    closure = "{" + ",".join("q%d" % i for i in range(18)) + "}"
    assert Oracle.of_file(networks["state"]).run([]) == [closure]


def test_krc_torch_and_reference_forward(networks, reference_forward):
    path = networks["two"]
    tool = os.path.join(REPO, "tools", "krc_torch.py")
    run = subprocess.run([sys.executable, tool, path, ""], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["letters"] == [] and answer["states"] == answer["expected"] == ["b"]
    refused = subprocess.run([sys.executable, tool, path, "a"], capture_output=True, text=True)
    assert refused.returncode == 2
    assert "'a'" in refused.stderr and "the alphabet is empty" in refused.stderr
    forward = subprocess.run(["python3", reference_forward.__file__, path, ""],
                             capture_output=True, text=True)
    assert forward.returncode == 0, forward.stderr
    assert json.loads(forward.stdout)["states"] == ["b"]


def test_python_package(tmp_path):
    import krc as package
    from frameworks_support import onnx_session

    automaton = package.load_automaton(TEST_FA)
    assert (len(automaton.states), automaton.letters) == (1, [])
    two = tmp_path / "two.json"
    two.write_text(json.dumps(TWO))
    for strategy in ("auto", "scan", "kr", "onelayer"):
        net = package.compile(package.load_automaton(str(two)), strategy=strategy, max_len=8)
        assert net.vocabulary == ["<bos>"] and net.layers == []
        assert net.run("").states == ["b"]
        report = net.verify()
        assert report.ok and report.words == 1 and report.positions == 1
        with pytest.raises(package.InputError, match="the alphabet is empty"):
            net.run("a")
        with pytest.raises(package.InputError, match="the alphabet is empty"):
            net.verify(random=5)
    # The other frameworks the package exports to read the network of no layers too.
    model = net.to_torch()
    tokens = model.tokens([[]])
    assert model(tokens).argmax(-1).tolist() == [[1]]  # "b", the second state
    assert net.to_transformer_lens()(tokens).argmax(-1).tolist() == [[1]]
    net.to_onnx(str(tmp_path / "two.onnx"))
    logits = onnx_session(str(tmp_path / "two.onnx")).run(["logits"], {"tokens": tokens.numpy()})[0]
    assert logits.argmax(-1).tolist() == [[1]]
