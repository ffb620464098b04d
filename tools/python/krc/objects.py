"""Automata handed over as Python objects by the learning and automata libraries: AALpy's
models, automata-lib's DFA and NFA, pyformlang's finite automata (krc.from_aalpy,
krc.from_automata_lib, krc.from_pyformlang).

Each package is imported only when its function is called (a missing one raises
krc.MissingExtraError naming the extra `krc[learners]`). The object is turned into names and
index triples here, sizes bounded against krc's memory budget before anything is built, and the
builder every file reader uses (C++, `_core.build_automaton`) makes the automaton: a partial
acceptor is completed with a rejecting sink, a partial Mealy or Moore machine with a sink whose
outputs are "(undefined)" (each said by a krc.ReadingNote warning), an NFA or
epsilon moves are determinised, Mealy and Moore outputs are kept for krc.compile.
automata/README.md, "Python objects", documents the conventions.
"""

import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _core
from .errors import InputError, LimitError, ReadingNote, require

# What one transition costs while it is described and built: the Python tuple and its ints,
# the C++ vector entry and the builder's map node (a generous estimate, so that the refusal
# comes before the allocation, not after it).
_BYTES_PER_TRANSITION = 256
_BYTES_PER_STATE = 512
# A state's or letter's name longer than this is refused: names become tokens and labels.
MAX_NAME_LENGTH = 4096


def warn_notes(automaton, stacklevel: int = 4) -> None:
    """Raises the notes the builder made (the command line's `krc: note:` lines) as
    krc.ReadingNote warnings."""
    for note in getattr(automaton, "_notes", ()):
        warnings.warn(note, ReadingNote, stacklevel=stacklevel)


def _name(value: Any, source: str, what: str) -> str:
    """A readable name for a state, letter or output: a string stays itself; a set of names
    (a subset construction's state) is {a,b} sorted; a tuple (a,b); anything else str()."""
    try:
        if isinstance(value, str):
            name = value
        elif isinstance(value, (frozenset, set)):
            name = "{" + ",".join(sorted(_name(v, source, what) for v in value)) + "}"
        elif isinstance(value, tuple):
            name = "(" + ",".join(_name(v, source, what) for v in value) + ")"
        else:
            name = str(value)
    except InputError:
        raise
    except Exception as e:  # a hostile __str__ (or __repr__) raising
        raise InputError("%s: a %s whose str() raises %s: %s" % (source, what,
                                                                 type(e).__name__, e),
                         source, what, "str() raises %s" % type(e).__name__) from e
    if not isinstance(name, str):
        raise InputError("%s: a %s's str() is not a string" % (source, what), source, what,
                         "str() is not a string")
    if len(name) > MAX_NAME_LENGTH:
        raise InputError("%s: a %s's name is %d characters long (at most %d)"
                         % (source, what, len(name), MAX_NAME_LENGTH), source, what,
                         "name too long")
    return name


def _check_budget(source: str, states: int, transitions: int) -> None:
    """Refuses, before building, an object whose description would not fit krc's memory
    budget (krc.set_max_memory)."""
    need = states * _BYTES_PER_STATE + transitions * _BYTES_PER_TRANSITION
    budget = _core.max_memory()
    if need > budget:
        raise LimitError(
            "%s: %d states and %d transitions need about %d MiB to describe and build, over "
            "the memory budget of %d MiB (krc.set_max_memory raises it)"
            % (source, states, transitions, need >> 20, budget >> 20), option="max_memory")


