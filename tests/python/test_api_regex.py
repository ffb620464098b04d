"""krc.from_regex and `krc compile --regex` against Python's own `re` (issue 34, item 5): for 50
random regular expressions over a, b, c (a seeded generator nesting every operator), the
minimal DFA's acceptance after every prefix of 10,000 words equals re.fullmatch of that prefix;
a few are compiled into networks, verified and run through the krc command, and the two doors
give the same automaton and the same weights file, byte for byte."""

import json
import random
import re

import pytest

import krc
from frameworks_support import krc as krc_command, krc_binary

LETTERS = "abc"
REGEXES = 50
WORDS = 10_000
LONGEST = 30


class Node:
    """A generated expression: its text, and a sampler of words it matches (so that the words
    tested reach accepting states, not only the dead one)."""

    def __init__(self, text, sample, atomic):
        self.text, self.sample, self.atomic = text, sample, atomic


def letter_class(rng):
    members = "".join(sorted(rng.sample(LETTERS, rng.randint(1, 2))))
    if rng.random() < 0.4:
        rest = [c for c in LETTERS if c not in members]
        return Node("[^" + members + "]", lambda r: r.choice(rest) if rest else None, True)
    return Node("[" + members + "]", lambda r: r.choice(members), True)


def atom(rng):
    roll = rng.random()
    if roll < 0.6:
        c = rng.choice(LETTERS)
        return Node(c, lambda r: c, True)
    if roll < 0.85:
        return letter_class(rng)
    if roll < 0.95:
        return Node(".", lambda r: r.choice(LETTERS), True)
    return Node("()", lambda r: "", True)


def group(node):
    return node if node.atomic else Node("(" + node.text + ")", node.sample, True)


def concat(parts):
    def sample(r):
        pieces = [p.sample(r) for p in parts]
        return None if None in pieces else "".join(pieces)

    return Node("".join(p.text for p in parts), sample, False)


def repeat(node, low, high, text):
    def sample(r):
        pieces = [node.sample(r) for _ in range(r.randint(low, high))]
        return None if None in pieces else "".join(pieces)

    # Not atomic: a quantifier on it puts it in parentheses ((a*)+; a*+ is no regex).
    return Node(group(node).text + text, sample, False)


def alternation(branches):
    def sample(r):
        samples = [s for s in (b.sample(r) for b in branches) if s is not None]
        return r.choice(samples) if samples else None

    return Node("(" + "|".join(b.text for b in branches) + ")", sample, True)


def unambiguous(rng):
    """The operand of an unbounded quantifier: a few letters, classes or dots in a row, or an
    alternation of such whose branches start with distinct letters. Python's re backtracks,
    and under a star an operand that matches one word in several ways (a+, a|.) makes it
    exponential on a word it rejects ((a+)+b on thirty a's takes minutes); krc's DFA does not
    care, the oracle would."""
    def row(first):
        rest = [atom(rng) for _ in range(rng.randint(0, 2))]
        return concat([Node(first, lambda r: first, True)] + rest) if first else concat(rest)

    if rng.random() < 0.5:
        parts = [atom(rng) for _ in range(rng.randint(1, 3))]
        parts = [p for p in parts if p.text != "()"] or [Node("a", lambda r: "a", True)]
        return concat(parts) if len(parts) > 1 else parts[0]
    return alternation([row(first) for first in rng.sample(LETTERS, rng.randint(2, 3))])


def expression(rng, depth):
    """A random expression: concatenation, alternation, the quantifiers * + ? {m} {m,n} {m,}
    {,n} (lazy forms among them), classes, '.', and '()' for the empty word, nested; an
    unbounded quantifier's operand is unambiguous (above)."""
    if depth == 0 or rng.random() < 0.15:
        return atom(rng)
    roll = rng.random()
    if roll < 0.3:
        return concat([expression(rng, depth - 1) for _ in range(rng.randint(2, 3))])
    if roll < 0.5:
        return alternation([expression(rng, depth - 1) for _ in range(rng.randint(2, 3))])
    lazy = "?" if rng.random() < 0.1 else ""
    m, n = rng.randint(0, 2), rng.randint(0, 3)
    low, high = min(m, n), max(m, n)
    quantifiers = [(0, 3, "*"), (1, 3, "+"), (0, 1, "?"), (low, low, "{%d}" % low),
                   (low, high, "{%d,%d}" % (low, high)), (low, low + 3, "{%d,}" % low),
                   (0, high, "{,%d}" % high)]
    low, high, text = rng.choice(quantifiers)
    unbounded = text in ("*", "+") or text.endswith(",}")
    operand = unambiguous(rng) if unbounded else expression(rng, depth - 1)
    return repeat(operand, low, high, text + lazy)


