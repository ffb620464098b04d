"""Network.circuit and `krc circuit`: the circuit file (MIB's circuit JSON with krc's roles) and
its ablation check. Oracles: the automaton read by tests/python/oracle.py, and an ablation
forward in numpy written here from runtime/README.md ("What the weights compute" and "The
circuit file") on the weights read by tools/reference_forward.py's reader, never krc's: the
circuit alone must be right there too, every necessary unit's witness word must change there,
and the file must pass a reimplementation of MIB's schema (EAP-IG's Graph.from_model/from_json)."""
import itertools
import json
import os
import re
import subprocess
import warnings

import numpy as np
import pytest

import krc
from conftest import REPO, ZOO, Oracle

# (zoo file, strategy, max_len): a scan, kr with a memory unit, a Z_3 counter, the gridworld
# walk and a symmetric group, and a one-layer network.
CASES = [("parity", "scan", 6), ("flipflop_2", "kr", 6), ("cyclic_3", "kr", 6),
         ("gridworld_4", "kr", 6), ("symmetric_3", "kr", 5), ("parity", "onelayer", 6)]


def compiled(tmp_path, name, strategy, max_len):
    net = krc.compile(krc.load_automaton(os.path.join(ZOO, name + ".json")), strategy=strategy,
                      max_len=max_len)
    path = str(tmp_path / ("%s_%s.safetensors" % (name, strategy)))
    net.save(path)
    return net, path


class NumpyAblation:
    """README's forward in float64, every reader's input rebuilt from the circuit's units: a
    head's q, k, v input and an MLP's or the logits' input is the sum of the outputs of the
    writers with a unit into it, each on the unit's dimensions (all of them at head
    granularity); `skip` leaves one unit out."""

    def __init__(self, path, reference_forward):
        self.t, meta = reference_forward.load(path, np.float64)
        self.config = json.loads(meta["config"])

    def run(self, units, tokens, skip=None):
        return self.run_outputs(units, tokens, skip)["logits"]

    def run_outputs(self, units, tokens, skip=None):
        """Every writer's output [n, d_model] by node name, and "logits"."""
        t, config = self.t, self.config
        n = len(tokens)
        d = config["d_model"]
        out = {"input": t["embed.token"][tokens] + t["embed.position"][:n]}

        def read(reader):
            x = np.zeros((n, d))
            for key, (writer, dims) in units.get(reader, {}).items():
                if key == skip:
                    continue
                x[:, dims] += out[writer][:, dims]
            return x

        causal = np.tril(np.ones((n, n), dtype=bool))
        hard = config["attention"]["kind"] == "hard"
        for i, layer in enumerate(config["layers"]):
            p = "layers.%d." % i
            for h, head in enumerate(layer["heads"]):
                node = "a%d.h%d" % (i, h)
                q, k, v = (read((node, m)) @ t[p + "attn." + m][h] for m in "qkv")
                s = np.where(causal, config["attention"]["scale"] * (q @ k.T), -np.inf)
                if hard and head["kind"] == "select":
                    w = np.eye(n)[n - 1 - np.argmax(s[:, ::-1], axis=1)]
                else:
                    w = np.exp(s - s.max(axis=1, keepdims=True))
                    w /= w.sum(axis=1, keepdims=True)
                out[node] = (w @ v) @ t[p + "attn.o"][h]
            if layer["mlp_hidden"] is not None:
                x = read(("m%d" % i, None))
                hidden = np.maximum(x @ t[p + "mlp.in.weight"].T + t[p + "mlp.in.bias"], 0)
                out["m%d" % i] = hidden @ t[p + "mlp.out.weight"].T + t[p + "mlp.out.bias"]
        out["logits"] = read(("logits", None)) @ t["unembed"]
        return out


def units_of(circuit, d_model):
    """reader (node, q/k/v or None) -> {unit key: (writer, dims)} from the file alone."""
    units = {}
    for name, edge in circuit["edges"].items():
        reader = (edge["to"], edge.get("qkv"))
        if circuit["granularity"] == "head":
            units.setdefault(reader, {})[name] = (edge["from"], np.arange(d_model))
        else:
            for i, through in enumerate(edge["through"]):
                units.setdefault(reader, {})[(name, i)] = (edge["from"], np.array(through["dims"]))
    return units


def each_unit(circuit):
    for name, edge in circuit["edges"].items():
        if circuit["granularity"] == "head":
            yield name, edge
        else:
            for i, through in enumerate(edge["through"]):
                yield (name, i), through


def states(logits, oracle):
    """The argmax state per position, None on a tie."""
    out = []
    for row in logits:
        best = np.flatnonzero(row == row.max())
        out.append(oracle.states[best[0]] if len(best) == 1 else None)
    return out


