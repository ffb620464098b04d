"""krc: compile finite automata into transformers, and prove them right by running them.

    import krc
    net = krc.compile(krc.zoo("gridworld", n=9), max_len=256)   # a krc.Network
    report = net.verify()                                       # report.ok, report.text
    net.run("R R L").states                                     # the state after every prefix
    net.save("g9.safetensors"); krc.load("g9.safetensors")
    net.to_torch(); net.to_transformer_lens(); net.to_onnx("g9.onnx")

The C++ core (krc._core) does the work and returns typed objects; bad input raises
krc.InputError (file, place, problem), a limit krc.LimitError (option). tools/README.md,
"Python package", documents every function and type. Importing krc never imports torch.
"""

import json
import os
import re
from typing import Callable, Iterable, Optional, Union

from . import _core
from .arguments import checked, make_readable

# pybind11's refusals of wrong arguments become TypeError/ValueError naming the argument.
make_readable(_core, [c for c in vars(_core).values() if type(c).__name__ == "pybind11_type"])

from ._core import (Automaton, Component, Counterexample, Decomposition, DecompositionLevel,
                    Group, KrPlan, Layer, OneLayerPlan, Role, RunResult, ScanPlan, Skeleton,
                    VerifyProgress, VerifyReport, ZooFamily, set_max_memory,
                    zoo_families)
from .errors import (InputError, KrcError, LimitError, MissingExtraError, ReadingNote,
                     VerificationError)
from .network import Network
from .objects import warn_notes as _warn_notes

__version__ = _core.__version__

__all__ = [
    "Automaton", "Component", "Counterexample", "Decomposition", "DecompositionLevel", "Group",
    "InputError", "KrPlan", "KrcError", "Layer", "LimitError", "MissingExtraError", "Network",
    "OneLayerPlan", "ReadingNote", "Role",
    "RunResult", "ScanPlan", "Skeleton", "VerificationError", "VerifyProgress", "VerifyReport",
    "ZooFamily",
    "compile", "decompose", "from_aalpy", "from_automata_lib", "from_pyformlang", "from_regex",
    "load", "load_automaton", "parse_automaton",
    "set_max_memory", "suite", "zoo", "zoo_families",
]


@checked
def load_automaton(path: Union[str, "os.PathLike[str]"], input_format: Optional[str] = None,
                   complete: bool = False, initial: Optional[str] = None,
                   no_determinise: bool = False,
                   max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES,
                   etf_label: Optional[str] = None) -> Automaton:
    """Reads an automaton description: krc's JSON (and FlexFringe's JSON output), Graphviz DOT
    (AALpy, LearnLib, FlexFringe, MONA, Spot), JFLAP .jff, HOA, Aldebaran .aut, RABIT .ba,
    GOAL .gff, AutomataLib .taf, mCRL2/LTSmin .fsm, mata .mata, LTSmin .etf or Stamina .adl,
    gzip-compressed or not ("-" reads standard input). input_format: "json", "dot", "jff",
    "hoa", "aut", "ba", "gff", "taf", "fsm", "vtf", "etf" or "adl" when the extension does not
    say; complete: complete a partial DFA with a sink state instead of failing (a partial
    acceptor is completed anyway with a rejecting sink, a partial Mealy or Moore machine with a
    sink whose outputs are "(undefined)"; a file with neither accepting states nor outputs
    needs it); initial: the initial
    state by name; no_determinise: refuse an NFA instead of determinising it;
    max_subset_states: the most states the subset construction may make; etf_label: for an
    LTSmin ETF file, the edge label whose values are the letters (None: the only one, else the
    first whose sort or name begins with "action", else the first; a name the file lacks raises
    InputError listing its labels) (the options of `krc compile`). A Mealy or Moore file's outputs stay on the Automaton, for
    krc.compile. A bad file raises InputError naming the file, the place (line and column,
    JSON pointer) and the problem. What a convention decided (a partial acceptor completed
    with a rejecting sink state, a partial Mealy or Moore machine with an undefined output, an
    NFA determinised, the first state taken as initial) is
    said by a krc.ReadingNote warning, as the command line says it in a `krc: note:` line."""
    automaton = _core.load_automaton(os.fspath(path), input_format, complete, initial,
                                     no_determinise, max_subset_states, etf_label)
    _warn_notes(automaton)
    return automaton


@checked
def parse_automaton(text: str, file: str = "<string>", input_format: Optional[str] = None,
                    complete: bool = False, initial: Optional[str] = None,
                    no_determinise: bool = False,
                    max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES,
                    etf_label: Optional[str] = None) -> Automaton:
    """load_automaton for text in memory; `file` names it in messages (and, for formats that
    do not name the automaton, gives its name). Notes as krc.ReadingNote warnings."""
    automaton = _core.parse_automaton(text, file, input_format, complete, initial,
                                      no_determinise, max_subset_states, etf_label)
    _warn_notes(automaton)
    return automaton


