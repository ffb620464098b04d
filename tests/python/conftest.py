"""Shared by the Python API tests: where the repository's data lies, and an automaton oracle
that reads krc's native JSON by itself (never through krc) and runs words on it."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ZOO = os.path.join(REPO, "automata", "zoo")
REFERENCE = os.path.join(REPO, "tests", "reference")


class JsonAutomaton:
    """The automaton of a native JSON file as its text says: targets by name or by index."""

    def __init__(self, path):
        with open(path) as f:
            doc = json.load(f)
        self.states = list(doc["states"])
        self.letters = list(doc["alphabet"])
        index = {name: i for i, name in enumerate(self.states)}
        target = lambda t: index[t] if isinstance(t, str) else int(t)
        self.initial = target(doc["initial"])
        self.delta = {a: [target(t) for t in doc["transitions"][a]] for a in self.letters}

    def run(self, word):
        """State names after every prefix, the empty one first."""
        q, out = self.initial, [self.states[self.initial]]
        for a in word:
            q = self.delta[a][q]
            out.append(self.states[q])
        return out


@pytest.fixture(scope="session")
def gridworld_file():
    return os.path.join(ZOO, "gridworld_9.json")


@pytest.fixture(scope="session")
def reference_forward():
    """tools/reference_forward.py: the independent numpy forward pass of README's format."""
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import reference_forward
    finally:
        sys.path.pop(0)
    return reference_forward
