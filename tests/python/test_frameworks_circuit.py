"""The circuit file's ablation check in PyTorch (Network.check_circuit(framework="torch"),
krc.torch_circuit; issue 35): on the network's torch module in float32 and float64, everything
outside the circuit zero-ablated leaves every position right, every witness krc's runtime
recorded changes the answer there too, and on the same words the torch check finds the same
redundant units as the runtime's float64 check. Oracle: the automaton's own JSON run by
tests/python/oracle.py (never krc) for the witnesses and one whole check; the check fails
where it should (a necessary edge left out, a false witness) and refuses what it cannot do."""
import json
import os

import pytest

import krc
from conftest import ZOO, Oracle

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.frameworks

# (zoo file, strategy, max_len): a scan, kr with a memory unit (a redundant unit at subspace
# granularity), the gridworld walk (redundant units at both), a symmetric group, and a
# one-layer network.
CASES = [("parity", "scan", 6), ("flipflop_2", "kr", 6), ("gridworld_4", "kr", 6),
         ("symmetric_3", "kr", 5), ("parity", "onelayer", 6)]
WORDS = {"max_exhaustive_words": 64, "random": 0}  # the same words on both sides


def compiled(name, strategy, max_len):
    return krc.compile(krc.load_automaton(os.path.join(ZOO, name + ".json")), strategy=strategy,
                       max_len=max_len)


@pytest.mark.parametrize("name,strategy,max_len", CASES)
@pytest.mark.parametrize("granularity", ["head", "subspace"])
def test_torch_check_agrees_with_the_runtime(name, strategy, max_len, granularity):
    net = compiled(name, strategy, max_len)
    oracle = Oracle.zoo(name)
    circuit = net.circuit(granularity, check=True, **WORDS)
    runtime = net.check_circuit(framework="krc", granularity=granularity, **WORDS)
    assert runtime["framework"] == "krc" and runtime["arithmetic"] == "float64"
    assert runtime["circuit_only"]["wrong"] == 0
    for dtype in ("float32", "float64"):
        report = net.check_circuit(circuit, dtype=dtype, **WORDS)
        assert report["framework"] == "torch" and report["arithmetic"] == dtype
        assert report["ablation"] == "zero" and report["units"] == runtime["units"]
        # The circuit alone: right at every position of krc's words and of every witness word.
        witness_words = [u["witness"]["word"] for u in units_of(circuit) if u.get("necessary")]
        assert report["words"]["witness_words"] == len(witness_words) == runtime["necessary"]
        assert report["circuit_only"] == {
            "positions": runtime["circuit_only"]["positions"] +
            sum(len(w) + 1 for w in witness_words), "wrong": 0}
        # Every witness of the runtime's confirmed; the same redundant units on the same words.
        witnesses = report["witnesses"]
        assert witnesses["claimed"] == witnesses["confirmed"] == runtime["necessary"]
        assert witnesses["failed"] == []
        # The ablated answer itself (a state, or a tie) the same as the runtime's float64 one.
        assert witnesses["same_ablated_answer"] == runtime["necessary"]
        assert report["necessary"] == runtime["necessary"]
        assert sorted(report["redundant"]) == sorted(runtime["redundant"])  # file order, theirs
        for unit, w in report["unit_witnesses"].items():
            expected = oracle.run(w["word"])[w["position"]]
            assert w["expected"] == expected and w["ablated"] != expected, unit


def units_of(circuit):
    for edge in circuit["edges"].values():
        if circuit["granularity"] == "head":
            yield edge
        else:
            yield from edge["through"]


def test_against_the_automatons_own_json_on_random_words():
    """check_circuit_torch with tests/python/oracle.py's automaton as the expected answers,
    searching every unit's witness itself (an unchecked circuit: no witnesses given)."""
    from krc.torch_circuit import check_circuit_torch, tested_words

    net = compiled("cyclic_3", "kr", 8)
    oracle = Oracle.zoo("cyclic_3")
    words, words_json = tested_words(net, 16, 12, 8, 3)
    assert len(words) == 16 + 12 and words_json["exhaustive_length"] == 4
    assert all(len(w) == 8 for w in words[16:])
    report = check_circuit_torch(net.to_torch(), oracle, net.circuit(), "float32", words,
                                 words_json)
    assert report["witnesses"]["claimed"] == 0
    assert report["circuit_only"] == {"positions": 16 * 5 + 12 * 9, "wrong": 0}
    assert report["necessary"] == report["units"] == len(net.circuit()["edges"]) > 0
    for unit, w in report["unit_witnesses"].items():
        assert w["word"] in words and w["ablated"] != oracle.run(w["word"])[w["position"]]
    # One word a batch (the activations' budget at its least): the same report, row by row.
    assert check_circuit_torch(net.to_torch(), oracle, net.circuit(), "float32", words,
                               words_json, max_batch_bytes=1) == report


