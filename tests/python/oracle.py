"""The tests' automaton oracle: krc's native JSON read here by itself (never through krc) and
run letter by letter. Shared by conftest.py (the API tests) and frameworks_support.py."""
import json
import os
import random

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ZOO = os.path.join(REPO, "automata", "zoo")


class Oracle:
    """An automaton in krc's native JSON (targets by name or by index), run letter by letter:
    a file (Oracle.of_json), a zoo file (Oracle.zoo) or the "automaton" metadata of a weights
    file (Oracle.of_file)."""

    @staticmethod
    def of_json(path):
        with open(path) as f:
            return Oracle(json.load(f))

    @staticmethod
    def zoo(name):
        return Oracle.of_json(os.path.join(ZOO, name + ".json"))

    @staticmethod
    def of_file(weights_path):
        from safetensors import safe_open

        with safe_open(weights_path, framework="np") as f:
            return Oracle(json.loads(f.metadata()["automaton"]))

    def __init__(self, doc):
        self.states, self.letters = list(doc["states"]), list(doc["alphabet"])
        index = {name: i for i, name in enumerate(self.states)}
        target = (lambda t: index[t] if isinstance(t, str) else int(t))
        self.initial = target(doc["initial"])
        self.delta = {a: [target(t) for t in doc["transitions"][a]] for a in self.letters}

    def run(self, word):
        """State names after every prefix, the empty one first."""
        q, out = self.initial, [self.states[self.initial]]
        for a in word:
            q = self.delta[a][q]
            out.append(self.states[q])
        return out

    def words(self, seed, count, longest, short):
        """`count` random words: one of `longest` letters, the others of 0..short letters."""
        rng = random.Random(seed)
        lengths = [longest] + [rng.randint(0, short) for _ in range(count - 1)]
        return [[rng.choice(self.letters) for _ in range(n)] for n in lengths]
