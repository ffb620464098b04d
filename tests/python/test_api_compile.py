"""krc.compile, Network.run, the network's parts, Network.save and krc.load. Oracles: the
automaton read from its JSON by Python, and tools/reference_forward.py's numpy forward pass
on the saved file."""

import os
import pickle

import numpy as np
import pytest

import krc
from conftest import Oracle, ZOO


@pytest.fixture(scope="module")
def gridworld():
    return krc.compile(krc.load_automaton(os.path.join(ZOO, "gridworld_9.json")), max_len=64)


def random_word(letters, length, seed):
    rng = np.random.default_rng(seed)
    return [letters[i] for i in rng.integers(0, len(letters), size=length)]


def test_gridworld_runs_as_the_automaton(gridworld):
    oracle = Oracle.of_json(os.path.join(ZOO, "gridworld_9.json"))
    assert isinstance(gridworld, krc.Network)
    for seed in range(5):
        word = random_word(oracle.letters, 64, seed)
        result = gridworld.run(word)
        assert result.states == oracle.run(word)
        assert result.expected == oracle.run(word)
        assert result.ok and min(result.margins) > 0
        assert result.logits.shape == (65, len(oracle.states))
    # A string is split on spaces and commas; "RRL" spells one-character letters.
    assert gridworld.run("R R,L").states == oracle.run(["R", "R", "L"])
    assert gridworld.run("RRL").states == oracle.run(["R", "R", "L"])


def test_run_prepares_each_arithmetic_once_and_keeps_it():
    """Network.run keeps the forward pass it prepared (one per attention and arithmetic), so a
    second call does not prepare again; the answers stay the automaton's and the logits equal
    a fresh network's (loaded from the same bytes, nothing prepared) in every arithmetic,
    interleaved."""
    oracle = Oracle.zoo("symmetric_3")
    network = krc.compile(krc.zoo("symmetric_3"), max_len=32, precision="bf16")
    fresh = lambda: pickle.loads(pickle.dumps(network))  # the file's bytes, loaded anew
    assert network._core._prepared_passes() == 0
    words = [random_word(oracle.letters, n, seed) for seed, n in enumerate([32, 7, 0, 19])]
    for arithmetic in ["float32", "bf16", "float32", "float64", "bf16"]:
        for word in words:
            result = network.run(word, arithmetic=arithmetic)
            assert result.states == oracle.run(word) and result.ok
            np.testing.assert_array_equal(result.logits,
                                          fresh().run(word, arithmetic=arithmetic).logits)
    assert network._core._prepared_passes() == 3  # float32, bf16, float64
    network.run(words[0], attention="hard")
    assert network._core._prepared_passes() == 4
    with pytest.raises(krc.InputError, match="more than the network's max_len"):
        network.run([oracle.letters[0]] * 33)
    assert network._core._prepared_passes() == 4


def test_letters_with_commas_are_read_as_krc_run_reads_them():
    # Letters as LearnLib writes TCP's ("SYN(V,V,0)"): a string that is a letter is that letter,
    # commas inside brackets do not separate, tabs alone separate when there is one.
    text = """{"states": ["closed", "open"], "alphabet": ["SYN(V,V,0)", "RST(V,V,0)", "a b"],
               "initial": "closed",
               "transitions": {"SYN(V,V,0)": ["open", "open"], "RST(V,V,0)": ["closed", "closed"],
                               "a b": ["open", "closed"]}}"""
    net = krc.compile(krc.parse_automaton(text, "tcp.json"), max_len=8)
    syn, rst = "SYN(V,V,0)", "RST(V,V,0)"
    assert net.run(syn).states == ["closed", "open"]
    assert net.run("SYN(V,V,0),RST(V,V,0) SYN(V,V,0)").states == ["closed", "open", "closed", "open"]
    assert net.run([rst, syn, "a b"]).states == ["closed", "closed", "open", "closed"]
    assert net.run("a b\tSYN(V,V,0)").states == ["closed", "open", "open"]
    assert net.run("").states == net.run([]).states == ["closed"]  # the empty word
    with pytest.raises(krc.InputError) as e:
        net.run("SYN(V,V,0),FIN(V,V,0)")
    assert "FIN(V,V,0)" in str(e.value)


@pytest.mark.parametrize("strategy,plan_type", [("scan", krc.ScanPlan), ("kr", krc.KrPlan),
                                                ("onelayer", krc.OneLayerPlan)])
def test_each_strategy_builds_its_plan_and_runs_right(strategy, plan_type):
    path = os.path.join(ZOO, "dihedral_3.json")
    oracle = Oracle.of_json(path)
    net = krc.compile(krc.load_automaton(path), strategy=strategy, max_len=8)
    assert net.strategy == strategy and net.reason
    assert isinstance(net.plan, plan_type)
    for seed in range(4):
        word = random_word(oracle.letters, 8, seed)
        assert net.run(word).states == oracle.run(word)
    if strategy == "scan":
        assert net.plan.steps == 3  # ceil(log2 8)
    if strategy == "kr":
        assert net.plan.layers == len(net.layers)
        assert net.plan.counter_sum == "whole"  # max-len 8: one head sums in plain float32
    if strategy == "onelayer":
        assert net.plan.max_len == 8 and net.plan.largest_len >= 8


