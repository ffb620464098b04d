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
everything outside the circuit is zero-ablated, as the file's "ablation": "zero" says. Each
head's q, k and v are projected from their own inputs and mixed by the module's attention
(Attention.attend: softmax, or under hard attention a select head's latest maximum).

Then, for every unit: a unit the file marks necessary is ablated alone on its witness word
and must change the answer at the witness position (another state or a tie); a unit the file
does not mark necessary (or whose witness fails here) is searched for a witness among the
tested words. Several units are ablated at once by giving each a row of the batch.
"""
import itertools
import random as random_module
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from krc.errors import InputError
from krc.torch_layers import heads_first
from krc.torch_sparse import SparseAttention, SparseMLP

DTYPES = {"float32": torch.float32, "float64": torch.float64}
Unit = Tuple[str, str, Optional[str], Optional[List[int]], str]  # writer, reader, port, dims, name


def circuit_units(circuit: Dict[str, Any]) -> Tuple[List[Unit], List[Dict[str, Any]]]:
    """The circuit's units of ablation, in the file's order: (writer, reader node, q/k/v or
    None, dims or None for all, name), a unit at subspace granularity named as krc names it,
    "edge [subspace]"; and beside each the file's entry for it (the edge, or its "through"
    entry). A file that is not a circuit raises krc.InputError naming the problem."""
    if not isinstance(circuit, dict):
        raise TypeError("circuit must be a dict (a circuit file's JSON), not %s"
                        % type(circuit).__name__)
    granularity = circuit.get("granularity")
    if granularity not in ("head", "subspace"):
        raise InputError("circuit: granularity %r is neither head nor subspace" % (granularity,),
                         "circuit", "granularity", "unknown granularity")
    if circuit.get("ablation", "zero") != "zero":
        raise InputError("circuit: ablation %r: only zero ablation is defined for krc's "
                         "circuits" % (circuit.get("ablation"),), "circuit", "ablation",
                         "unknown ablation")
    units, entries = [], []
    edges = circuit.get("edges")
    if not isinstance(edges, dict):
        raise InputError("circuit: \"edges\" is not an object", "circuit", "edges",
                         "no edges")
    for name, edge in edges.items():
        try:
            if not edge.get("in_graph", True):
                continue
            where = (edge["from"], edge["to"], edge.get("qkv"))
            if granularity == "head":
                units.append(where + (None, name))
                entries.append(edge)
            else:
                for through in edge["through"]:
                    if not isinstance(through, dict):
                        raise TypeError("a \"through\" entry is not an object")
                    units.append(where + ([int(j) for j in through["dims"]],
                                          "%s [%s]" % (name, through["subspace"])))
                    entries.append(through)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError("circuit: edge %s: %s is missing or malformed" % (name, e),
                             "circuit", name, "malformed edge") from None
    return units, entries


class CircuitAblation:
    """The module's forward with every reader's input rebuilt from the circuit's units; `run`
    takes a keep matrix [units, B] (1 keeps unit u in batch row b, 0 ablates it there)."""

    def __init__(self, model: Any, units: Sequence[Unit]):
        self.model, self.units = model, list(units)
        d = model.embed.W_E.shape[1]
        writers = {"input"}
        readers = {("logits", None)}
        for L, block in enumerate(model.blocks):
            if isinstance(block.attn, SparseAttention) or isinstance(block.mlp, SparseMLP):
                raise InputError("the circuit check needs a dense module (load_torch without "
                                 "sparse=True)", "module", "layer %d" % L, "sparse layer")
            if block.attn is not None and bool(block.attn.b_O.ne(0).any()):
                raise InputError("the circuit check needs heads without an output bias, as "
                                 "krc's weights files hold them", "module", "layer %d" % L,
                                 "output bias")
            if block.attn is not None:
                for h in range(block.attn.W_Q.shape[0]):
                    writers.add("a%d.h%d" % (L, h))
                    readers.update(("a%d.h%d" % (L, h), p) for p in "qkv")
            if block.mlp is not None:
                writers.add("m%d" % L)
                readers.add(("m%d" % L, None))
        self.of_reader: Dict[Tuple[str, Optional[str]], List[int]] = {}
        self.masks: List[Optional[torch.Tensor]] = []
        dtype = model.embed.W_E.dtype
        for i, (writer, reader, port, dims, name) in enumerate(self.units):
            if writer not in writers or (reader, port) not in readers:
                raise InputError("circuit: unit %s: the network has no %s" % (
                    name, writer if writer not in writers else
                    reader + ("<%s>" % port if port else "")), "circuit", name, "unknown node")
            if dims is not None and not all(0 <= j < d for j in dims):
                raise InputError("circuit: unit %s: a dimension outside d_model %d" % (name, d),
                                 "circuit", name, "dimension out of range")
            mask = None
            if dims is not None:
                mask = torch.zeros(d, dtype=dtype, device=model.embed.W_E.device)
                mask[dims] = 1
            self.masks.append(mask)
            self.of_reader.setdefault((reader, port), []).append(i)

    def read(self, out, reader, keep, shape):
        x = torch.zeros(shape, dtype=out["input"].dtype, device=out["input"].device)
        for u in self.of_reader.get(reader, []):
            part = out[self.units[u][0]] * keep[u].view(-1, 1, 1)
            x = x + (part if self.masks[u] is None else part * self.masks[u])
        return x

    @torch.no_grad()
    def run(self, tokens: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Logits [B, T, S] of the circuit on tokens [B, T], the units where keep is 0 ablated."""
        m = self.model
        keep = keep.to(m.embed.W_E.dtype)
        out = {"input": m.embed(tokens) + m.pos_embed(tokens)}
        shape = out["input"].shape
        hard = m.attention == "hard"
        for L, block in enumerate(m.blocks):
            a = block.attn
            if a is not None:
                H = a.W_Q.shape[0]
                q, k, v = (torch.cat([heads_first(self.read(out, ("a%d.h%d" % (L, h), p), keep,
                                                             shape), W[h:h + 1], b[h:h + 1])
                                      for h in range(H)], dim=1)
                           for p, W, b in (("q", a.W_Q, a.b_Q), ("k", a.W_K, a.b_K),
                                           ("v", a.W_V, a.b_V)))
                z = a.attend(q, k, v, hard, m.max_scores)  # [B, H, T, e]
                for h in range(H):  # b_O is zero (checked above)
                    out["a%d.h%d" % (L, h)] = F.linear(z[:, h], a.W_O[h].T.contiguous())
            if block.mlp is not None:
                out["m%d" % L] = block.mlp(self.read(out, ("m%d" % L, None), keep, shape),
                                           m.max_hidden)
        return m.unembed(self.read(out, ("logits", None), keep, shape))