def tokens_of(oracle, word):
    return [0] + [oracle.letters.index(a) + 1 for a in word]


def mib_schema_check(circuit):
    """MIB's reader (EAP-IG's Graph.from_model, then from_json) reimplemented: every node named
    in the grid that cfg spans, every edge name parent->child<qkv> one the grid holds, with a
    float score and a bool in_graph."""
    cfg = circuit["cfg"]
    for key in ("n_layers", "n_heads", "d_model", "parallel_attn_mlp"):
        assert key in cfg
    assert not cfg["parallel_attn_mlp"]
    L, H = cfg["n_layers"], cfg["n_heads"]
    order = {"input": (-1, 0)}
    for layer in range(L):
        for h in range(H):
            order["a%d.h%d" % (layer, h)] = (layer, 0)
        order["m%d" % layer] = (layer, 1)
    order["logits"] = (L, 0)
    for name, node in circuit["nodes"].items():
        assert name in order, name
        assert isinstance(node["in_graph"], bool)
        assert "score" not in node or isinstance(node["score"], float)
    pattern = re.compile(r"^(input|a\d+\.h\d+|m\d+)->(a\d+\.h\d+|m\d+|logits)(<([qkv])>)?$")
    for name, edge in circuit["edges"].items():
        m = pattern.match(name)
        assert m, name
        parent, child, qkv = m.group(1), m.group(2), m.group(4)
        assert parent in order and child in order, name
        assert (qkv is not None) == child.startswith("a"), name
        # from_model's edges: every earlier node; a layer's heads feed its MLP, not each other.
        assert order[parent] < order[child] or parent == "input", name
        assert isinstance(edge["score"], float) and isinstance(edge["in_graph"], bool)


@pytest.mark.parametrize("name,strategy,max_len", CASES)
def test_circuit_is_checked_in_krc_and_numpy(tmp_path, reference_forward, name, strategy,
                                             max_len):
    net, path = compiled(tmp_path, name, strategy, max_len)
    oracle = Oracle.of_file(path)
    forward = NumpyAblation(path, reference_forward)
    for granularity in ("head", "subspace"):
        circuit = net.circuit(granularity=granularity, check=True, max_exhaustive_words=64,
                              random=4)
        mib_schema_check(circuit)
        assert circuit["granularity"] == granularity and circuit["ablation"] == "zero"
        check = circuit["check"]
        assert check["circuit_only"]["wrong"] == 0, check["circuit_only"]
        assert check["circuit_only"]["positions"] > 0
        # Every head and MLP block of the network is a node, with its typed role.
        for i, layer in enumerate(net.layers):
            for h, head in enumerate(layer.heads):
                node = circuit["nodes"]["a%d.h%d" % (i, h)]
                assert node["role"]["kind"] == head.role.kind and node["name"] == head.name
            if layer.mlp is not None:
                assert [b["name"] for b in circuit["nodes"]["m%d" % i]["blocks"]] == \
                    [b.name for b in layer.mlp.blocks]

        units = units_of(circuit, net.d_model)
        rng = np.random.default_rng(7)
        words = [[oracle.letters[j] for j in rng.integers(len(oracle.letters), size=max_len)]
                 for _ in range(6)]
        # The circuit alone, in numpy: right at every position against the automaton.
        for word in words:
            assert states(forward.run(units, tokens_of(oracle, word)), oracle) == oracle.run(word)
        length = check["words"]["exhaustive_length"]
        exhaustive = [[oracle.letters[j] for j in js]
                      for js in itertools.product(range(len(oracle.letters)), repeat=length)]
        redundant = 0
        for key, unit in each_unit(circuit):
            if unit["redundant"]:
                assert not unit["necessary"] and "witness" not in unit
                # Redundant in numpy too: ablated alone, every exhaustive word stays right.
                for word in exhaustive:
                    got = states(forward.run(units, tokens_of(oracle, word), skip=key), oracle)
                    assert got == oracle.run(word), (key, word)
                redundant += 1
                continue
            # The witness, in numpy: that unit alone ablated changes the answer there.
            w = unit["witness"]
            expected = oracle.run(w["word"])[w["position"]]
            assert w["expected"] == expected
            got = states(forward.run(units, tokens_of(oracle, w["word"]), skip=key), oracle)
            assert got[w["position"]] != expected, (key, w)
        assert len(check["redundant"]) == redundant
        assert check["necessary"] + redundant == check["units"]


