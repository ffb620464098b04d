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
import torch.nn.functional as F

from krc.errors import InputError
from krc.torch_layers import heads_first
from krc.torch_sparse import SparseAttention, SparseMLP

DTYPES = {"float32": torch.float32, "float64": torch.float64}
ABLATIONS = ("zero", "mean")
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
    if circuit.get("ablation", "zero") not in ABLATIONS:
        raise InputError("circuit: ablation %r is neither zero nor mean"
                         % (circuit.get("ablation"),), "circuit", "ablation",
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
        self.mean: Optional[Dict[str, torch.Tensor]] = None  # set_means
        self.mean_input: Dict[Tuple[str, Optional[str]], torch.Tensor] = {}
        self.clean: Optional[Dict[str, torch.Tensor]] = None
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
        """A reader's input: its kept units' writers' outputs on their dimensions; with means
        set, everything else its writers' means (the mean residual at the reader, plus each
        kept unit's output less its mean)."""
        if self.mean is None:
            x = torch.zeros(shape, dtype=out["input"].dtype, device=out["input"].device)
        else:
            x = self.mean_input[reader][:shape[1]].expand(shape)
        for u in self.of_reader.get(reader, []):
            writer = self.units[u][0]
            part = out[writer] if self.mean is None else out[writer] - self.mean[writer][:shape[1]]
            part = part * keep[u].view(-1, 1, 1)
            x = x + (part if self.masks[u] is None else part * self.masks[u])
        return x

    @torch.no_grad()
    def run(self, tokens: torch.Tensor, keep: Optional[torch.Tensor]) -> torch.Tensor:
        """Logits [B, T, S] of the circuit on tokens [B, T], the units where keep is 0 ablated
        (zero, or mean once set_means ran). keep None: the whole network, every reader's input
        the residual stream (the sum of every writer's output before it); the writers' outputs
        are then in self.clean."""
        m = self.model
        out = {"input": m.embed(tokens) + m.pos_embed(tokens)}
        shape = out["input"].shape
        if keep is None:
            residual = [out["input"]]
            read = lambda reader: residual[0]  # noqa: E731
        else:
            keep = keep.to(m.embed.W_E.dtype)
            read = lambda reader: self.read(out, reader, keep, shape)  # noqa: E731
        hard = m.attention == "hard"
        for L, block in enumerate(m.blocks):
            a = block.attn
            if a is not None:
                H = a.W_Q.shape[0]
                q, k, v = (torch.cat([heads_first(read(("a%d.h%d" % (L, h), p)), W[h:h + 1],
                                                  b[h:h + 1]) for h in range(H)], dim=1)
                           for p, W, b in (("q", a.W_Q, a.b_Q), ("k", a.W_K, a.b_K),
                                           ("v", a.W_V, a.b_V)))
                z = a.attend(q, k, v, hard, m.max_scores)  # [B, H, T, e]
                for h in range(H):  # b_O is zero (checked above)
                    out["a%d.h%d" % (L, h)] = F.linear(z[:, h], a.W_O[h].T.contiguous())
                    if keep is None:
                        residual[0] = residual[0] + out["a%d.h%d" % (L, h)]
            if block.mlp is not None:
                out["m%d" % L] = block.mlp(read(("m%d" % L, None)), m.max_hidden)
                if keep is None:
                    residual[0] = residual[0] + out["m%d" % L]
        if keep is None:
            self.clean = out
        return m.unembed(read(("logits", None)))

    def set_means(self, words: Sequence[Sequence[str]], batch: int) -> None:
        """Mean ablation from here on: each writer's output averaged over `words`, position by
        position (row t over the words of at least t letters), in the whole network's pass;
        and each reader's mean input, the sum of its earlier writers' means."""
        m = self.model
        rows = 1 + max(len(w) for w in words)
        total: Dict[str, torch.Tensor] = {}
        reach = torch.zeros(rows, 1, dtype=m.embed.W_E.dtype, device=m.embed.W_E.device)
        for chunk in batches(list(words), batch):
            tokens = m.tokens(chunk)
            self.run(tokens, None)
            T = tokens.shape[1]
            there = torch.tensor([[t <= len(w) for t in range(T)] for w in chunk],
                                 dtype=reach.dtype, device=reach.device).unsqueeze(-1)
            reach[:T] += there.sum(0)
            for writer, value in self.clean.items():
                if writer not in total:
                    total[writer] = torch.zeros(rows, value.shape[-1], dtype=value.dtype,
                                                device=value.device)
                total[writer][:T] += (value * there).sum(0)
        self.clean = None
        self.mean = {w: t / reach.clamp(min=1) for w, t in total.items()}
        # The mean residual at each reader: the means of the writers before it, in run's order.
        residual = self.mean["input"]
        self.mean_input = {}
        for L, block in enumerate(m.blocks):
            if block.attn is not None:
                for h in range(block.attn.W_Q.shape[0]):
                    self.mean_input.update({("a%d.h%d" % (L, h), p): residual for p in "qkv"})
                for h in range(block.attn.W_Q.shape[0]):
                    residual = residual + self.mean["a%d.h%d" % (L, h)]
            if block.mlp is not None:
                self.mean_input[("m%d" % L, None)] = residual
                residual = residual + self.mean["m%d" % L]
        self.mean_input[("logits", None)] = residual


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
    writers = 1 + sum((b.attn.W_Q.shape[0] if b.attn is not None else 0) +
                      (b.mlp is not None) for b in model.blocks)
    row_bytes = (writers + 4) * (model.max_len + 1) * model.embed.W_E.shape[1] * \
        model.embed.W_E.element_size()
    check = TorchCircuitCheck(model, automaton, units,
                              max(1, min(256, max_batch_bytes // row_bytes)))
    file_ablation = circuit.get("ablation", "zero")
    claimed = claimed_witnesses(entries, units, model.max_len) if file_ablation == ablation \
        else {}
    witness_words = [list(w["word"]) for w in claimed.values()]
    if ablation == "mean":
        reference = words if reference is None else reference
        reach = max((len(w) for w in reference), default=-1)
        longest = max((len(w) for w in words + witness_words), default=0)
        if reach < longest:
            raise InputError("mean ablation: the reference words (the longest %d letters) do not "
                             "reach every position of the tested and witness words (%d letters)"
                             % (reach, longest), "", "reference", "reference too short")
        check.ablation.set_means(reference, check.batch)
    only = check.circuit_alone(words + witness_words)
    witness: Dict[int, Dict[str, Any]] = {}
    failed, same = check.confirm(claimed, witness)
    names, parts = components_of(units)
    targets = [[u] for u in range(len(units))] + parts
    check.search(words, witness, targets)
    necessary = [x for x in range(len(units)) if x in witness]
    report = {"framework": "torch", "arithmetic": dtype, "ablation": ablation,
              "attention": model.attention,
              "words": dict(words_json, witness_words=len(witness_words)),
              "circuit_only": only, "units": len(units), "necessary": len(necessary),
              "redundant": [units[u][4] for u in range(len(units)) if u not in witness],
              "witnesses": {"claimed": len(claimed), "confirmed": len(claimed) - len(failed),
                            "failed": failed, "same_ablated_answer": same,
                            "of_ablation": file_ablation},
              "unit_witnesses": {units[u][4]: witness[u] for u in necessary},
              "components": {
                  "count": len(names),
                  "necessary": sum(len(units) + c in witness for c in range(len(names))),
                  "redundant": [n for c, n in enumerate(names) if len(units) + c not in witness],
                  "witnesses": {n: witness[len(units) + c] for c, n in enumerate(names)
                                if len(units) + c in witness}}}
    if ablation == "mean":
        zero: Dict[int, Dict[str, Any]] = {}
        check.ablation.mean, means = None, check.ablation.mean
        try:
            check.search(words, zero, targets,
                         [x for x in range(len(targets)) if x not in witness])
        finally:
            check.ablation.mean = means
        report["reference"] = {"words": len(reference), "mean": "per position"}
        report["zero_only"] = [units[u][4] for u in sorted(zero) if u < len(units)]
        report["zero_only_witnesses"] = {units[u][4]: zero[u] for u in sorted(zero)
                                         if u < len(units)}
        report["components"]["zero_only"] = [names[x - len(units)] for x in sorted(zero)
                                             if x >= len(units)]
    return report