def answers(logits: torch.Tensor, states: Sequence[str]) -> List[List[Optional[str]]]:
    """The state of each position's argmax, None on a tie for the maximum."""
    best = logits.max(dim=-1, keepdim=True).values
    ties = ((logits == best).sum(dim=-1) > 1).tolist()
    index = logits.argmax(dim=-1).tolist()
    return [[None if tie else states[i] for i, tie in zip(row, row_ties)]
            for row, row_ties in zip(index, ties)]


def tested_words(letters: Sequence[str], max_len: int, max_exhaustive_words: int, random: int,
                 length: int, seed: int) -> Tuple[List[List[str]], Dict[str, Any]]:
    """All words of the longest length with at most max_exhaustive_words words (krc's order),
    and `random` words of `length` (0: min(max_len, 24)) drawn by Python's random(seed):
    seeded as krc's are, but not the same draws."""
    n, count, exhaustive = len(letters), 1, 0
    while n and exhaustive < max_len and count * n <= max_exhaustive_words:
        count *= n
        exhaustive += 1
    words = [list(w) for w in itertools.product(letters, repeat=exhaustive)]
    random_length = min(length, max_len) if length > 0 else min(max_len, 24)
    rng = random_module.Random(seed)
    random = random if n else 0
    words += [[rng.choice(letters) for _ in range(random_length)] for _ in range(random)]
    return words, {"exhaustive_length": exhaustive, "exhaustive_words": count,
                   "random_words": random, "random_length": random_length, "seed": seed}


def batches(items: Sequence[Any], size: int):
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


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
    the file's witnesses confirmed, and a search for the other units' witnesses."""

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

    def search(self, words, witness: Dict[int, Dict[str, Any]]):
        """Every unit without a witness: its own search over `words`, in batches."""
        for u in range(len(self.units)):
            if u in witness:
                continue
            for rows in batches(words, self.batch):
                keep = torch.ones(len(self.units), len(rows))
                keep[u] = 0
                got = self.run(rows, keep)
                hit = next(((word, t, g[t]) for word, g in zip(rows, got)
                            for t, state in enumerate(self.expected(word)) if g[t] != state),
                           None)
                if hit:
                    witness[u] = {"word": hit[0], "position": hit[1],
                                  "expected": self.expected(hit[0])[hit[1]],
                                  "ablated": shown(hit[2])}
                    break


def check_circuit_torch(model: Any, automaton: Any, circuit: Dict[str, Any], dtype: str,
                        words: List[List[str]], words_json: Dict[str, Any],
                        max_batch_bytes: int = 1 << 28) -> Dict[str, Any]:
    """The check on `model` (a dense KrcTransformer, cast here to `dtype`): the report has the
    shape of the runtime's circuit["check"] (circuit_only, units, necessary, redundant, words)
    with framework "torch" and the arithmetic, and "witnesses": how many of the file's
    witnesses were confirmed here and which failed. Words run in batches whose activations
    (every writer's output, [B, max_len + 1, d] each) stay under max_batch_bytes."""
    model = model.to(DTYPES[dtype])
    units, entries = circuit_units(circuit)
    writers = 1 + sum((b.attn.W_Q.shape[0] if b.attn is not None else 0) +
                      (b.mlp is not None) for b in model.blocks)
    row_bytes = (writers + 4) * (model.max_len + 1) * model.embed.W_E.shape[1] * \
        model.embed.W_E.element_size()
    check = TorchCircuitCheck(model, automaton, units,
                              max(1, min(256, max_batch_bytes // row_bytes)))
    claimed = claimed_witnesses(entries, units, model.max_len)
    witness_words = [list(w["word"]) for w in claimed.values()]
    only = check.circuit_alone(words + witness_words)
    witness: Dict[int, Dict[str, Any]] = {}
    failed, same = check.confirm(claimed, witness)
    check.search(words, witness)
    return {"framework": "torch", "arithmetic": dtype, "ablation": "zero",
            "attention": model.attention,
            "words": dict(words_json, witness_words=len(witness_words)),
            "circuit_only": only, "units": len(units), "necessary": len(witness),
            "redundant": [units[u][4] for u in range(len(units)) if u not in witness],
            "witnesses": {"claimed": len(claimed), "confirmed": len(claimed) - len(failed),
                          "failed": failed, "same_ablated_answer": same},
            "unit_witnesses": {units[u][4]: witness[u] for u in sorted(witness)}}