class _Description:
    """Names and index triples, filled from an object and handed to _core.build_automaton.

    States are kept by identity (`key`): their names are only labels, so unhashable or equal
    names cannot merge two states. They are named by `_name` of their label when those are
    distinct and non-empty, otherwise all by their position (q0, q1, ...), said in a note.
    Letters must have distinct names: two letters that print alike would be one token.
    """

    def __init__(self, source: str, name: str):
        self.source, self.name = source, name
        self.state_index: Dict[Any, int] = {}
        self.state_labels: List[Any] = []
        self.letter_index: Dict[Any, int] = {}
        self.letters: List[str] = []
        self.transitions: List[Tuple[int, int, int]] = []
        self.epsilon: List[Tuple[int, int]] = []
        self.initial: List[int] = []
        self.accepting: List[int] = []
        self.mealy: List[Tuple[int, int, str]] = []
        self.moore: List[str] = []

    def state(self, key: Any, label: Any) -> int:
        if key not in self.state_index:
            self.state_index[key] = len(self.state_labels)
            self.state_labels.append(label)
        return self.state_index[key]

    def known(self, key: Any) -> Optional[int]:
        return self.state_index.get(key)

    def letter(self, symbol: Any) -> int:
        if symbol in self.letter_index:
            return self.letter_index[symbol]
        name = _name(symbol, self.source, "letter")
        if name in self.letters:
            raise InputError(
                "%s: two different letters are both named %r (%r and %r): a letter is a token "
                "named by its str()" % (self.source, name,
                                        self.letters_by_name()[name], symbol),
                self.source, "letter %r" % name, "two letters print alike")
        self.letter_index[symbol] = len(self.letters)
        self.letters.append(name)
        return self.letter_index[symbol]

    def letters_by_name(self) -> Dict[str, Any]:
        return {self.letters[i]: s for s, i in self.letter_index.items()}

    def build(self, complete: bool, acceptor: bool, max_subset_states: int):
        names = [_name(label, self.source, "state") for label in self.state_labels]
        notes = []
        if len(set(names)) != len(names) or "" in names:
            clash = "an empty name" if "" in names else "two that print alike"
            names = ["q%d" % i for i in range(len(names))]
            notes.append("%s: the states' names include %s: the states are named by their "
                         "position, q0 to q%d, in the order krc listed them"
                         % (self.source, clash, len(names) - 1))
        d = _core.ObjectDescription()
        d.file, d.name = self.source, self.name
        d.states, d.letters = names, self.letters
        d.transitions, d.epsilon = self.transitions, self.epsilon
        d.initial, d.accepting = self.initial, self.accepting
        d.mealy, d.moore = self.mealy, self.moore
        if acceptor and not self.accepting:
            complete = True  # the empty language: every missing transition rejects anyway
        automaton = _core.build_automaton(d, complete, acceptor, max_subset_states)
        automaton._notes = notes + list(getattr(automaton, "_notes", []))
        warn_notes(automaton, stacklevel=6)  # past from_*, @checked and krc.from_*
        return automaton


def _refuse(source: str, what: str, why: str):
    raise InputError("%s: %s, %s" % (source, what, why), source, "", "%s, %s" % (what, why))


def from_aalpy(model, complete: bool = False,
               max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES):
    require(["aalpy"], "learners", "krc.from_aalpy")
    from aalpy.automata import (Dfa, MarkovChain, MealyMachine, Mdp, MooreMachine,
                                NDMooreMachine, Onfsm, Sevpa, StochasticMealyMachine, Vpa)

    kind = type(model).__name__
    source = "<aalpy %s>" % kind
    for refused, why in (
            (Onfsm, "a nondeterministic Mealy machine: its output depends on the run taken, "
                    "and krc compiles deterministic machines (determinising drops outputs)"),
            (NDMooreMachine, "a nondeterministic Moore machine: its output depends on the run "
                             "taken, and krc compiles deterministic machines"),
            (Mdp, "a Markov decision process: its transitions are probabilities"),
            (MarkovChain, "a Markov chain: its transitions are probabilities"),
            (StochasticMealyMachine, "a stochastic Mealy machine: its transitions are "
                                     "probabilities"),
            (Sevpa, "a visibly pushdown automaton: it has a stack, so it is not finite-state"),
            (Vpa, "a visibly pushdown automaton: it has a stack, so it is not finite-state")):
        if isinstance(model, refused):
            _refuse(source, "AALpy's %s is %s" % (kind, why),
                    "krc reads AALpy's Dfa, MooreMachine and MealyMachine")
    if not isinstance(model, (Dfa, MooreMachine, MealyMachine)):
        raise TypeError("krc.from_aalpy: model must be AALpy's Dfa, MooreMachine or MealyMachine, not %s"
                        % type(model).__name__)
    states = list({id(s): s for s in model.states}.values())  # a state listed twice is one
    transitions = sum(len(s.transitions) for s in states)
    _check_budget(source, len(states), transitions)
    d = _Description(source, getattr(model, "name", None) or "aalpy_" + kind.lower())
    for s in states:
        d.state(id(s), s.state_id)
    if model.initial_state is None or d.known(id(model.initial_state)) is None:
        _refuse(source, "the initial state is not among model.states", "so it has no transitions")
    d.initial = [d.known(id(model.initial_state))]
    for s in states:
        q = d.known(id(s))
        for letter, target in s.transitions.items():
            to = d.known(id(target))
            if to is None:
                _refuse(source, "state %r goes on %r to a state that is not among model.states"
                        % (s.state_id, letter), "so its transitions are unknown")
            a = d.letter(letter)
            d.transitions.append((q, a, to))
            if isinstance(model, MealyMachine):
                if letter not in s.output_fun:
                    _refuse(source, "state %r has a transition on %r without an output"
                            % (s.state_id, letter), "which a Mealy machine needs")
                d.mealy.append((q, a, _name(s.output_fun[letter], source, "output")))
        if isinstance(model, Dfa) and s.is_accepting:
            d.accepting.append(q)
    if isinstance(model, MooreMachine):
        d.moore = [_name(s.output, source, "output") for s in states]
    return d.build(complete, isinstance(model, Dfa), max_subset_states)