def test_subspace_granularity_splits_edges_by_subspace(tmp_path):
    net, _ = compiled(tmp_path, "flipflop_2", "kr", 6)
    head = net.circuit()
    sub = net.circuit(granularity="subspace")
    assert head["edges"].keys() == sub["edges"].keys()
    names = {s.name for s in net.subspaces}
    units = 0
    for name, edge in sub["edges"].items():
        through = edge["through"]
        assert [t["subspace"] for t in through] == edge["subspaces"] == head["edges"][name]["subspaces"]
        assert sum(len(t["dims"]) for t in through) == edge["dims"]
        for t in through:
            assert t["subspace"] in names
            s = next(s for s in net.subspaces if s.name == t["subspace"])
            assert all(s.first <= d < s.first + s.width for d in t["dims"])
        units += len(through)
    assert sub["units"] == units > head["units"] == len(head["edges"])


def test_cli_writes_the_same_circuit_and_refuses_bad_requests(tmp_path):
    # As frameworks_support.krc_binary finds it, without importing torch.
    binary = os.environ.get("KRC_BINARY") or os.path.join(REPO, "build", "krc")
    if not os.access(binary, os.X_OK):
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    net, path = compiled(tmp_path, "cyclic_3", "kr", 6)
    out = tmp_path / "circuit.json"
    r = subprocess.run([binary, "circuit", path, "-o", str(out), "--check",
                        "--exhaustive-words", "64", "--random", "4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "right at" in r.stdout
    assert json.loads(out.read_text()) == net.circuit(check=True, max_exhaustive_words=64,
                                                      random=4)
    bad = subprocess.run([binary, "circuit", path, "--granularity", "neuron"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    with pytest.raises(krc.InputError):
        net.circuit(granularity="neuron")


def test_gpt2_export_circuit_names_nnsight_and_transformer_lens(tmp_path, reference_forward):
    """The checkpoint's krc_circuit.json through nnsight (0.8) on the stock GPT2LMHeadModel:
    each head's output read at the module and columns the file names equals the numpy
    forward's head output, and zeroing one head's columns there (a patch) gives the states
    the numpy forward gives with that head's output removed from every reader. The bridge's
    hook names the file gives all exist in a TransformerLens 4 TransformerBridge of it."""
    nnsight = pytest.importorskip("nnsight")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    net, path = compiled(tmp_path, "cyclic_3", "kr", 6)
    with warnings.catch_warnings():  # whether a counter's softmax is provably exact: not here
        warnings.simplefilter("ignore", RuntimeWarning)
        directory = net.to_hf(tmp_path / "hf", allow_inexact=True)
    circuit = json.loads(open(os.path.join(directory, "krc_circuit.json")).read())
    assert {k: v for k, v in circuit.items() if k != "gpt2"} == net.circuit()
    where = circuit["gpt2"]["nodes"]
    heads = [n for n in circuit["nodes"] if n.startswith("a")]
    assert heads and set(heads) <= set(where)
    d = net.d_model

    oracle = Oracle.of_file(path)
    forward = NumpyAblation(path, reference_forward)
    units = units_of(circuit, d)
    hf = transformers.AutoModelForCausalLM.from_pretrained(directory,
                                                           attn_implementation="eager")
    model = nnsight.NNsight(hf)
    word = ["1", "1", "0", "1", "1", "1"]
    tokens = tokens_of(oracle, word)
    ids = torch.tensor([tokens])

    def module(name):
        m = model
        for part in name.split("."):
            m = m[int(part)] if part.isdigit() else getattr(m, part)
        return m

    for head in heads:
        first, last = where[head]["nnsight"]["columns"]
        proj = module(where[head]["nnsight"]["output"])
        with torch.no_grad(), model.trace(ids):
            z = proj.input.save()
        weight = hf.get_submodule(where[head]["nnsight"]["output"]).weight.detach().numpy()
        written = z.detach().numpy()[0, :, first:last] @ weight[first:last, :d]
        reference = forward.run_outputs(units, tokens)[head][:, :d]
        assert np.allclose(written, reference, atol=1e-4 * max(1, np.abs(reference).max())), head

        # The patch: that head's output zeroed in nnsight, and removed from every reader in numpy.
        with torch.no_grad(), model.trace(ids):
            proj.input[:, :, first:last] = 0
            logits = model.lm_head.output.save()
        states_first = circuit["gpt2"]["nodes"]["logits"]["first_state_token"]
        patched = logits.detach().numpy()[0, :, states_first:]
        without = {r: {k: u for k, u in us.items() if u[0] != head} for r, us in units.items()}
        assert states(patched, oracle) == states(forward.run(without, tokens), oracle), head

    bridge_module = pytest.importorskip("transformer_lens.model_bridge")
    bridge = bridge_module.TransformerBridge.boot_transformers(str(directory), device="cpu")
    hooks = set(bridge.hook_dict)
    for node in where.values():
        tl = node["transformer_lens"]
        for name in (tl if isinstance(tl, list) else
                     [v for k, v in tl.items() if k != "head"]):
            assert name in hooks, name