def test_auto_keeps_the_fewest_layers():
    a = krc.zoo("dihedral", n=3)
    layers = {s: len(krc.compile(a, strategy=s, max_len=8).layers)
              for s in ("scan", "kr", "onelayer")}
    auto = krc.compile(a, max_len=8)
    assert len(auto.layers) == min(layers.values())
    assert layers[auto.strategy] == len(auto.layers)


def test_parts_are_consistent_with_the_weights(gridworld):
    net = gridworld
    d = net.d_model
    assert len(net.residual_labels) == d
    assert net.vocabulary == ["<bos>"] + net.letters
    assert net._core.token_embedding.shape == (len(net.vocabulary), d)
    assert net._core.position_embedding.shape == (net.max_len + 1, d)
    assert net._core.unembedding.shape == (d, len(net.states))
    # Subspaces cover the residual dimensions in order (runtime/README.md).
    first = 0
    for s in net.subspaces:
        assert s.first == first and s.width > 0
        first += s.width
    assert first == d
    assert net.size.layers == len(net.layers) and net.size.d_model == d
    heads = 0
    for layer in net.layers:
        for h in layer.heads:
            heads += 1
            assert h.kind in ("select", "average")
            assert isinstance(h.role, krc.Role) and h.role.kind
            assert h.query.shape == h.key.shape == (d, h.head_dim)
            # Values may be narrower or wider than queries: output reads what value writes.
            assert h.value.shape[0] == d and h.output.shape == (h.value.shape[1], d)
        if layer.mlp is not None:
            assert layer.mlp.in_weight.shape == (layer.mlp.hidden, d)
            covered = sum(b.count for b in layer.mlp.blocks)
            assert covered == layer.mlp.hidden
    assert heads == net.size.heads


def test_save_and_load_give_the_same_network(gridworld, tmp_path, reference_forward):
    path = tmp_path / "g9.safetensors"
    gridworld.save(path)
    loaded = krc.load(path)
    assert loaded.residual_labels == gridworld.residual_labels
    assert loaded.states == gridworld.states and loaded.max_len == gridworld.max_len
    assert [l.purpose for l in loaded.layers] == [l.purpose for l in gridworld.layers]
    assert [[str(h.role) for h in l.heads] for l in loaded.layers] == \
           [[str(h.role) for h in l.heads] for l in gridworld.layers]
    assert loaded.strategy is None and loaded.plan is None
    assert loaded.compiler["strategy"] == gridworld.strategy  # the file's metadata says it
    word = random_word(gridworld.letters, 64, 7)
    ours = gridworld.run(word, arithmetic="float64")
    assert np.array_equal(loaded.run(word, arithmetic="float64").logits, ours.logits)
    # The independent numpy forward pass of the saved file agrees with the core's.
    tensors, metadata = reference_forward.load(str(path), np.float64)
    import json
    config = json.loads(metadata["config"])
    tokens = [gridworld.vocabulary.index(a) for a in ["<bos>"] + word]
    theirs = reference_forward.logits(tensors, config, tokens, hard=False)
    assert np.allclose(theirs, ours.logits, rtol=1e-5, atol=1e-4)
    assert [gridworld.states[i] for i in theirs.argmax(axis=1)] == ours.states


def test_save_writes_whole_files_or_none(gridworld, tmp_path):
    target = tmp_path / "g9.safetensors"
    target.write_bytes(b"an earlier file")
    gridworld.save(target, dense=True)
    assert krc.load(target).d_model == gridworld.d_model
    # The krc command's writer: an InputError naming the target, never a temporary file.
    with pytest.raises(krc.InputError) as e:
        gridworld.save(tmp_path / "missing" / "g9.safetensors")
    assert e.value.file == str(tmp_path / "missing" / "g9.safetensors")
    assert sorted(os.listdir(tmp_path)) == ["g9.safetensors"]  # no temporary left behind
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~umask


def test_progress_lines_of_compile():
    lines = []
    krc.compile(krc.zoo("parity"), max_len=16, progress=lines.append)
    assert all(isinstance(line, str) for line in lines)
    assert lines  # auto plans several strategies and says so


def test_bad_arguments_are_value_errors():
    a = krc.zoo("parity")
    with pytest.raises(ValueError):
        krc.compile(a, strategy="fastest")
    with pytest.raises(ValueError):
        krc.compile(a, max_len=0)
    with pytest.raises(ValueError):
        krc.compile(a, attention="linear")