def test_the_check_fails_where_it_should():
    net = compiled("gridworld_4", "kr", 6)
    circuit = net.circuit(check=True, **WORDS)
    # A necessary edge left out of the circuit: its witness word, among the tested words,
    # goes wrong with everything outside the circuit ablated.
    name = next(n for n, e in circuit["edges"].items() if e["necessary"])
    smaller = json.loads(json.dumps(circuit))
    smaller["edges"][name]["in_graph"] = False
    report = net.check_circuit(smaller, **WORDS)
    assert report["circuit_only"]["wrong"] > 0 and report["units"] == len(circuit["edges"]) - 1
    wrong = report["circuit_only"]["first_wrong"]
    assert wrong["got"] != Oracle.zoo("gridworld_4").run(wrong["word"])[wrong["position"]]
    # A false witness: a unit the runtime found redundant, claimed necessary, is not confirmed.
    redundant = circuit["check"]["redundant"][0]
    false = json.loads(json.dumps(circuit))
    false["edges"][redundant].update(necessary=True, redundant=False,
                                     witness=circuit["edges"][name]["witness"])
    report = net.check_circuit(false, **WORDS)
    assert report["witnesses"]["failed"] == [redundant] and redundant in report["redundant"]
    assert report["circuit_only"]["wrong"] == 0
    # A witness whose expected state is not the automaton's is not confirmed either.
    wrong_state = json.loads(json.dumps(circuit))
    w = wrong_state["edges"][name]["witness"]
    w["expected"] = next(s for s in net.states if s != w["expected"])
    report = net.check_circuit(wrong_state, **WORDS)
    assert report["witnesses"]["failed"] == [name] and name in report["unit_witnesses"]


def test_bad_requests_are_refused():
    net = compiled("parity", "scan", 4)
    circuit = net.circuit()
    with pytest.raises(krc.InputError, match="resample"):
        net.check_circuit(dict(circuit, ablation="resample"))
    with pytest.raises(krc.InputError, match="framework"):
        net.check_circuit(framework="jax")
    with pytest.raises(krc.InputError, match="bfloat16"):
        net.check_circuit(dtype="bfloat16")
    with pytest.raises(krc.InputError, match="runtime"):
        net.check_circuit(circuit, framework="krc")
    bad = dict(circuit, edges={"input->a9.h0<q>": {"from": "input", "to": "a9.h0", "qkv": "q",
                                                   "in_graph": True}})
    with pytest.raises(krc.InputError, match="a9.h0"):
        net.check_circuit(bad)
    with pytest.raises(krc.InputError, match="granularity"):
        net.check_circuit(dict(circuit, granularity="neuron"))
    with pytest.raises(TypeError):
        net.check_circuit(random="many")
    checked = net.circuit(check=True, max_exhaustive_words=8, random=0)
    name = next(iter(checked["edges"]))
    for witness in ({"word": "0 1", "position": 0}, {"word": ["0"], "position": 2},
                    {"word": ["0"] * 5, "position": 0}, {"word": ["x"], "position": 0}):
        bad = json.loads(json.dumps(checked))
        bad["edges"][name].update(necessary=True, witness=witness)
        with pytest.raises(krc.InputError):
            net.check_circuit(bad, max_exhaustive_words=8, random=0)
    with pytest.raises(TypeError, match="dict"):
        net.check_circuit([circuit])
    with pytest.raises(krc.InputError, match="edge"):
        net.check_circuit(dict(circuit, edges={"input->logits": ["input", "logits"]}))
    from krc.torch_circuit import CircuitAblation, circuit_units
    with pytest.raises(krc.InputError, match="dense"):
        CircuitAblation(net.to_torch(sparse=True), circuit_units(circuit)[0])
