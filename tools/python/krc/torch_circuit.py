"""The circuit file's ablation check in PyTorch (runtime/README.md, "The circuit file"): the
check `krc circuit --check` runs in krc's runtime (float64, Eigen), run again on the network's
PyTorch module (krc.torch_module, the module Network.to_torch returns) in float32 or float64.

The circuit is read from the file (the dict Network.circuit returns, or any dict of that
format, such as a circuit-discovery method's candidate): its edges with in_graph true are the
circuit, each a unit of ablation at head granularity, each of its "through" entries one at
subspace granularity. The module's own layers compute every writer's output (the embeddings,
each head's output through its W_O slice, each MLP block); every reader's input (a head's q, k
or v, an MLP, the logits) is rebuilt as the sum of its units' writers' outputs, each on the
unit's dimensions (all of them at head granularity: a writer's output is exactly zero where
it writes nothing, and a reader's weights are exactly zero where it reads nothing), so
everything outside the circuit is zero-ablated. Under mean ablation (set_means) a reader's
input is instead the mean residual at it plus each kept unit's output less its writer's mean:
everything outside the circuit and every ablated unit is replaced by its mean over the
reference words, position by position. Each head's q, k and v are projected from their own
inputs and mixed by the module's attention (Attention.attend: softmax, or under hard attention
a select head's latest maximum).

Then, for every unit: a unit the file marks necessary is ablated alone on its witness word
and must change the answer at the witness position (another state or a tie); a unit the file
does not mark necessary (or whose witness fails here) is searched for a witness among the
tested words, and so is every component (a head or MLP block: all the units it writes ablated
at once). Several units are ablated at once by giving each a row of the batch.
"""
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from krc.errors import InputError
from krc.torch_ablation import ABLATIONS, CircuitAblation, Unit, batches, circuit_units

__all__ = ["CircuitAblation", "circuit_units", "check_circuit_torch", "tested_words"]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def answers(logits: torch.Tensor, states: Sequence[str]) -> List[List[Optional[str]]]:
    """The state of each position's argmax, None on a tie for the maximum."""
    best = logits.max(dim=-1, keepdim=True).values
    ties = ((logits == best).sum(dim=-1) > 1).tolist()
    index = logits.argmax(dim=-1).tolist()
    return [[None if tie else states[i] for i, tie in zip(row, row_ties)]
            for row, row_ties in zip(index, ties)]


def tested_words(network: Any, max_exhaustive_words: int, random: int, length: int,
                 seed: int) -> Tuple[List[List[str]], Dict[str, Any]]:
    """The words krc's own circuit check tests (krc._core's circuit_words: all words of the
    longest length with at most max_exhaustive_words words, then `random` words of `length`
    letters, 0: min(max_len, 24), drawn by the runtime's std::mt19937_64(seed)), as lists of
    letters, and their summary as the runtime's check records it. `network` is a krc.Network."""
    words, summary = network._core.circuit_words(max_exhaustive_words, random, length, seed)
    return [list(w) for w in words], json.loads(summary)


