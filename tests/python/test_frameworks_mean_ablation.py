"""Mean ablation in the circuit check (issue 35): Network.check_circuit(ablation="mean") in krc's
runtime (float64) and in PyTorch (krc.torch_circuit, float32), `krc circuit --check --ablation
mean`, and the same ablation done by TransformerLens 4's own hooks on the bridge.

A unit mean-ablated has its contribution replaced by its writer's output averaged over the
reference words position by position (TransformerLens's `z.mean(0)` over a batch of equal-length
words). Oracles: the automaton's own JSON (tests/python/oracle.py) for every answer; the bridge's
forward with a hook for the ablated logits; and one structural fact: an edge from the input
through subspaces that depend on the position only (bos, constant, position codes, ...) carries
the same value at a position on every word, so its mean is that value and mean-ablating it must
change nothing, while zero-ablating it may. The tests fail if mean ablation were a no-op (a
planted ablation of an in-circuit head must change an answer) or were zero ablation (those
position edges must be necessary only under zero ablation)."""
import itertools
import json
import os
import subprocess

import pytest

import krc
from conftest import ZOO, Oracle

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.frameworks

# The residual roles whose value at a position is the same for every word.
POSITION_ONLY = {"bos", "constant", "position code", "position", "log remaining", "block code",
                 "block start", "log remaining in block", "log remaining blocks"}

# (zoo file, strategy, granularity, exhaustive words, random words): a scan, kr with a memory
# unit, the gridworld walk, a one-layer network; random words from the runtime's generator.
CASES = [("parity", "scan", "head", 64, 4), ("flipflop_2", "kr", "subspace", 64, 4),
         ("gridworld_4", "kr", "head", 16, 2), ("parity", "onelayer", "head", 64, 4)]


def compiled(name, strategy, max_len=6):
    return krc.compile(krc.load_automaton(os.path.join(ZOO, name + ".json")), strategy=strategy,
                       max_len=max_len)


def units_of(circuit):
    """(name, entry) of every unit of the file, named as the check names them."""
    for name, edge in circuit["edges"].items():
        if circuit["granularity"] == "head":
            yield name, edge
        else:
            for t in edge["through"]:
                yield "%s [%s]" % (name, t["subspace"]), t


def position_only(circuit, name, entry):
    """Whether unit `name` runs from the input through position-only subspaces alone."""
    roles = {s["name"]: s["role"]["kind"] for s in circuit["residual_subspaces"]}
    through = entry.get("subspaces") or [entry["subspace"]]
    return name.startswith("input->") and all(roles[s] in POSITION_ONLY for s in through)


@pytest.mark.parametrize("name,strategy,granularity,exhaustive,random", CASES)
def test_mean_ablation_in_krc_and_torch(name, strategy, granularity, exhaustive, random):
    net = compiled(name, strategy)
    oracle = Oracle.zoo(name)
    words = {"max_exhaustive_words": exhaustive, "random": random}
    circuit = net.circuit(granularity, check=True, ablation="mean", **words)
    runtime = circuit["check"]
    assert circuit["ablation"] == runtime["ablation"] == "mean"
    entries = dict(units_of(circuit))
    for dtype in ("float64", "float32"):
        report = net.check_circuit(circuit, granularity=granularity, ablation="mean",
                                   dtype=dtype, **words)
        assert report["ablation"] == "mean" and report["arithmetic"] == dtype
        # Everything outside the circuit mean-ablated: every position right, in both.
        assert runtime["circuit_only"]["wrong"] == report["circuit_only"]["wrong"] == 0
        # The same verdicts on the same words; the runtime's mean witnesses confirmed in
        # float64, and in float32 all but those whose ablated answer was a tie (float32's
        # rounding of the means can break it; the unit then has another witness).
        assert report["words"] == dict(runtime["words"], witness_words=runtime["necessary"])
        assert report["witnesses"]["of_ablation"] == "mean"
        assert report["witnesses"]["claimed"] == runtime["necessary"] == report["necessary"] > 0
        failed = report["witnesses"]["failed"]
        assert failed == [] if dtype == "float64" else \
            all(entries[u]["witness"]["ablated"] == "a tie" for u in failed)
        assert sorted(report["redundant"]) == sorted(runtime["redundant"])
        assert sorted(report["zero_only"]) == sorted(runtime["zero_only"])
        assert report["components"]["redundant"] == runtime["components"]["redundant"]
    # Components: every head and MLP block of the circuit, mean-ablated whole, breaks a position.
    assert runtime["components"]["count"] == report["components"]["count"] > 0
    for side in (runtime["components"], report["components"]):
        assert side["necessary"] == side["count"] and side["redundant"] == side["zero_only"] == []
    for unit, w in list(report["unit_witnesses"].items()) + \
            list(report["zero_only_witnesses"].items()) + \
            list(report["components"]["witnesses"].items()):
        expected = oracle.run(w["word"])[w["position"]]
        assert w["expected"] == expected and w["ablated"] != expected, unit
    # Mean is not zero ablation: the position-only edges change nothing under mean, and zero
    # ablation needs some of them.
    fixed = [u for u, e in entries.items() if position_only(circuit, u, e)]
    assert fixed and set(fixed) <= set(runtime["redundant"])
    assert set(runtime["zero_only"]) & set(fixed)
    for unit in runtime["zero_only"]:
        assert entries[unit]["redundant"] and "witness" not in entries[unit]
        w = entries[unit]["zero_ablation_witness"]
        assert w["ablated"] != oracle.run(w["word"])[w["position"]]
    zero = net.circuit(granularity, check=True, **words)["check"]
    assert set(runtime["zero_only"]) <= set(entries) - set(zero["redundant"])