def regexes():
    rng = random.Random(34)
    return [expression(rng, rng.randint(2, 4)) for _ in range(REGEXES)]


def words(rng, node):
    """Half random words of 0..LONGEST letters, half a word the expression matches followed
    by random letters (each prefix on its way is tested too)."""
    out = []
    for i in range(WORDS):
        head = node.sample(rng) if i % 2 else ""
        head = "" if head is None else head[:LONGEST]
        tail = rng.randint(0, LONGEST - len(head))
        out.append(head + "".join(rng.choice(LETTERS) for _ in range(tail)))
    return out


def test_fifty_random_regexes_agree_with_re_fullmatch_at_every_prefix():
    rng = random.Random(1)
    checked = accepted = 0
    for node in regexes():
        pattern = node.text
        compiled = re.compile(pattern)
        automaton = krc.from_regex(pattern, "a,b,c")
        assert automaton.letters == ["a", "b", "c"], pattern
        accepting = set(automaton.accepting)
        known = {}
        for word in words(rng, node):
            states = automaton.run(list(word))
            for t, state in enumerate(states):
                prefix = word[:t]
                if prefix not in known:
                    known[prefix] = compiled.fullmatch(prefix) is not None
                assert (state in accepting) == known[prefix], (pattern, prefix)
                checked += 1
                accepted += known[prefix]
    # Every prefix of every word: about 50 * 10,000 * 16; both answers well represented.
    assert checked > REGEXES * WORDS * 10
    assert accepted > checked // 20
    print("%d regexes, %d words each, %d prefixes agreed (%d accepted)"
          % (REGEXES, WORDS, checked, accepted))


def test_the_generator_reaches_every_operator():
    texts = " ".join(node.text for node in regexes())
    for piece in ["|", "*", "+", "?", "{", ",}", "{,", "[^", "[", ".", "()", "*?"]:
        assert piece in texts, piece


def test_from_regex_alphabet_forms_and_errors():
    assert krc.from_regex("a(b|c)*d").letters == ["a", "b", "c", "d"]
    assert krc.from_regex("b", ["a", "b"]).letters == ["a", "b"]
    assert krc.from_regex("b", "a,b").letters == ["a", "b"]
    assert krc.from_regex("<SYN><ACK>*", ["SYN", "ACK"]).run(["SYN", "ACK"])[-1].startswith(
        "accept")
    with pytest.raises(krc.InputError) as error:
        krc.from_regex("a(b")
    assert error.value.place == "column 2"
    assert "not closed" in error.value.problem
    with pytest.raises(krc.LimitError):
        krc.from_regex("(a|b)*a(a|b){12}", max_subset_states=1000)


def test_the_command_line_compiles_verifies_and_runs_what_python_builds(tmp_path):
    if krc_binary() is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    rng = random.Random(2)
    for node in regexes()[:4]:
        pattern = node.text
        model = tmp_path / "regex.safetensors"
        compiled = krc_command("compile", "--regex", pattern, "--alphabet", "a,b,c", "-o", model,
                               "--max-len", "32")
        assert "krc: output accepting" in compiled.stderr
        assert krc_command("verify", model).returncode == 0
        # The network carries the automaton from_regex builds: the same machine by both doors.
        assert krc.load(model).automaton == krc.from_regex(pattern, "a,b,c"), pattern
        # ... and so the same network, byte for byte.
        krc.compile(krc.from_regex(pattern, "a,b,c"), max_len=32).save(tmp_path / "python.st")
        assert (tmp_path / "python.st").read_bytes() == model.read_bytes(), pattern
        for word in words(rng, node)[:20]:
            if not word:
                continue
            ran = json.loads(krc_command("run", model, "--json", " ".join(word)).stdout)
            for t, state in enumerate(ran["states"]):
                expected = re.fullmatch(pattern, word[:t]) is not None
                assert state.split("#")[0] == ("accept" if expected else "reject"), (pattern, t)