def claimed_witnesses(entries: List[Dict[str, Any]], units: Sequence[Unit],
                      max_len: int) -> Dict[int, Dict[str, Any]]:
    """Every necessary unit's witness from the file, checked to be a word of at most max_len
    letters with a position in it."""
    claimed: Dict[int, Dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        if entry.get("necessary") and isinstance(entry.get("witness"), dict):
            w = entry["witness"]
            word, t = w.get("word"), w.get("position")
            if not (isinstance(word, list) and all(isinstance(a, str) for a in word) and
                    isinstance(t, int) and not isinstance(t, bool) and
                    0 <= t <= len(word) <= max_len):
                raise InputError("circuit: unit %s: its witness is not a word of at most "
                                 "max_len %d letters with a position in it"
                                 % (units[i][4], max_len), "circuit", units[i][4],
                                 "malformed witness")
            claimed[i] = w
    return claimed


def shown(state: Optional[str]) -> str:
    return state if state is not None else "a tie"


class TorchCircuitCheck:
    """The three parts of the check on one model and circuit: the circuit alone on every word,
    the file's witnesses confirmed, and a search for the other units' (and the components')
    witnesses."""

    def __init__(self, model: Any, automaton: Any, units: Sequence[Unit], batch: int):
        self.model, self.automaton, self.units, self.batch = model, automaton, units, batch
        self.ablation = CircuitAblation(model, units)
        self.cache: Dict[Tuple[str, ...], List[str]] = {}

    def expected(self, word):
        key = tuple(word)
        if key not in self.cache:
            self.cache[key] = list(self.automaton.run(list(word)))
        return self.cache[key]

    def run(self, rows, keep):
        """answers() of words `rows` with keep [units, len(rows)]."""
        return answers(self.ablation.run(self.model.tokens(rows), keep), self.model.states)

    def circuit_alone(self, words) -> Dict[str, Any]:
        """Every position of every word with nothing ablated but what the circuit leaves out."""
        positions = wrong = 0
        first_wrong = None
        ones = torch.ones(len(self.units), 1)
        for rows in batches(words, self.batch):
            for word, got in zip(rows, self.run(rows, ones.expand(-1, len(rows)))):
                for t, state in enumerate(self.expected(word)):
                    positions += 1
                    if got[t] != state:
                        wrong += 1
                        if first_wrong is None:
                            first_wrong = {"word": word, "position": t, "expected": state,
                                           "got": shown(got[t])}
        only = {"positions": positions, "wrong": wrong}
        if first_wrong is not None:
            only["first_wrong"] = first_wrong
        return only

    def confirm(self, claimed: Dict[int, Dict[str, Any]], witness: Dict[int, Dict[str, Any]]):
        """The file's witnesses, one row each with its unit ablated: the file's expected state
        must be the automaton's, and the answer must change. Returns (failed, same)."""
        failed, same = [], 0
        for chunk in batches(list(claimed.items()), self.batch):
            keep = torch.ones(len(self.units), len(chunk))
            for row, (u, _) in enumerate(chunk):
                keep[u, row] = 0
            got = self.run([list(w["word"]) for _, w in chunk], keep)
            for row, (u, w) in enumerate(chunk):
                t = int(w["position"])
                want = self.expected(w["word"])[t]
                if got[row][t] != want and w.get("expected") == want:
                    ablated = shown(got[row][t])
                    witness[u] = {"word": list(w["word"]), "position": t, "expected": want,
                                  "ablated": ablated}
                    same += ablated == w.get("ablated")
                else:
                    failed.append(self.units[u][4])
        return failed, same

    def search(self, words, witness: Dict[int, Dict[str, Any]],
               targets: Sequence[Sequence[int]], only: Optional[Sequence[int]] = None):
        """Every target (a list of units ablated together) without a witness, of `only` when
        given: its own search over `words`, in batches."""
        for x in range(len(targets)) if only is None else only:
            if x in witness:
                continue
            for rows in batches(words, self.batch):
                keep = torch.ones(len(self.units), len(rows))
                keep[list(targets[x])] = 0
                got = self.run(rows, keep)
                hit = next(((word, t, g[t]) for word, g in zip(rows, got)
                            for t, state in enumerate(self.expected(word)) if g[t] != state),
                           None)
                if hit:
                    witness[x] = {"word": hit[0], "position": hit[1],
                                  "expected": self.expected(hit[0])[hit[1]],
                                  "ablated": shown(hit[2])}
                    break


def components_of(units: Sequence[Unit]) -> Tuple[List[str], List[List[int]]]:
    """The circuit's components (every writer but the input with a unit in the circuit, in
    the network's order: a0.h0, ..., m0, a1.h0, ...) and each one's units."""
    of: Dict[str, List[int]] = {}
    for u, unit in enumerate(units):
        if unit[0] != "input":
            of.setdefault(unit[0], []).append(u)

    def order(name):
        if name.startswith("a"):
            layer, head = name[1:].split(".h")
            return (int(layer), 0, int(head))
        return (int(name[1:]), 1, 0)
    names = sorted(of, key=order)
    return names, [of[n] for n in names]


def batch_rows(model: Any, max_batch_bytes: int) -> int:
    """How many words a batch holds: every writer's output, [B, max_len + 1, d] each (and a
    few more such tensors), within max_batch_bytes; 1 to 256."""
    writers = 1 + sum((b.attn.W_Q.shape[0] if b.attn is not None else 0) +
                      (b.mlp is not None) for b in model.blocks)
    row_bytes = (writers + 4) * (model.max_len + 1) * model.embed.W_E.shape[1] * \
        model.embed.W_E.element_size()
    return max(1, min(256, max_batch_bytes // row_bytes))


def set_means(check: TorchCircuitCheck, reference: List[List[str]],
              longest_tested: int) -> None:
    """Mean ablation's per-position means over `reference`, which must reach every position of
    the tested and witness words (the longest has `longest_tested` letters)."""
    reach = max((len(w) for w in reference), default=-1)
    if reach < longest_tested:
        raise InputError("mean ablation: the reference words (the longest %d letters) do not "
                         "reach every position of the tested and witness words (%d letters)"
                         % (reach, longest_tested), "", "reference", "reference too short")
    check.ablation.set_means(reference, check.batch)


def zero_only(check: TorchCircuitCheck, words, targets, witness) -> Dict[int, Dict[str, Any]]:
    """The targets mean ablation leaves redundant (no witness in `witness`) that a
    zero-ablation search of the same words finds necessary, with their witnesses."""
    zero: Dict[int, Dict[str, Any]] = {}
    check.ablation.mean, means = None, check.ablation.mean
    try:
        check.search(words, zero, targets, [x for x in range(len(targets)) if x not in witness])
    finally:
        check.ablation.mean = means
    return zero


def check_circuit_torch(model: Any, automaton: Any, circuit: Dict[str, Any], dtype: str,
                        words: List[List[str]], words_json: Dict[str, Any],
                        max_batch_bytes: int = 1 << 28, ablation: str = "zero",
                        reference: Optional[List[List[str]]] = None) -> Dict[str, Any]:
    """The check on `model` (a dense KrcTransformer, cast here to `dtype`): the report has the
    shape of the runtime's circuit["check"] (circuit_only, units, necessary, redundant, words)
    with framework "torch" and the arithmetic, and "witnesses": how many of the file's
    witnesses were confirmed here and which failed. Words run in batches whose activations
    (every writer's output, [B, max_len + 1, d] each) stay under max_batch_bytes.

    ablation "mean": an ablated unit's contribution is its writer's output averaged over
    `reference` (None: `words`) position by position, everything outside the circuit so too;
    the file's witnesses are confirmed only if the file's own "ablation" is mean. The report
    adds "reference" and "zero_only": the units mean ablation leaves redundant that a
    zero-ablation search of the same words finds necessary, with "zero_only_witnesses"."""
    if ablation not in ABLATIONS:
        raise InputError("ablation %r is neither zero nor mean" % (ablation,), "", "ablation",
                         "unknown ablation")
    model = model.to(DTYPES[dtype])
    units, entries = circuit_units(circuit)
    check = TorchCircuitCheck(model, automaton, units, batch_rows(model, max_batch_bytes))
    file_ablation = circuit.get("ablation", "zero")
    claimed = claimed_witnesses(entries, units, model.max_len) if file_ablation == ablation \
        else {}
    witness_words = [list(w["word"]) for w in claimed.values()]
    if ablation == "mean":
        reference = words if reference is None else reference
        set_means(check, reference, max((len(w) for w in words + witness_words), default=0))
    only = check.circuit_alone(words + witness_words)
    witness: Dict[int, Dict[str, Any]] = {}
    failed, same = check.confirm(claimed, witness)
    names, parts = components_of(units)
    targets = [[u] for u in range(len(units))] + parts
    check.search(words, witness, targets)
    necessary = [x for x in range(len(units)) if x in witness]
    n = len(units)
    report = {"framework": "torch", "arithmetic": dtype, "ablation": ablation,
              "attention": model.attention,
              "words": dict(words_json, witness_words=len(witness_words)),
              "circuit_only": only, "units": n, "necessary": len(necessary),
              "redundant": [units[u][4] for u in range(n) if u not in witness],
              "witnesses": {"claimed": len(claimed), "confirmed": len(claimed) - len(failed),
                            "failed": failed, "same_ablated_answer": same,
                            "of_ablation": file_ablation},
              "unit_witnesses": {units[u][4]: witness[u] for u in necessary},
              "components": {
                  "count": len(names),
                  "necessary": sum(n + c in witness for c in range(len(names))),
                  "redundant": [name for c, name in enumerate(names) if n + c not in witness],
                  "witnesses": {name: witness[n + c] for c, name in enumerate(names)
                                if n + c in witness}}}
    if ablation == "mean":
        zero = zero_only(check, words, targets, witness)
        report["reference"] = {"words": len(reference), "mean": "per position"}
        report["zero_only"] = [units[u][4] for u in sorted(zero) if u < n]
        report["zero_only_witnesses"] = {units[u][4]: zero[u] for u in sorted(zero) if u < n}
        report["components"]["zero_only"] = [names[x - n] for x in sorted(zero) if x >= n]
    return report