def test_a_candidate_circuit_under_mean_and_zero_ablation():
    """A circuit-discovery candidate: leaving out a position edge is harmless under mean
    ablation and wrong under zero; leaving out an edge mean ablation needs is wrong under both."""
    net = compiled("parity", "scan")
    words = {"max_exhaustive_words": 64, "random": 0}
    circuit = net.circuit(check=True, ablation="mean", **words)
    position_edge = circuit["check"]["zero_only"][0]
    needed = next(n for n, e in circuit["edges"].items() if e["necessary"])
    for left_out, wrong_under in ((position_edge, {"zero"}), (needed, {"zero", "mean"})):
        candidate = json.loads(json.dumps(circuit))
        candidate["edges"][left_out]["in_graph"] = False
        for ablation in ("zero", "mean"):
            report = net.check_circuit(candidate, ablation=ablation, **words)
            assert (report["circuit_only"]["wrong"] > 0) == (ablation in wrong_under), \
                (left_out, ablation)


def test_transformer_lens_hooks_mean_ablate_as_the_check_does():
    """Each head (hook_z) and MLP block (hook_mlp_out) of the bridge replaced by its mean over
    the batch of all words of one length, by TransformerLens's own forward: the same logits as
    the torch check's ablation of every unit that component writes, and an answer changed
    against the automaton (a planted ablation that a no-op would fail); the bridge's padding
    heads, outside the circuit, mean-ablated together change no logit."""
    pytest.importorskip("transformer_lens.model_bridge")
    from krc.torch_circuit import CircuitAblation, circuit_units, tested_words

    for name, strategy in (("parity", "scan"), ("gridworld_4", "kr")):
        net = compiled(name, strategy)
        oracle = Oracle.zoo(name)
        bridge, model = net.to_transformer_lens(), net.to_torch()
        words, _ = tested_words(net, 64, 0, 0, 1)
        assert len({len(w) for w in words}) == 1  # one length: mean(0) is per position
        tokens = model.tokens(words)
        expected = torch.tensor([[net.states.index(s) for s in oracle.run(w)] for w in words])
        circuit = net.circuit()
        units = circuit_units(circuit)[0]
        ablation = CircuitAblation(model, units)
        ablation.set_means(words, len(words))
        with torch.no_grad():
            clean = bridge(tokens)
        assert torch.equal(clean.argmax(-1), expected)
        components = [n for n, node in circuit["nodes"].items()
                      if node["in_graph"] and n not in ("input", "logits")]
        for node in components:
            if node.startswith("a"):
                layer, head = (int(x) for x in node[1:].split(".h"))
                hook = "blocks.%d.attn.hook_z" % layer

                def mean_of(z, hook, head=head):
                    z = z.clone()
                    z[:, :, head] = z[:, :, head].mean(0, keepdim=True)
                    return z
            else:
                hook = "blocks.%d.hook_mlp_out" % int(node[1:])

                def mean_of(x, hook):
                    return x.mean(0, keepdim=True).expand_as(x)
            with torch.no_grad():
                hooked = bridge.run_with_hooks(tokens, fwd_hooks=[(hook, mean_of)])
            keep = torch.ones(len(units), len(words))
            keep[[i for i, u in enumerate(units) if u[0] == node]] = 0
            assert torch.allclose(hooked, ablation.run(tokens, keep), atol=1e-5), (name, node)
            assert (hooked.argmax(-1) != expected).any(), (name, node)
        padding = [(L, h) for L, heads in enumerate(bridge.heads)
                   for h in range(bridge.cfg.n_heads) if h >= len(heads)]
        hooks = [("blocks.%d.attn.hook_z" % L, lambda z, hook, h=h: torch.cat(
            [z[:, :, :h], z[:, :, h:h + 1].mean(0, keepdim=True).expand_as(z[:, :, h:h + 1]),
             z[:, :, h + 1:]], dim=2)) for L, h in padding]
        if name == "gridworld_4":
            assert padding  # 3 heads in layer 0, 4 in layer 1
        with torch.no_grad():
            assert torch.equal(bridge.run_with_hooks(tokens, fwd_hooks=hooks), clean)