def from_automata_lib(fa, complete: bool = False,
                      max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES):
    require(["automata.fa.dfa", "automata.fa.nfa"], "learners", "krc.from_automata_lib")
    from automata.fa.dfa import DFA
    from automata.fa.nfa import NFA

    kind = type(fa).__name__
    source = "<automata-lib %s>" % kind
    if not isinstance(fa, (DFA, NFA)):
        if type(fa).__module__.startswith("automata."):
            _refuse(source, "automata-lib's %s is not a finite automaton krc reads" % kind,
                    "krc reads automata-lib's DFA and NFA (a GNFA's regular-expression "
                    "transitions and the pushdown and Turing machines are not read)")
        raise TypeError("krc.from_automata_lib: fa must be automata-lib's DFA or NFA, not %s" % kind)
    nfa = isinstance(fa, NFA)
    states = sorted(fa.states, key=lambda s: _name(s, source, "state"))
    count = sum(len(v) if nfa else 1 for row in fa.transitions.values() for v in row.values())
    _check_budget(source, len(states), count)
    d = _Description(source, "automata_lib_" + kind.lower())
    for s in states:
        d.state(s, s)
    for symbol in sorted(fa.input_symbols, key=lambda a: _name(a, source, "letter")):
        d.letter(symbol)
    if d.known(fa.initial_state) is None:
        _refuse(source, "the initial state is not among its states", "")
    d.initial = [d.known(fa.initial_state)]
    for s in states:
        q = d.known(s)
        for symbol, targets in fa.transitions.get(s, {}).items():
            for t in (targets if nfa else [targets]):
                to = d.known(t)
                if to is None:
                    _refuse(source, "state %r goes on %r to %r, which is not among its states"
                            % (s, symbol, t), "")
                if nfa and symbol == "":  # automata-lib's epsilon move
                    d.epsilon.append((q, to))
                else:
                    d.transitions.append((q, d.letter(symbol), to))
    d.accepting = [d.known(s) for s in states if s in fa.final_states]
    return d.build(complete, True, max_subset_states)


def from_pyformlang(fa, complete: bool = False,
                    max_subset_states: int = _core.DEFAULT_MAX_SUBSET_STATES):
    require(["pyformlang.finite_automaton"], "learners", "krc.from_pyformlang")
    from pyformlang.finite_automaton import Epsilon, FiniteAutomaton

    kind = type(fa).__name__
    source = "<pyformlang %s>" % kind
    if not isinstance(fa, FiniteAutomaton):
        raise TypeError("krc.from_pyformlang: fa must be a pyformlang finite automaton "
                        "(DeterministicFiniteAutomaton, NondeterministicFiniteAutomaton, "
                        "EpsilonNFA), not %s" % kind)
    table = fa.to_dict()

    def targets(value) -> Iterable:
        return value if isinstance(value, (set, frozenset)) else [value]

    count = sum(len(list(targets(v))) for row in table.values() for v in row.values())
    # The states the transitions name besides fa.states (pyformlang adds them there, but a
    # hand-made object may not): all of them are states.
    all_states = set(fa.states) | set(table) | {t for row in table.values()
                                                for v in row.values() for t in targets(v)}
    all_states |= set(fa.start_states) | set(fa.final_states)
    _check_budget(source, len(all_states), count)
    d = _Description(source, "pyformlang_" + kind.lower())
    for s in sorted(all_states, key=lambda s: _name(s.value, source, "state")):
        d.state(s, s.value)
    symbols = [a for a in fa.symbols if not isinstance(a, Epsilon)]
    for a in sorted(symbols, key=lambda a: _name(a.value, source, "letter")):
        d.letter(a)
    d.initial = sorted(d.known(s) for s in fa.start_states)
    if not d.initial:
        _refuse(source, "the automaton has no start state", "so its language is empty")
    for s, row in table.items():
        q = d.known(s)
        for symbol, value in row.items():
            for t in targets(value):
                if isinstance(symbol, Epsilon):
                    d.epsilon.append((q, d.known(t)))
                else:
                    d.transitions.append((q, d.letter(symbol), d.known(t)))
    d.accepting = sorted(d.known(s) for s in fa.final_states)
    return d.build(complete, True, max_subset_states)
