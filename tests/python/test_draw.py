"""`krc draw` and Network.draw: pictures of a network and of its attention, laid out by the
Graphviz library. Oracles: the SVG is parsed by Python's xml.etree and the PNG's header read
here; the boxes expected are named from the weights file's own metadata (config's heads and MLP
blocks, residual_subspaces), read by tools/reference_forward.py's reader, never by krc; the
attention weights are recomputed by a numpy forward written here from runtime/README.md, and the
states the picture names are the automaton's (oracle.py)."""
import json
import os
import re
import struct
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import krc
from conftest import ZOO, Oracle

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
# (zoo file, strategy, max_len): the gridworld walk, a symmetric group's cascade, a scan.
CASES = [("gridworld_9", "kr", 8), ("symmetric_4", "kr", 6), ("parity", "scan", 8)]


def krc_binary():
    from frameworks_support import krc_binary as find
    binary = find()
    if binary is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    return binary


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "%s_%s" % c[:2])
def network(request, tmp_path_factory):
    name, strategy, max_len = request.param
    net = krc.compile(krc.load_automaton(os.path.join(ZOO, name + ".json")), strategy=strategy,
                      max_len=max_len)
    path = str(tmp_path_factory.mktemp("draw") / ("%s_%s.safetensors" % (name, strategy)))
    net.save(path)
    return name, net, path


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    net = krc.compile(krc.load_automaton(os.path.join(ZOO, "parity.json")), strategy="scan",
                      max_len=8)
    path = str(tmp_path_factory.mktemp("draw") / "parity_scan.safetensors")
    net.save(path)
    return "parity", net, path


def metadata(path, reference_forward):
    tensors, meta = reference_forward.load(path, np.float64)
    return tensors, json.loads(meta["config"]), json.loads(meta["residual_subspaces"])


def texts(element):
    """Every <text> line under `element`, joined by newlines."""
    return "\n".join("".join(t.itertext()) for t in element.iter(SVG + "text"))


def nodes(root):
    """The Graphviz nodes of an SVG: {title: <g> element}."""
    return {g.find(SVG + "title").text: g for g in root.iter(SVG + "g")
            if g.get("class") == "node"}