def test_the_torch_check_tests_the_runtimes_words():
    """The words come from krc._core (the runtime's own list), not a second generator: the
    exhaustive part is every word of its length in krc's order (itertools.product), the random
    part the runtime's draws, and every witness word of the runtime's check is among them."""
    from krc.torch_circuit import tested_words

    net = compiled("flipflop_3", "scan", 8)
    words, summary = tested_words(net, 64, 16, 7, 5)
    runtime = net.circuit(check=True, max_exhaustive_words=64, random=16, length=7, seed=5)
    assert summary == runtime["check"]["words"]
    n = summary["exhaustive_words"]
    assert words[:n] == [list(w) for w in itertools.product(net.letters,
                                                            repeat=summary["exhaustive_length"])]
    assert len(words) == n + 16 and all(len(w) == 7 for w in words[n:])
    assert len({tuple(w) for w in words[n:]}) > 8  # drawn, not one word repeated
    witness_words = [e["witness"]["word"] for _, e in units_of(runtime) if e["necessary"]]
    assert any(len(w) == 7 for w in witness_words) and all(w in words for w in witness_words)
    # The two checks on those words: the same verdicts (before, the random words differed).
    report = net.check_circuit(runtime, max_exhaustive_words=64, random=16, length=7, seed=5)
    assert sorted(report["redundant"]) == sorted(runtime["check"]["redundant"])
    assert report["words"] == dict(summary, witness_words=len(witness_words))
    assert tested_words(net, 64, 16, 7, 6)[0][n:] != words[n:]  # the seed is used


def test_reference_words_and_bad_requests():
    net = compiled("parity", "scan")
    words = {"max_exhaustive_words": 16, "random": 0}
    # A named reference set: words of 4 letters, as long as the tested ones.
    reference = [list(w) for w in itertools.product("01", repeat=4)][:12]
    runtime = net.check_circuit(framework="krc", ablation="mean", reference=reference, **words)
    report = net.check_circuit(ablation="mean", reference=reference, **words)
    assert runtime["reference"]["words"] == report["reference"]["words"] == 12
    assert sorted(report["redundant"]) == sorted(runtime["redundant"])
    assert report["witnesses"]["confirmed"] == runtime["necessary"]
    with pytest.raises(krc.InputError, match="reach"):
        net.check_circuit(framework="krc", ablation="mean", reference=[["0"]], **words)
    with pytest.raises(krc.InputError, match="reach"):
        net.check_circuit(net.circuit(), ablation="mean", reference=[["0"]], **words)
    with pytest.raises(krc.InputError, match="ablation"):
        net.check_circuit(ablation="resample")
    with pytest.raises(krc.InputError, match="ablation"):
        net.circuit(check=True, ablation="resample")
    with pytest.raises(krc.InputError, match="mean"):
        net.check_circuit(reference=reference)  # zero ablation has no reference
    with pytest.raises(TypeError):
        net.check_circuit(ablation="mean", reference=["0101"])
    for bad in ([["0"] * 7], [["2"]], []):
        with pytest.raises(krc.InputError):
            net.check_circuit(ablation="mean", reference=bad, **words)
        with pytest.raises(krc.InputError):
            net.circuit(check=True, ablation="mean", reference=bad, **words)


def test_cli_mean_ablation(tmp_path):
    from frameworks_support import krc_binary

    net = compiled("flipflop_2", "kr")
    path = str(tmp_path / "flipflop_2.safetensors")
    net.save(path)
    out = tmp_path / "circuit.json"
    r = subprocess.run([krc_binary(), "circuit", path, "-o", str(out), "--check", "--ablation",
                        "mean", "--exhaustive-words", "64", "--random", "4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "check (mean ablation, float64)" in r.stdout
    written = json.loads(out.read_text())
    assert written == net.circuit(check=True, ablation="mean", max_exhaustive_words=64, random=4)
    for unit in written["check"]["zero_only"]:
        assert "necessary only under zero ablation: " + unit in r.stdout
    # A named reference set, a word a line: the same file as Python's reference=.
    reference = [["read", "w1", "read", "w0", "w0", "read"], ["w0"] * 6, ["w1", "read"]]
    words = tmp_path / "reference.txt"
    words.write_text("\n".join(" ".join(w) for w in reference) + "\n\n")
    r = subprocess.run([krc_binary(), "circuit", path, "-o", str(out), "--check", "--ablation",
                        "mean", "--exhaustive-words", "64", "--random", "0", "--reference",
                        str(words)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    written = json.loads(out.read_text())
    assert written["check"]["reference"]["words"] == 3
    assert written == net.circuit(check=True, ablation="mean", max_exhaustive_words=64, random=0,
                                  reference=reference)
    for args, problem in ((["--ablation", "resample"], "resample"),
                          (["--reference", str(words)], "--reference"),
                          (["--ablation", "mean", "--reference", str(tmp_path / "none")], "none"),
                          (["--ablation", "mean", "--reference", str(out)], "line 1")):
        bad = subprocess.run([krc_binary(), "circuit", path, "--check"] + args,
                             capture_output=True, text=True)
        assert bad.returncode == 2 and problem in bad.stderr, (args, bad.stderr)
    words.write_text("w1\n")  # one letter: no mean at the tested words' later positions
    bad = subprocess.run([krc_binary(), "circuit", path, "--check", "--ablation", "mean",
                          "--reference", str(words)], capture_output=True, text=True)
    assert bad.returncode == 2 and "reach" in bad.stderr
