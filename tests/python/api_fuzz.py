"""The argument fuzz of krc's Python API (issue 33, item 4), run by test_api_fuzz.py.

Cases are generated from the signatures, not written one by one: every public function and
method (krc.__all__'s functions, the methods of Network, Automaton, Decomposition and
Skeleton) is read with inspect.signature, or from the stubs (krc/_core.pyi) for the C++
classes, and each parameter gets the wrong types and out-of-range values its annotation
allows to be derived (`bad_values`): an int gets a string, a float, a list, an object, None
(where it is not Optional), -1, 2**64 and -2**63; a name (a str chosen from a closed set) gets
a number, a list, bytes, an unknown name and a NUL byte; a path gets a number, a missing
directory, a directory holding another file, "" and a NUL byte; and so on. The other
arguments are valid.

`python api_fuzz.py GROUP FIRST` runs the cases of GROUP from index FIRST in this process and
prints one JSON line (after MARK: a library may print too) as each case begins and one with its
outcome, so that the parent can
time every case, and name the one that crashed or hung and go on after it.
"""

import ast
import importlib
import inspect
import json
import os
import sys
import tempfile

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "automata", "zoo")

# str parameters holding free text (any value is valid); every other str names one of a closed
# set (a strategy, a state, a letter, a format), so an unknown name must be refused.
FREE_TEXT = {"name", "description", "file", "text", "pattern"}

# The keywords behind **options of Network.to_torch and to_transformer_lens: their loaders'.
OPTIONS_OF = {"to_torch": ("krc.torch_module", "load_torch", {"path", "device", "dtype"}),
              "to_transformer_lens": ("krc.tl_bridge", "to_transformer_lens", {"path"})}

FRAMEWORK_METHODS = ("to_torch", "to_transformer_lens", "to_onnx", "check_circuit")
MARK = "@krc-fuzz "

# Values that are valid and ask for hours of work, which krc honours (Ctrl-C stops it): run
# nowhere, each with its reason.
SLOW = {
    # 2**31-1 random words: within krc verify's bound of 10**12, hours of verification.
    "krc.Network.verify(random=2**31-1)": "two billion words asked for",
}


def say(message):
    print(MARK + json.dumps(message), flush=True)


class Opaque:
    """An object of no type krc takes."""

    def __repr__(self):
        return "<Opaque>"


def stub_signatures():
    """{"Class.method" or "function": [(name, annotation text, has_default)]} from _core.pyi."""
    import krc

    tree = ast.parse(open(os.path.join(os.path.dirname(krc.__file__), "_core.pyi")).read())
    out = {}

    def read(function, prefix):
        args = function.args.args
        defaults = [False] * (len(args) - len(function.args.defaults)) + \
            [True] * len(function.args.defaults)
        out[prefix + function.name] = [
            (a.arg, ast.unparse(a.annotation) if a.annotation else "Any", d)
            for a, d in zip(args, defaults) if a.arg != "self"]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            read(node, "")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    read(item, node.name + ".")
    return out


def python_signature(function):
    """[(name, annotation text, has_default)] of a Python function; **options expanded to the
    keywords of the loader it passes them to (zoo's: n)."""
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.name == "self":
            continue
        if p.kind == p.VAR_KEYWORD:
            if function.__name__ == "zoo":
                out.append(("n", "Optional[int]", True))
            elif function.__name__ in OPTIONS_OF:
                module, name, skip = OPTIONS_OF[function.__name__]
                loader = getattr(importlib.import_module(module), name)
                out += [q for q in python_signature(loader) if q[0] not in skip]
            continue
        annotation = "Any" if p.annotation is p.empty else inspect.formatannotation(p.annotation)
        if p.default is None and "Optional" not in annotation:
            annotation = "Optional[%s]" % annotation  # None is its default, so valid
        out.append((p.name, annotation, p.default is not p.empty))
    return out


