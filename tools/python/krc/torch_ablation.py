"""The circuit's units of ablation and the PyTorch forward that ablates them (krc.torch_circuit
runs the check with it): a circuit file's in-graph edges (or, at subspace granularity, each edge's
"through" entries) become units (writer, reader, q/k/v, dims, name), and CircuitAblation runs
the network's dense module with every reader's input rebuilt from the units kept in each batch
row, zero- or mean-ablating the rest (torch_circuit's docstring gives the construction)."""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from krc.errors import InputError
from krc.torch_layers import heads_first
from krc.torch_sparse import SparseAttention, SparseMLP

ABLATIONS = ("zero", "mean")
Unit = Tuple[str, str, Optional[str], Optional[List[int]], str]  # writer, reader, port, dims, name


def batches(items: Sequence[Any], size: int):
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


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