@checked
def from_aalpy(model, complete: bool = False,
               max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES) -> Automaton:
    """The automaton of an AALpy model (`pip install 'krc[learners]'`; aalpy is imported only
    here): a Dfa (output: acceptance), a MooreMachine (each state's output) or a MealyMachine
    (each transition's output), kept on the Automaton so that krc.compile answers what
    `model.execute_sequence` answers at every prefix (a Mealy network answers "-" at position
    0, before any letter). States are named by their state_id, letters by str() of AALpy's
    inputs, in order of first appearance over model.states. A partial Dfa is completed with a
    rejecting sink state (a krc.ReadingNote warning says so); a partial Moore or Mealy machine
    with a sink state whose outputs are "(undefined)" (where AALpy raises KeyError; also a
    ReadingNote; primed if the model outputs that name itself). Onfsm,
    NDMooreMachine (nondeterministic outputs), Mdp, MarkovChain, StochasticMealyMachine
    (probabilities), Sevpa and Vpa (a stack) raise InputError with the reason; too large a
    model LimitError (krc.set_max_memory); any other object TypeError.
    automata/README.md, "Python objects"."""
    from . import objects
    return objects.from_aalpy(model, complete, max_subset_states)


@checked
def from_automata_lib(fa, complete: bool = False,
                      max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES) -> Automaton:
    """The automaton of an automata-lib DFA or NFA (`pip install 'krc[learners]'`), an acceptor
    answering `fa.accepts_input(word)` at every prefix. States and letters are named by str()
    (a set of states as {a,b}) and listed sorted by name; an NFA (its epsilon moves, the
    symbol "", included) is determinised by krc's subset construction (a krc.ReadingNote says
    so), a partial DFA (allow_partial) completed with a rejecting sink state (a ReadingNote).
    A GNFA, a pushdown or Turing machine raises InputError. automata/README.md."""
    from . import objects
    return objects.from_automata_lib(fa, complete, max_subset_states)


@checked
def from_pyformlang(fa, complete: bool = False,
                    max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES) -> Automaton:
    """The automaton of a pyformlang DeterministicFiniteAutomaton, NondeterministicFiniteAutomaton
    or EpsilonNFA (`pip install 'krc[learners]'`), an acceptor answering `fa.accepts(word)` at
    every prefix: states and symbols named by str() of their values, sorted; several start
    states, nondeterminism and epsilon moves determinised by krc's subset construction, a
    partial DFA completed with a rejecting sink state (each said by a krc.ReadingNote).
    automata/README.md, "Python objects"."""
    from . import objects
    return objects.from_pyformlang(fa, complete, max_subset_states)


@checked
def from_regex(pattern: str, alphabet: Union[str, Iterable[str], None] = None,
               max_subset_states: int = 1 << 16) -> Automaton:
    """The minimal DFA of a regular expression under full matching, as `krc compile --regex`
    builds it (the same automaton, so the same network): states "accept", "reject",
    "accept#2"..., the accepting ones accepting. alphabet: the letters in token order, a list
    or a comma-separated string as --alphabet takes it ("a,b,c"); None: the letters the
    pattern names, in order of first appearance. The syntax (automata/README.md, "Regular
    expressions"): letters are characters or <name>; | * + ? {m} {m,n} {m,} {,n} ( ) (?:...)
    [abc] [^a] [a-d] . and \\ before punctuation; no backreferences, lookaround or anchors.
    A bad pattern raises InputError (place "column C"); too large a DFA raises LimitError."""
    if alphabet is not None and not isinstance(alphabet, str):
        alphabet = list(alphabet)
    return _core.from_regex(pattern, alphabet, max_subset_states)


@checked
def decompose(automaton: Automaton, tables: bool = True, max_images: int = 1 << 22,
              max_image_memory: int = 512 << 20, max_tuples: int = 2_000_000,
              max_table_cells: int = 32_000_000) -> Decomposition:
    """The holonomy (Krohn-Rhodes) decomposition: .levels (each with its components, their
    tiles and holonomy groups), .skeleton, encode/decode/apply on coordinates, .text().
    tables=False skips the complete action tables. A limit reached raises LimitError whose
    option names the keyword that raises it (max_image_memory is in bytes)."""
    return _core.decompose(automaton, tables, max_images, max_image_memory, max_tuples,
                           max_table_cells)


@checked
def zoo(name: str, **parameters: int) -> Automaton:
    """An automaton of the built-in zoo (`krc zoo` lists them): zoo("dihedral", n=5), or by its
    name, zoo("gridworld_9"). The only parameter is n (its default when left out); an unknown
    family or an n out of range raises InputError."""
    unknown = set(parameters) - {"n"}
    if unknown:
        raise TypeError("zoo() takes only the parameter n, not %s" % ", ".join(sorted(unknown)))
    n = parameters.get("n")
    families = {f.name for f in zoo_families()}
    match = re.fullmatch(r"(.+)_(\d+)", name)
    if name not in families and match and match.group(1) in families and n is None:
        name, n = match.group(1), int(match.group(2))
    return _core.zoo_automaton(name, n)


