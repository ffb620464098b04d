"""krc.Network: a compiled network, what it is made of, and what can be done with it.

The C++ core (krc._core.Network) holds the weights and does the work; this class adds what
Python users expect: a file written whole or not at all, word arguments as strings, progress
on stderr, and the hand-over to PyTorch, TransformerLens and ONNX through a weights file.
"""

import json
import os
import tempfile
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from . import _core
from .certified import UncertifiedFormatWarning
from .circuit_check import check_circuit, reference_words
from .arguments import checked
from .errors import require
from .progress_line import ProgressLine

Word = Union[str, Sequence[str]]
Progress = Union[bool, Callable[["_core.VerifyProgress"], None]]


def _tokens(word: Word) -> List[str]:
    """A word as letter arguments, read as `krc run` reads its command line: a string that is a
    letter is that letter; another is split by tabs, else by spaces and the commas outside
    brackets ("SYN(V,V,0),ACK(V,V,0)": two letters), and a piece that is no letter but spells
    one-character letters, such as "0110", is read letter by letter."""
    if isinstance(word, str):
        return [word]
    return [str(letter) for letter in word]


def _from_weights_bytes(data: bytes, source: str) -> "Network":
    return Network(_core.load_bytes(data, source))


class Network:
    """A compiled transformer: ``krc.compile`` and ``krc.load`` return one.

    Its parts: ``layers`` (each with ``heads``, typed ``role`` on every head, MLP block and
    residual subspace), ``residual_labels`` (one per residual dimension), ``subspaces``,
    ``vocabulary`` ("<bos>" then the letters), ``states``; for a network compiled in this
    process also ``strategy``, ``reason`` and ``plan`` (a ScanPlan, KrPlan or OneLayerPlan).
    """

    def __init__(self, core: "_core.Network") -> None:
        self._core = core

    # ---- what it is
    @property
    def automaton(self) -> "_core.Automaton":
        """The automaton the network computes (stored in its weights file)."""
        return self._core.automaton

    @property
    def max_len(self) -> int:
        return self._core.max_len

    @property
    def vocabulary(self) -> List[str]:
        return self._core.vocabulary

    @property
    def letters(self) -> List[str]:
        return self._core.vocabulary[1:]

    @property
    def states(self) -> List[str]:
        return self._core.states

    @property
    def d_model(self) -> int:
        return self._core.d_model

    @property
    def size(self) -> "_core.NetworkSize":
        return self._core.size

    @property
    def layers(self) -> List["_core.Layer"]:
        return self._core.layers

    @property
    def residual_labels(self) -> List[str]:
        return self._core.residual_labels

    @property
    def subspaces(self) -> List["_core.ResidualSubspace"]:
        return self._core.subspaces

    @property
    def attention(self) -> str:
        """The attention it was compiled for: "softmax" or "hard"."""
        return self._core.attention

    @property
    def strategy(self) -> Optional[str]:
        """"scan", "kr" or "onelayer"; None for a network loaded from a file."""
        return self._core.strategy

    @property
    def reason(self) -> Optional[str]:
        return self._core.reason

    @property
    def plan(self) -> Union["_core.ScanPlan", "_core.KrPlan", "_core.WalkPlan",
                            "_core.OneLayerPlan", None]:
        """The plan of the strategy used (kr: its cascade, or its clamped walk); None for a
        network loaded from a file."""
        kr = self._core.kr_plan if self._core.kr_plan is not None else self._core.walk_plan
        return {"scan": self._core.scan_plan, "kr": kr,
                "onelayer": self._core.onelayer_plan}.get(self.strategy or "")

    @property
    def compiler(self) -> Any:
        """The weights file's `compiler` metadata (runtime/README.md), as Python values."""
        import json
        return json.loads(self._core.compiler_json)

    def __reduce__(self) -> Any:
        """Pickles as the weights file's bytes (for multiprocessing workers); the plans of a
        network compiled in this process do not travel (as after krc.load)."""
        return (_from_weights_bytes, (self._core.to_safetensors(False), self._core.source))

    def __repr__(self) -> str:
        return "<krc.Network %s: %s>" % (self.automaton.name, self._core.size_line())

    @checked
    def summary(self) -> str:
        """The size line and the layers, as `krc info` prints them."""
        return self._core.size_line() + "\n" + self._core.layers_text()

    # ---- the weights file
    @checked
    def save(self, path: Union[str, "os.PathLike[str]"], dense: bool = False) -> None:
        """Writes the weights file (safetensors), whole or not at all: a temporary file beside
        it, renamed over it (the krc command's writer). A device or FIFO is written in place,
        never replaced; a directory is refused (krc.InputError naming `path`). dense=True
        stores every tensor dense."""
        _core.write_file(os.fspath(path), self._core.to_safetensors(dense), [], "path")

    @checked
    def to_hf(self, directory: Union[str, "os.PathLike[str]"], allow_inexact: bool = False,
              max_bytes: int = 2 << 30) -> str:
        """Writes the network as a stock Hugging Face GPT-2 checkpoint and returns its path.

        The directory (created if missing, or an earlier checkpoint's, replaced whole; a
        directory holding other files is refused) receives config.json (GPT2LMHeadModel, float32),
        model.safetensors, krc_vocab.json ({"bos": id, "letters": {letter: id}, "states":
        {state: id}}), krc_gpt2.json (krc's residual labels and head roles) and krc_circuit.json
        (the circuit file, Network.circuit(), with each node's GPT-2 module); the files are
        the ones ``krc export --format gpt2`` writes, the directory appearing whole. Load it with
        no custom code::

            model = transformers.AutoModelForCausalLM.from_pretrained(
                path, attn_implementation="eager")   # float32; argmax per position = state

        Every LayerNorm is the identity bit for bit on PyTorch's CPU (compiler/README.md §7), so
        the state logits equal ``run``'s float32 logits. krc_gpt2.json's "formats" says which
        torch dtypes the checkpoint is exact in (float32; bfloat16 and float16 where the
        network is certified in them, as ``--precision bf16|fp16`` networks are: their
        LayerNorms then use gamma 2^15, which float16 holds); a format the network is certified
        in but the checkpoint is not raises krc.certified.UncertifiedFormatWarning. A network
        for which krc cannot prove the identity (a softmax leak that may fall below 2^-96)
        raises krc.InputError naming the reason,
        unless allow_inexact=True: then it is written, a RuntimeWarning says why, and each value
        such a LayerNorm rounds moves by at most 2^-120. krc.LimitError past max_bytes of
        tensors.
        """
        files, exactness = self._core.to_gpt2(allow_inexact, max_bytes)
        directory = os.fspath(directory)
        # Built beside its target and renamed into place in one step (the krc command's
        # writer): never a partial checkpoint; an existing directory only when it holds nothing
        # but a checkpoint's files.
        inputs = [self._core.source] if self._core.source else []
        _core.write_directory(directory, list(files), inputs, "directory")
        if not exactness["exact"]:
            warnings.warn("%s is not provably exact: %s" % (directory, exactness["reason"]),
                          RuntimeWarning, stacklevel=2)
            return directory
        for name, f in exactness["formats"].items():
            if f["network_certified"] and not f["kept"]:
                warnings.warn("%s is not exact in %s, though the network is: %s"
                              % (directory, name, f["why"]), UncertifiedFormatWarning,
                              stacklevel=2)
        return directory

    @contextmanager
    def _weights_file(self) -> Iterator[str]:
        with tempfile.TemporaryDirectory(prefix="krc-") as directory:
            path = os.path.join(directory, self.automaton.name + ".safetensors")
            self.save(path)
            yield path

    # ---- running it
    def _warn_if_uncertified(self, arithmetic: str) -> None:
        """arithmetic "bf16" or "fp16" where the network is not certified in it: an
        UncertifiedFormatWarning naming the formats it is exact in (`krc run --arithmetic`
        says the same on stderr). stacklevel: the caller of run or verify, past @checked."""
        from .certified import warn_if_uncertified
        dtype = {"bf16": "bfloat16", "fp16": "float16"}.get(arithmetic)
        if dtype:
            warn_if_uncertified({"compiler": self._core.compiler_json}, dtype,
                                "the network %s" % self.automaton.name, stacklevel=5)

    @checked
    def run(self, word: Word, attention: Optional[str] = None,
            arithmetic: str = "float32") -> "_core.RunResult":
        """The network's state after every prefix of `word` (letters as a list, or one string
        split as `krc run` splits it: tabs, else spaces and commas outside brackets), with the margins and the automaton's states beside them.
        attention: "softmax", "hard" or "hardmax" (default: what it was compiled for);
        arithmetic: "float32" (a plain float32 framework), "float64-accumulate", "float64", or
        "bf16"/"fp16" (the model cast to that format; an UncertifiedFormatWarning where the
        network is not certified in it).
        The forward pass is prepared on the first call for each attention and arithmetic and kept
        with the network, so later calls only run the word."""
        self._warn_if_uncertified(arithmetic)
        return self._core.run(_tokens(word), attention, arithmetic)

    @checked
    def verify(self, exhaustive: Optional[int] = None, random: Optional[int] = None,
               length: Optional[int] = None, seed: int = 1, attention: Optional[str] = None,
               arithmetic: str = "float32", threads: int = 0,
               progress: Progress = True) -> "_core.VerifyReport":
        """Checks every position of every word of length `exhaustive` (default: the longest
        with at most 100,000 words) and `random` seeded random words of length `length`
        (default: max_len) against the automaton. Returns the report; report.ok says whether
        every position was right, report.counterexample shows the first wrong word.
        progress: True prints a line on stderr once the run takes more than two seconds, a
        callable receives a VerifyProgress after every batch of words, False is quiet."""
        self._warn_if_uncertified(arithmetic)
        line = ProgressLine() if progress is True else None
        callback = line if line else (progress if callable(progress) else None)
        try:
            return self._core.verify(exhaustive, random, length, seed, attention, arithmetic,
                                     threads, callback)
        finally:
            if line:
                line.clear()

    # ---- the circuit
    @checked
    def circuit(self, granularity: str = "head", check: bool = False,
                max_exhaustive_words: int = 512, random: int = 32, length: int = 0,
                seed: int = 1, ablation: str = "zero",
                reference: Optional[Sequence[Sequence[str]]] = None) -> Dict[str, Any]:
        """The network's circuit as the dict `krc circuit` writes (runtime/README.md, "The
        circuit file"): MIB's circuit JSON (cfg, nodes ``input``, ``a{L}.h{H}``, ``m{L}``,
        ``logits``, edges ``a0.h1->m2``, ``input->a1.h0<q>``) with krc's typed roles and
        meanings beside, edges derived from the weights' supports. granularity: "head" (one
        unit of ablation per edge) or "subspace" (one per edge and residual subspace).
        check=True runs the zero-ablation check in krc's runtime (float64): everything outside
        the circuit ablated must leave every position right (result["check"]["circuit_only"]),
        and each unit alone ablated gets a witness word or is marked redundant. Tested words:
        all words of the longest length with at most `max_exhaustive_words` words, and `random`
        seeded random words of length `length` (0: min(max_len, 24)).

        ablation="mean" (with check=True): an ablated unit's contribution is replaced by its
        writer's output averaged over the reference words position by position, not removed;
        `reference` (lists of letters; None: the tested words) must reach every tested
        position. The file's "ablation" then says mean, and ``check["zero_only"]`` lists the
        units mean ablation leaves redundant that zero ablation needs (each with its
        ``zero_ablation_witness``)."""
        return dict(json.loads(self._core.circuit(granularity, check, max_exhaustive_words,
                                                  random, length, seed, ablation,
                                                  reference_words(reference))))

    @checked
    def check_circuit(self, circuit: Optional[Dict[str, Any]] = None, framework: str = "torch",
                      dtype: Optional[str] = None, granularity: str = "head",
                      max_exhaustive_words: int = 512, random: int = 32, length: int = 0,
                      seed: int = 1, ablation: str = "zero",
                      reference: Optional[Sequence[Sequence[str]]] = None) -> Dict[str, Any]:
        """The circuit's ablation check (runtime/README.md, "The circuit file") in
        `framework`, as a report of the shape of ``circuit(check=True)["check"]``:
        ``circuit_only`` (positions, wrong, first_wrong) with everything outside the circuit
        ablated, ``units``, ``necessary``, ``redundant`` (the units no tested word needs),
        ``words``, ``framework`` and ``arithmetic``.

        framework="krc": the C++ check ``circuit(check=True)`` runs, in krc's runtime in
        float64 (dtype None or "float64"); `circuit` must be None: the runtime checks the
        circuit it derives itself.

        framework="torch": the network's PyTorch module (``to_torch()``, dense) in `dtype`
        (None or "float32", krc's arithmetic, or "float64"), through krc.torch_circuit: each
        reader's input (a head's q, k, v, an MLP, the logits) rebuilt from the circuit's
        in-graph units with the module's own layers. `circuit` (default:
        ``circuit(granularity, check=True)`` with the same word options, so that it carries the
        runtime's witnesses) is the dict of a circuit file; a unit it marks necessary is
        ablated alone on its witness word, which must change the answer there (``witnesses``:
        claimed, confirmed, failed, same_ablated_answer), and any other unit is searched for a
        witness among the tested words: the words krc's runtime check tests, from krc._core
        (all words of the longest length with at most `max_exhaustive_words` words, and
        `random` words of `length`, 0: min(max_len, 24), drawn by the runtime's generator from
        `seed`). ``unit_witnesses`` gives each necessary unit's witness here.

        ablation: "zero" (a unit's contribution removed) or "mean" (replaced by its writer's
        output averaged, position by position, over `reference`: lists of letters, None: the
        tested words; as TransformerLens's mean ablation averages over the batch). Under mean
        the report adds ``reference`` and ``zero_only``: the units mean ablation leaves
        redundant that zero ablation needs (runtime/README.md, "Mean ablation"). Under both,
        ``components`` (count, necessary, redundant; under mean zero_only) ablates each head and
        MLP block of the circuit whole."""
        return check_circuit(self, circuit, framework, dtype, granularity, max_exhaustive_words,
                             random, length, seed, ablation, reference)

    # ---- pictures
    @checked
    def draw(self, path: Union[str, "os.PathLike[str]"], word: Optional[Word] = None,
             attention: bool = False) -> None:
        """Writes a picture of the network to `path`, its format from the extension (.svg,
        .png, or .dot for the Graphviz graph itself), the same bytes `krc draw` writes: layers
        left to right, heads a{L}.h{H} and MLP blocks m{L} as boxes coloured and labelled by their
        typed roles (cascade level, component, counter, scan step), the residual stream as lanes
        of named subspaces with each head's q, k, v reads and its writes. attention=True with a
        `word` draws every head's attention pattern on that word instead (a grid per head,
        dense float64 pass, the attention the network was compiled for)."""
        path = os.fspath(path)
        data = self._core.draw(path, None if word is None else _tokens(word), attention)
        _core.write_file(path, data, [self._core.source] if self._core.source else [], "path")

    @checked
    def attention_patterns(self, word: Word, dtype: Any = None) -> Dict[str, Any]:
        """Every head's attention weights on `word` (a list of letters, or one string of
        letters separated by spaces), from the PyTorch module (float32 unless `dtype` says):
        {"tokens": ["<bos>", letters...], "heads": ["a{L}.h{H}", ...] (the circuit file's
        names), "roles": [each head's typed role], "patterns": tensor [heads, T, T], query
        positions down, key positions across} (krc.attention_view)."""
        from .attention_view import attention_patterns
        return attention_patterns(self, self._letters(word), dtype)

    @checked
    def attention_view(self, word: Word,
                       path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Any:
        """CircuitsVis's picture of every head's attention on `word`, each head labelled
        "a{L}.h{H} role": a notebook shows it as the cell's value. With `path`, also writes it
        as one self-contained HTML file (no network connection needed to open it). Needs the
        extra krc[vis]."""
        from .attention_view import attention_view
        return attention_view(self, self._letters(word),
                              None if path is None else os.fspath(path))

    def _letters(self, word: Word) -> List[str]:
        """The word's letters as `run` reads them (its refusals: unknown letter, too long)."""
        return list(self._core.run(_tokens(word)).letters)

    # ---- other frameworks (their modules import torch, onnx... only when called)
    @checked
    def to_torch(self, device: Any = None, dtype: Any = None, **options: Any) -> Any:
        """The network as a PyTorch module (krc.torch_module.load_torch); options are its
        keywords: sparse=True keeps the layers' weight matrices sparse, for networks too large
        to be dense; max_dense_bytes; uniform."""
        require(["torch", "safetensors"], "torch", "Network.to_torch")
        from .certified import UncertifiedFormatWarning, warn_if_uncertified
        from .torch_module import load_torch
        # torch.bfloat16 -> "bfloat16"; warned here, naming the network, not a temporary file.
        name = dtype if isinstance(dtype, str) else str(dtype).replace("torch.", "")
        if dtype is not None:
            warn_if_uncertified({"compiler": self._core.compiler_json}, name,
                                "the network %s" % self.automaton.name, stacklevel=4)
        with self._weights_file() as path, warnings.catch_warnings():
            warnings.simplefilter("ignore", UncertifiedFormatWarning)
            return load_torch(path, device=device, dtype=dtype, **options)

    @checked
    def to_transformer_lens(self, **options: Any) -> Any:
        """The network as a TransformerLens 4 TransformerBridge (krc.tl_bridge)."""
        require(["torch", "safetensors", "transformer_lens"], "lens",
                "Network.to_transformer_lens")
        from .tl_bridge import to_transformer_lens
        with self._weights_file() as path:
            return to_transformer_lens(path, **options)

    @checked
    def to_onnx(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the network as an ONNX model to `path` (krc.onnx_export)."""
        require(["torch", "safetensors", "onnx"], "onnx", "Network.to_onnx")
        from .onnx_export import to_onnx
        with self._weights_file() as weights:
            to_onnx(weights, os.fspath(path))