def test_network_picture_names_every_head_block_and_subspace(network, tmp_path,
                                                             reference_forward):
    name, net, path = network
    _, config, subspaces = metadata(path, reference_forward)
    out = tmp_path / "net.svg"
    r = subprocess.run([krc_binary(), "draw", path, "-o", str(out)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert len(data) > 20_000
    root = ET.fromstring(data)
    assert root.tag == SVG + "svg"
    width, height = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    assert 200 < width < 20_000 and 100 < height < 20_000
    drawn = nodes(root)
    for layer, spec in enumerate(config["layers"]):
        for h, head in enumerate(spec["heads"]):
            box = "a%d.h%d" % (layer, h)
            assert box in drawn, box
            label = texts(drawn[box])
            # The box says which head it is and its typed role, as the file records them.
            assert box in label and head["role"]["kind"] in label, (box, label)
            assert head["kind"] in label
            if head["role"].get("level"):
                assert "level %d" % head["role"]["level"] in label
        if spec["mlp_hidden"] is not None:
            box = "m%d" % layer
            assert box in drawn, box
            label = texts(drawn[box])
            assert "%d hidden" % spec["mlp_hidden"] in label
            for block in spec["mlp_blocks"][:12]:
                assert block["role"]["kind"] in label, (box, block)
    # Every residual subspace is a lane, named in the first column of lanes.
    lanes = texts(drawn["s0"])
    for sub in subspaces:
        assert sub["name"] in lanes, sub["name"]
    # The same bytes from the Python door.
    again = tmp_path / "again.svg"
    net.draw(again)
    assert again.read_bytes() == data


def test_png_and_dot(tmp_path, parity):
    name, net, path = parity
    png = tmp_path / "net.png"
    net.draw(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert 300 < width < 20_000 and 100 < height < 20_000
    dot = tmp_path / "net.dot"
    r = subprocess.run([krc_binary(), "draw", path, "-o", str(dot)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = dot.read_text()
    assert text.startswith("digraph krc {") and '"a2.h0"' in text and text.rstrip().endswith("}")


def numpy_attention(tensors, config, tokens):
    """Every head's attention weights [n, n] (README's forward in float64; hard: select heads
    take the argmax of their scores, ties to the latest position)."""
    n = len(tokens)
    x = tensors["embed.token"][tokens] + tensors["embed.position"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    kind = config["attention"]["kind"]
    assert kind in ("softmax", "hard")
    patterns = []
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        delta = np.zeros_like(x)
        for h, head in enumerate(layer["heads"]):
            q, k, v = (x @ tensors[p + "attn." + m][h] for m in "qkv")
            s = np.where(causal, config["attention"]["scale"] * (q @ k.T), -np.inf)
            if kind == "hard" and head["kind"] == "select":
                w = np.eye(n)[n - 1 - np.argmax(s[:, ::-1], axis=1)]
            else:
                w = np.exp(s - s.max(axis=1, keepdims=True))
                w /= w.sum(axis=1, keepdims=True)
            patterns.append(w)
            delta += (w @ v) @ tensors[p + "attn.o"][h]
        x = x + delta
        if layer["mlp_hidden"] is not None:
            hidden = np.maximum(x @ tensors[p + "mlp.in.weight"].T + tensors[p + "mlp.in.bias"], 0)
            x = x + hidden @ tensors[p + "mlp.out.weight"].T + tensors[p + "mlp.out.bias"]
    return patterns


def test_attention_picture_is_the_networks_attention(network, tmp_path, reference_forward):
    name, net, path = network
    tensors, config, _ = metadata(path, reference_forward)
    oracle = Oracle.of_file(path)
    word = (oracle.letters * 3)[:5]
    out = tmp_path / "att.svg"
    r = subprocess.run([krc_binary(), "draw", path, "--attention", "--word", " ".join(word),
                        "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    root = ET.fromstring(out.read_bytes())
    drawn = nodes(root)
    # The picture's own weights: one tooltip per cell, "a0.h1 q=2 k=1 w=0.5".
    cells = {}
    for a in root.iter(SVG + "a"):
        m = re.fullmatch(r"(a\d+\.h\d+) q=(\d+) k=(\d+) w=(\S+)", a.get(XLINK + "title") or "")
        if m:
            cells[(m[1], int(m[2]), int(m[3]))] = float(m[4])
    tokens = [0] + [config["vocabulary"].index(letter) for letter in word]
    expected = numpy_attention(tensors, config, tokens)
    n = len(tokens)
    heads = [(layer, h) for layer, spec in enumerate(config["layers"])
             for h in range(len(spec["heads"]))]
    assert len(expected) == len(heads) > 0
    for (layer, h), w in zip(heads, expected):
        box = "a%d.h%d" % (layer, h)
        assert box in drawn and config["layers"][layer]["heads"][h]["role"]["kind"] in \
            texts(drawn[box])
        for t in range(n):
            for j in range(n):
                assert cells[(box, t, j)] == pytest.approx(w[t, j], abs=1e-9), (box, t, j)
    # The states the picture's pass names are the automaton's.
    title = texts(root)
    assert "states after each prefix: " + " ".join(oracle.run(word)) in title
    # The Python door: the same bytes.
    again = tmp_path / "again.svg"
    net.draw(again, word=word, attention=True)
    assert again.read_bytes() == out.read_bytes()


def test_bad_requests_are_refused(parity, tmp_path):
    name, net, path = parity
    binary = krc_binary()
    os.symlink(path, tmp_path / "weights.svg")  # a picture over its own weights file
    for args, words in [(["-o", str(tmp_path / "x.jpg")], ".svg, .png or .dot"),
                        (["--attention", "-o", str(tmp_path / "x.svg")], "--word"),
                        (["--word", "1 0", "-o", str(tmp_path / "x.svg")], "--attention"),
                        (["--attention", "--word", "1 2", "-o", str(tmp_path / "x.svg")], "2"),
                        (["--attention", "--word", "1 " * 9, "-o", str(tmp_path / "x.svg")],
                         "max_len"),
                        (["-o", str(tmp_path / "weights.svg")], "input")]:
        r = subprocess.run([binary, "draw", path] + args, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
    assert not (tmp_path / "x.svg").exists()
    with pytest.raises(krc.InputError):
        net.draw(tmp_path / "x.gif")
    with pytest.raises(krc.InputError):
        net.draw(tmp_path / "x.svg", attention=True)
    with pytest.raises(krc.InputError):
        krc.load(path).draw(tmp_path / "weights.svg")  # over its own weights file
    assert os.path.islink(tmp_path / "weights.svg")


def test_decomposition_levels_picture(tmp_path):
    """`krc decompose --draw` and Decomposition.draw: the same bytes, and the SVG (parsed by
    xml.etree) names every level and component of `krc decompose --format json`'s report."""
    binary = krc_binary()
    for name in ["flipflop_2", "symmetric_3", "gridworld_4"]:
        source = os.path.join(ZOO, name + ".json")
        svg = tmp_path / (name + ".svg")
        r = subprocess.run([binary, "decompose", source, "-q", "--draw", "-o", str(svg)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([binary, "decompose", source, "-q", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        lines = texts(ET.parse(svg).getroot()).split("\n")
        assert report["levels"]
        for level in report["levels"]:
            assert "level %d: %d states%s" % (level["level"], level["states"],
                                              " (with the dummy)" if level["dummy"] else "") \
                in lines, (name, level)
            for c in level["components"]:
                group = c["group"]
                assert (str(c["tiles"]) if group["order"] == 1
                        else "(%d,%s)" % (c["tiles"], group["name"])) in lines, (name, c)
                assert "class %d, %d tiles" % (c["class"], c["tiles"]) in lines
                assert "representative {%s}" % ", ".join(c["representative"]) in lines
                assert any(line.startswith("group %s, order %d" % (group["name"], group["order"]))
                           for line in lines)
        python_svg = tmp_path / (name + "_python.svg")
        krc.decompose(krc.load_automaton(source)).draw(python_svg)
        assert python_svg.read_bytes() == svg.read_bytes()
    for args, words in [(["--draw"], "-o"), (["--draw", "-o", str(tmp_path / "x.jpg")], ".svg"),
                        (["--draw", "--format", "json", "-o", str(tmp_path / "x.svg")],
                         "--format")]:
        r = subprocess.run([binary, "decompose", source, "-q"] + args, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
    with pytest.raises(krc.InputError):
        krc.decompose(krc.load_automaton(source)).draw(tmp_path / "x.gif")
