"""`krc suite` and krc.suite (issue 35, item 5): both doors write the same bytes; the manifest
loads in a loop, every row's GPT-2 checkpoint in the real `transformers` (float32, eager
attention, CPU) and in TransformerLens 4's TransformerBridge answering the automaton's state at
every position of random words (the oracle: the automaton's own JSON, run by
tests/python/oracle.py, never krc), every verify report says pass and every circuit file names
every head its weights file holds (read with `safetensors`, not krc); a member that fails, a
target that is not a directory and a suite over its bounds leave nothing behind (exit status
2)."""

import json
import os
import subprocess

import pytest

import krc
from conftest import ZOO
from frameworks_support import krc_binary
from oracle import Oracle

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safe_open = pytest.importorskip("safetensors").safe_open

MEMBERS = [os.path.join(ZOO, n + ".json") for n in ("parity", "cyclic_3", "flipflop_2")]
OPTIONS = {"strategies": ["kr", "scan"], "max_len": 12, "random": 8}


def cli_suite(*args):
    return subprocess.run([krc_binary(), "suite", *map(str, args)], capture_output=True,
                          text=True)


def files_of(directory):
    """{relative path: bytes} of every file under `directory`."""
    out = {}
    for root, _, names in os.walk(directory):
        for n in names:
            path = os.path.join(root, n)
            out[os.path.relpath(path, directory)] = open(path, "rb").read()
    return out


