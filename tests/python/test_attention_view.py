"""Network.attention_patterns and Network.attention_view (CircuitsVis, issue 35). Oracles: the
weights in the attention picture `krc draw --attention` writes, which C++ computes in a dense
float64 pass of its own (tools/draw/attention_drawing.cpp; each cell's weight is in its
tooltip), against the PyTorch float32 patterns here; the head names and roles from the weights
file's metadata, read with the real safetensors package; CircuitsVis's own HTML, whose embedded
properties are parsed back."""
import json
import os
import re
import subprocess
import sys

import pytest

import krc
from conftest import ZOO

torch = pytest.importorskip("torch")
pytest.importorskip("circuitsvis")
safetensors = pytest.importorskip("safetensors")

# (zoo file, strategy, attention, word): the gridworld walk, a cascade with counters and memory
# heads, a scan, and hard attention (select heads one-hot).
CASES = [("gridworld_9", "kr", "softmax", "R R L R R R L"),
         ("flipflop_2", "kr", "softmax", None),
         ("parity", "scan", "softmax", "1 0 1 1 0"),
         ("abab", "kr", "hard", None)]
TITLE = re.compile(r'TITLE="(a\d+\.h\d+) q=(\d+) k=(\d+) w=([^"]+)"')


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "%s_%s_%s" % c[:3])
def case(request, tmp_path_factory):
    name, strategy, attention, word = request.param
    automaton = krc.load_automaton(os.path.join(ZOO, name + ".json"))
    net = krc.compile(automaton, strategy=strategy, max_len=12, attention=attention)
    if word is None:  # the first letters, cycled: every letter read at least once
        letters = automaton.letters
        word = " ".join(letters[i % len(letters)] for i in range(7))
    path = str(tmp_path_factory.mktemp("view") / ("%s.safetensors" % name))
    net.save(path)
    return net, path, word


def drawn_weights(net, word, tmp_path):
    """{(head, q, k): weight} from the attention picture's Graphviz source (C++, float64)."""
    dot = str(tmp_path / "attention.dot")
    net.draw(dot, word=word, attention=True)
    with open(dot, encoding="utf-8") as f:
        return {(h, int(q), int(k)): float(w) for h, q, k, w in TITLE.findall(f.read())}


def test_patterns_match_the_float64_picture(case, tmp_path):
    net, _, word = case
    found = net.attention_patterns(word)
    drawn = drawn_weights(net, word, tmp_path)
    heads, patterns = found["heads"], found["patterns"]
    positions = len(word.split()) + 1
    assert found["tokens"] == ["<bos>"] + word.split()
    assert patterns.shape == (len(heads), positions, positions)
    assert {h for h, _, _ in drawn} == set(heads) and len(heads) > 0
    for i, head in enumerate(heads):
        for q in range(positions):
            for k in range(positions):
                expected = drawn[(head, q, k)]
                assert abs(float(patterns[i, q, k]) - expected) <= 1e-5, (head, q, k)
    # Causal rows of weights: nothing after the query, each row summing to 1.
    assert torch.all(patterns.triu(1) == 0)
    assert torch.allclose(patterns.sum(dim=2), torch.ones(len(heads), positions), atol=1e-5)


def test_names_and_roles_are_the_files(case):
    net, path, word = case
    with safetensors.safe_open(path, "np") as f:
        config = json.loads(f.metadata()["config"])
    expected = ["a%d.h%d" % (layer, h) for layer, entry in enumerate(config["layers"])
                for h in range(len(entry["heads"]))]
    found = net.attention_patterns(word)
    assert found["heads"] == expected
    kinds = [head["kind"] for entry in config["layers"] for head in entry["heads"]]
    assert [role.endswith("(%s)" % kind) for role, kind in zip(found["roles"], kinds)] == \
        [True] * len(kinds)


def test_hard_attention_is_one_hot_on_select_heads(case):
    net, path, word = case
    if net.attention != "hard":
        pytest.skip("softmax network")
    found = net.attention_patterns(word)
    with safetensors.safe_open(path, "np") as f:
        config = json.loads(f.metadata()["config"])
    kinds = [head["kind"] for entry in config["layers"] for head in entry["heads"]]
    assert "select" in kinds
    for i, kind in enumerate(kinds):
        if kind == "select":
            rows = found["patterns"][i]
            assert torch.all((rows == 0) | (rows == 1)) and torch.all(rows.sum(dim=1) == 1)


def test_view_renders_every_head_and_writes_offline_html(case, tmp_path):
    net, _, word = case
    html = net.attention_view(word, path=tmp_path / "view.html")
    found = net.attention_patterns(word)
    text = (tmp_path / "view.html").read_text(encoding="utf-8")
    assert text == html.local_src
    # CircuitsVis embeds its properties as JSON in the call that renders the picture.
    props = json.loads(re.search(r"CircuitsVis\.AttentionHeads,\s*(\{.*\})\s*\)\s*</script>",
                                 text, re.S).group(1))
    assert props["tokens"] == found["tokens"]
    assert props["attentionHeadNames"] == ["%s %s" % hr for hr in
                                           zip(found["heads"], found["roles"])]
    got = torch.tensor(props["attention"])
    assert torch.allclose(got, found["patterns"], atol=1e-6)
    assert "https://unpkg.com/circuitsvis@" not in text  # the bundled script, not the CDN's


def test_view_needs_the_extra_and_refuses_bad_words(case):
    net, path, _ = case
    with pytest.raises(krc.InputError):
        net.attention_patterns("no-such-letter")
    with pytest.raises(krc.KrcError):
        net.attention_patterns(" ".join([net.letters[0]] * (net.max_len + 1)))
    script = ("import sys; sys.modules['circuitsvis'] = None\nimport krc\n"
              "net = krc.load(%r)\n"
              "try:\n    net.attention_view(%r)\n"
              "except krc.MissingExtraError as e:\n    print('missing:', e)\n") % (
                  path, net.letters[0])
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert "missing:" in out.stdout and "krc[vis]" in out.stdout, out.stderr