@checked
def compile(automaton: Automaton, strategy: str = "auto", max_len: int = 1024,
            attention: str = "softmax", max_onelayer_units: int = 2048,
            max_onelayer_values: int = 1 << 17,
            progress: Optional[Callable[[str], None]] = None, norm: str = "none",
            precision: str = "fp32", counting: str = "auto",
            output_kind: Optional[str] = None, certify: bool = False) -> Network:
    """Compiles an automaton into a transformer that outputs its state (or output) after every
    prefix: `krc compile` with the same options, defaults and bounds, giving the same bytes.

    strategy: "auto" (build those that fit, keep the fewest layers, then the fewest
    parameters), "kr" (Krohn-Rhodes cascade, depth independent of max_len), "scan" (parallel
    prefix, ceil(log2 max_len) layers) or "onelayer" (one attention layer; short words only).
    max_len: the longest word the network must handle. attention: "softmax" or "hard", what the
    network is meant to run with (verify and run use it by default). max_onelayer_units and
    max_onelayer_values: the onelayer strategy's limits. progress: called with a line per stage.
    norm: "none" or "layernorm" (`krc compile --norm`: the position fetches score with lambda 64,
    so they leak nothing and a scan network's Network.to_hf() is provably exact).
    precision: "fp32", "bf16" or "fp16", the format the network must be exact in (bf16/fp16
    admit only the scan's forms with a bound there, and raise LimitError otherwise).
    counting: kr's counter sums, "auto", "whole", "dyadic" or "blocks" (`krc compile
    --counting`). output_kind: what the network answers, "state", "accepting", "mealy" or
    "moore"; None: what the file carried (krc.load_automaton keeps a file's Mealy and Moore
    outputs on the Automaton), else "accepting" where it has accepting states, else "state":
    what `krc compile` decides. certify: prove the network as `krc certify` does (every word up
    to max_len, in the arithmetic precision names) before returning it, and record the claim
    in network.compiler["certified"]; where certify refuses or does not cover the network
    (today: scan networks), raise InputError with its reason (`krc compile
    --certify`).

    Returns a krc.Network: network.strategy, .reason and .plan say what was built and why;
    .layers, .residual_labels and .subspaces what it is made of. Raises LimitError when no
    strategy fits (the message says which limit), ValueError for a bad name or a value out of
    its bounds (max_len in [1, 1048576], as on the command line), TypeError for a wrong type.
    """
    return Network(_core.compile(automaton, strategy, max_len, attention, max_onelayer_units,
                                 max_onelayer_values, progress, norm, precision, counting,
                                 output_kind, certify))


@checked
def suite(directory: Union[str, "os.PathLike[str]"],
          files: Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]] = (),
          set: str = "small",
          strategies: Union[str, Iterable[str]] = ("kr", "scan"),
          norm: Union[str, Iterable[str]] = ("layernorm",), max_len: int = 64, random: int = 64,
          max_models: int = 64, max_bytes: int = 4 << 30,
          progress: Optional[Callable[[dict], None]] = None) -> dict:
    """Compiles many networks into one directory, ready to load in a loop: `krc suite` with the
    same options, defaults and bounds, writing the same bytes (tools/README.md, "A suite").

    The members are the zoo set `set` ("small": parity, flipflop_2, cyclic_3, gridworld_4;
    "zoo": every family at its default size; "none") and the automaton `files`, each compiled
    with every strategy of `strategies` and every norm of `norm` at `max_len`, and verified on
    all words of the longest length with at most 4,096 words and `random` random words. The
    directory holds manifest.json and, for each model AUTOMATON.STRATEGY.NORM, its
    weights.safetensors, circuit.json (Network.circuit()), verify.json (the report, timing left
    out) and gpt2/ (Network.to_hf's checkpoint) where the network allows one; the manifest's
    row says why not where it does not. It is built beside its target and renamed into place
    whole: any failure writes nothing. progress: called after each model with a dict (done,
    total, model, seconds, seconds_left, line).

    Returns the manifest (a dict). Raises InputError for a file that cannot be read or a
    strategy that refuses a member, LimitError past max_models models or max_bytes bytes,
    VerificationError when a network is found wrong, ValueError for a bad name or bound.
    """
    as_list = lambda v: [v] if isinstance(v, (str, os.PathLike)) else list(v)
    paths = [os.fspath(f) for f in as_list(files)]
    return json.loads(_core.suite(os.fspath(directory), paths, set, as_list(strategies),
                                  as_list(norm), max_len, random, max_models, max_bytes,
                                  progress))


@checked
def load(path: Union[str, "os.PathLike[str]"]) -> Network:
    """Reads a weights file written by Network.save or `krc compile`; every tensor and metadata
    field is checked, and a bad file raises InputError naming the tensor or key."""
    return Network(_core.load(os.fspath(path)))