def leftovers(parent):
    return [n for n in os.listdir(parent) if n.startswith(".krc-tmp")]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The suite built by each door: (command line's directory, Python's, Python's manifest)."""
    if krc_binary() is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    d = tmp_path_factory.mktemp("suite")
    r = cli_suite("--set", "none", *MEMBERS, "--strategies", ",".join(OPTIONS["strategies"]),
                  "--max-len", OPTIONS["max_len"], "--random", OPTIONS["random"], "-o",
                  d / "cli")
    assert r.returncode == 0, r.stderr
    seen = []
    manifest = krc.suite(d / "py", files=MEMBERS, set="none", progress=seen.append, **OPTIONS)
    # Progress after every model, the estimate gone to 0 at the end.
    assert [p["done"] for p in seen] == list(range(1, 7)) and seen[-1]["total"] == 6
    assert seen[-1]["seconds_left"] == 0 and "6 of 6 models" in seen[-1]["line"]
    return d / "cli", d / "py", manifest


@pytest.mark.frameworks
def test_both_doors_write_the_same_bytes(built):
    cli, py, manifest = built
    a, b = files_of(cli), files_of(py)
    assert sorted(a) == sorted(b)
    assert a == b
    assert json.loads(a["manifest.json"]) == manifest
    assert leftovers(cli.parent) == []


def heads_of(weights):
    """The heads a krc weights file holds, as the circuit names them (a{L}.h{H}), from its
    tensors' shapes (dense, or the dense shape the "sparse" metadata gives), read by the
    safetensors package."""
    with safe_open(str(weights), "np") as f:
        metadata = f.metadata()
        sparse = json.loads(metadata.get("sparse", "{}"))
        names = set()
        for key in f.keys():
            if not key.startswith("layers.") or ".attn.q" not in key:
                continue
            base = key.split(".attn.q")[0] + ".attn.q"
            shape = sparse[base] if base in sparse else f.get_slice(key).get_shape()
            if isinstance(shape, dict):
                shape = shape["shape"]
            layer = int(key.split(".")[1])
            names |= {"a%d.h%d" % (layer, h) for h in range(shape[0])}
        return names


@pytest.mark.frameworks
def test_the_manifest_loads_in_a_loop(built):
    """Every row: the GPT-2 checkpoint right at every position of random words in transformers;
    verify.json passed; circuit.json names every head of the weights file."""
    directory = built[0]
    manifest = json.loads((directory / "manifest.json").read_text())
    assert len(manifest["models"]) == 6
    assert {(r["automaton"], r["strategy"], r["norm"]) for r in manifest["models"]} == {
        (a, s, "layernorm") for a in ("parity", "cyclic_3", "flipflop_2") for s in ("kr", "scan")}
    checkpoints = 0
    for row in manifest["models"]:
        paths = row["paths"]
        assert json.loads((directory / paths["verify"]).read_text())["ok"] is True
        assert row["verify"]["ok"] and row["verify"]["positions"] > 0
        circuit = json.loads((directory / paths["circuit"]).read_text())
        heads = heads_of(directory / paths["weights"])
        assert heads and heads <= set(circuit["nodes"]), (row["model"], heads)
        assert row["layers"] > max(int(h[1:].split(".")[0]) for h in heads)
        oracle = Oracle.of_json(row["source"])
        if paths["gpt2"] is None:
            assert row["missing"]["gpt2"], row  # the reason
            continue
        checkpoints += 1
        assert "float32" in row["gpt2_formats"]
        model = transformers.AutoModelForCausalLM.from_pretrained(
            directory / paths["gpt2"], attn_implementation="eager", torch_dtype=torch.float32)
        model.eval()
        vocab = json.loads((directory / paths["gpt2"] / "krc_vocab.json").read_text())
        by_id = {i: s for s, i in vocab["states"].items()}
        for word in oracle.words(seed=len(row["model"]), count=6, longest=row["max_len"],
                                 short=row["max_len"]):
            ids = torch.tensor([[vocab["bos"]] + [vocab["letters"][a] for a in word]])
            with torch.no_grad():
                answer = model(ids).logits[0].argmax(-1).tolist()
            assert [by_id.get(i) for i in answer] == oracle.run(word), (row["model"], word)
    assert checkpoints >= 4  # the scan networks at least (compiler/README.md §7)


@pytest.mark.frameworks
def test_every_checkpoint_loads_in_transformer_lens(built):
    """Every row's GPT-2 checkpoint booted as a TransformerLens 4 TransformerBridge (its own
    LayerNorm, CPU): the state's logit the argmax at every position of random words, against
    the automaton; the cache holds a hook of every layer's attention."""
    bridge_module = pytest.importorskip("transformer_lens.model_bridge")
    directory = built[0]
    manifest = json.loads((directory / "manifest.json").read_text())
    booted = 0
    for row in manifest["models"]:
        if row["paths"]["gpt2"] is None:
            continue
        path = directory / row["paths"]["gpt2"]
        bridge = bridge_module.TransformerBridge.boot_transformers(str(path), device="cpu")
        vocab = json.loads((path / "krc_vocab.json").read_text())
        by_id = {i: s for s, i in vocab["states"].items()}
        oracle = Oracle.of_json(row["source"])
        words = oracle.words(seed=7, count=4, longest=row["max_len"], short=row["max_len"])
        longest = max(len(w) for w in words)
        # Padded with <bos> after the word: causal attention leaves its positions alone.
        ids = torch.tensor([[vocab["bos"]] + [vocab["letters"][a] for a in w] +
                            [vocab["bos"]] * (longest - len(w)) for w in words])
        with torch.no_grad():
            logits, cache = bridge.run_with_cache(ids)
        for word, answer in zip(words, logits.argmax(-1).tolist()):
            assert [by_id.get(i) for i in answer[:len(word) + 1]] == oracle.run(word), \
                (row["model"], word)
        assert all("blocks.%d.hook_attn_out" % i in cache for i in range(row["layers"]))
        booted += 1
    assert booted >= 4  # the scan networks at least, as in transformers


@pytest.mark.frameworks
def test_a_failing_member_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    out = tmp_path / "out"
    r = cli_suite("--set", "none", MEMBERS[0], bad, "--max-len", 8, "-o", out)
    assert r.returncode == 2 and "bad.json" in r.stderr, r.stderr
    with pytest.raises(krc.InputError, match="bad.json"):
        krc.suite(out, files=[MEMBERS[0], bad], set="none", max_len=8)
    with pytest.raises(krc.InputError, match="bad.json"):  # one path alone is a list of one
        krc.suite(out, files=bad, set="none", max_len=8)
    # A strategy that refuses a member fails the suite too.
    r = cli_suite("--set", "none", MEMBERS[2], "--strategies", "onelayer", "--max-len", 64,
                  "-o", out)
    assert r.returncode == 2 and "flipflop_2.onelayer.layernorm: onelayer:" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.json"]


@pytest.mark.frameworks
def test_targets_and_bounds_are_refused_before_the_work(tmp_path):
    target = tmp_path / "suite"
    target.write_text("mine")
    r = cli_suite("-o", target)
    assert r.returncode == 2 and "not a directory" in r.stderr, r.stderr
    with pytest.raises(krc.InputError, match="not a directory"):
        krc.suite(target)
    assert target.read_text() == "mine"
    # A directory krc did not write is refused too, and kept.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    r = cli_suite("--set", "none", MEMBERS[0], "--max-len", 4, "--random", 1, "-o",
                  tmp_path / "other")
    assert r.returncode == 2 and "notes.txt" in r.stderr, r.stderr
    assert os.listdir(tmp_path / "other") == ["notes.txt"]
    # 4 automata x 2 strategies x 1 norm: 8 models, over --max-models 7.
    r = cli_suite("--max-models", 7, "-o", tmp_path / "big")
    assert r.returncode == 2 and "8 models, more than --max-models 7" in r.stderr, r.stderr
    with pytest.raises(krc.LimitError, match="8 models, more than max_models 7"):
        krc.suite(tmp_path / "big", max_models=7)
    with pytest.raises(ValueError, match='strategies "deep"'):
        krc.suite(tmp_path / "big", strategies=["deep"])
    with pytest.raises(ValueError, match="max_models 1001 is not in"):
        krc.suite(tmp_path / "big", max_models=1001)
    r = cli_suite("--set", "none", "-o", tmp_path / "big")
    assert r.returncode == 2 and "the suite would be empty" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["other", "suite"]


@pytest.mark.frameworks
def test_json_summary_holds_the_manifest_written(tmp_path):
    r = cli_suite("--set", "none", MEMBERS[0], "--strategies", "scan", "--max-len", 4,
                  "--random", 1, "--json", "-o", tmp_path / "one")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["models"] == 1 and summary["output"] == str(tmp_path / "one")
    assert summary["manifest"] == json.loads((tmp_path / "one" / "manifest.json").read_text())
    assert summary["bytes"] == sum(len(b) for b in files_of(tmp_path / "one").values())