def kind_of(name, annotation):
    """(kind, optional) of a parameter, from its annotation (and, for untyped ones, its name)."""
    a = annotation.replace("typing.", "")
    optional = "Optional" in a or "None" in a
    if "Automaton" in a:
        return "automaton", optional
    if "PathLike" in a or name in ("path", "directory"):
        return "path", optional
    if "Callable" in a or name == "progress":
        return "callable", optional
    if "Sequence[Sequence[int]]" in a:
        return "int_table", optional
    if "Sequence[int]" in a:
        return "ints", optional
    if name in ("word", "tokens") or "Sequence[str]" in a or "Iterable[str]" in a:
        return "strings", optional
    if "bool" in a and "int" not in a:
        return "bool", optional
    if "int" in a:
        return "int", optional
    if "str" in a:
        return ("text" if name in FREE_TEXT else "name"), optional
    return "any", optional


def bad_values(kind, optional, scratch):
    """[(label, value, must_raise)] for a parameter of `kind`. must_raise False: a value that is
    large but may be valid (2**31-1 as a limit): returning is fine, within the time and memory
    every case has."""
    wrong = [("object", Opaque(), True)]
    if not optional:
        wrong.append(("None", None, True))
    if kind == "int":
        return wrong + [("str", "7", True), ("float", 7.5, True), ("list", [7], True),
                        ("-1", -1, True), ("2**64", 2**64, True), ("-2**63", -2**63, True),
                        ("2**31-1", 2**31 - 1, False), ("2**63-1", 2**63 - 1, False)]
    if kind == "bool":
        return wrong + [("str", "yes", True), ("float", 0.5, True), ("list", [], True)]
    if kind in ("name", "text"):
        cases = wrong + [("int", 7, True), ("list", ["x"], True)]
        if kind == "name":  # (free text in the core takes bytes as UTF-8, as pybind11 does)
            cases += [("bytes", b"x", True), ("unknown", "no-such-name", True),
                      ("NUL", "a\0b", True)]
        return cases
    if kind == "path":
        return wrong + [("int", 7, True), ("list", ["x"], True), ("empty", "", True),
                        ("NUL", "a\0b", True),
                        ("missing-dir", os.path.join(scratch, "missing", "x"), True),
                        ("directory", os.path.join(scratch, "full"), True)]
    if kind == "callable":
        return wrong + [("str", "yes", True), ("int", 7, True)]
    if kind == "strings":
        return wrong + [("int", 7, True), ("numbers", [1, 2], True),
                        ("unknown", ["no-such-letter"], True)]
    if kind == "ints":
        return wrong + [("int", 7, True), ("strings", ["a"], True), ("negative", [-1], True),
                        ("huge", [2**40], True), ("empty", [], True)]
    if kind == "int_table":
        return wrong + [("int", 7, True), ("strings", [["a"]], True), ("negative", [[-1]], True),
                        ("huge", [[2**40]], True), ("ragged", [[0], []], True)]
    if kind == "automaton":
        return wrong + [("int", 7, True), ("str", "parity.json", True)]
    return wrong + [("int", 7, True), ("unknown", "no-such-name", True)]


class Fixtures:
    """The valid objects the cases call: a small automaton, its network and decomposition, and
    a valid value for every required parameter."""

    def __init__(self, scratch):
        import krc

        self.scratch = scratch
        os.makedirs(os.path.join(scratch, "full"), exist_ok=True)
        open(os.path.join(scratch, "full", "other.txt"), "w").write("not krc's\n")
        self.automaton_path = os.path.join(ZOO, "flipflop_2.json")
        self.automaton = krc.load_automaton(self.automaton_path)
        self.network = krc.compile(self.automaton, max_len=8)
        self.weights = os.path.join(scratch, "net.safetensors")
        self.network.save(self.weights)
        self.decomposition = krc.decompose(self.automaton)
        state, letter = self.automaton.states[0], self.automaton.letters[0]
        self.valid = {
            "path": self.weights, "text": open(self.automaton_path).read(),
            "automaton": self.automaton, "name": "flipflop", "pattern": "a*b",
            "model": None, "fa": None, "bytes": 1 << 30, "state": state, "letter": letter,
            "word": [letter], "tokens": [letter], "coordinates": self.decomposition.encode(state),
            "set": 0, "cls": 0, "directory": os.path.join(scratch, "hf"),
            "states": list(self.automaton.states), "letters": list(self.automaton.letters),
            "transitions": [list(r) for r in self.automaton.transitions],
            "initial": self.automaton.initial,
        }
        out = lambda name: os.path.join(scratch, name)  # noqa: E731
        self.overrides = {"krc.load_automaton": {"path": self.automaton_path},
                          "krc.Network.save": {"path": out("saved.safetensors")},
                          "krc.Network.draw": {"path": out("picture.dot")},
                          "krc.Network.to_onnx": {"path": out("net.onnx")},
                          "krc.Skeleton.successor": {"letter": 0}}


def targets(f):
    """{group: [(label, callable, parameters)]}: the public API; "frameworks" holds the methods
    that import torch, run in a process of their own."""
    import krc

    stubs = stub_signatures()
    core, frameworks = [], []
    for name in krc.__all__:
        obj = getattr(krc, name)
        if name in stubs:  # of the core: set_max_memory, zoo_families
            core.append(("krc." + name, obj, stubs[name]))
        elif inspect.isfunction(obj):
            core.append(("krc." + name, obj, python_signature(obj)))
    core.append(("krc.Automaton", krc.Automaton, stubs["Automaton.__init__"]))
    for cls, instance in (("Automaton", f.automaton), ("Decomposition", f.decomposition),
                          ("Skeleton", f.decomposition.skeleton)):
        for key, params in stubs.items():
            if key.startswith(cls + ".") and not key.endswith("__init__") and params:
                method = key.split(".", 1)[1]
                core.append(("krc.%s.%s" % (cls, method), getattr(instance, method), params))
    for name, member in inspect.getmembers(krc.Network, inspect.isfunction):
        if name.startswith("_") or not python_signature(member):
            continue
        group = frameworks if name in FRAMEWORK_METHODS else core
        group.append(("krc.Network." + name, getattr(f.network, name), python_signature(member)))
    return {"core": core, "frameworks": frameworks}


def cases(group, f):
    """[(label, call, must_raise, parameter)] of a group, in a fixed order."""
    out = []
    for label, function, params in targets(f)[group]:
        valid = dict(f.valid, **f.overrides.get(label, {}))
        required = {n: valid.get(n) for n, _, has_default in params if not has_default}
        if label in ("krc.from_aalpy", "krc.from_automata_lib", "krc.from_pyformlang"):
            params = [p for p in params if p[0] in ("model", "fa")]  # the rest needs the package
        for name, annotation, _ in params:
            kind, optional = kind_of(name, annotation)
            for value_label, value, must_raise in bad_values(kind, optional, f.scratch):
                arguments = dict(required, **{name: value})
                out.append(("%s(%s=%s)" % (label, name, value_label),
                            (lambda fn=function, a=arguments: fn(**a)), must_raise, name))
    return out


def run_group(group, first):
    import resource

    import krc

    krc.set_max_memory(1 << 30)  # krc's own budget, well below the address-space limit
    with tempfile.TemporaryDirectory(prefix="krc-fuzz-") as scratch:
        f = Fixtures(scratch)
        all_cases = cases(group, f)
        say({"count": len(all_cases)})
        for i in range(first, len(all_cases)):
            label, call, must_raise, parameter = all_cases[i]
            say({"begin": i, "label": label})
            outcome = {"end": i, "label": label, "must_raise": must_raise, "parameter": parameter}
            if label in SLOW:
                say(dict(outcome, outcome="skipped", why=SLOW[label]))
                continue
            try:
                call()
                outcome["outcome"] = "returned"
            except BaseException as e:  # noqa: B902  (the test judges what it was)
                outcome.update(outcome="raised", type=type(e).__name__, message=str(e)[:400],
                               krc_error=isinstance(e, krc.KrcError),
                               type_or_value=isinstance(e, (TypeError, ValueError)))
            finally:
                krc.set_max_memory(1 << 30)  # a case of set_max_memory may have changed it
            outcome["peak_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            say(outcome)


if __name__ == "__main__":
    run_group(sys.argv[1], int(sys.argv[2]))
