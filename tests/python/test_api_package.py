"""The package itself: importing it needs no torch, help() explains, the stubs name what the
extension has, the krc command is installed beside it, and a Ctrl-C free import is cheap."""

import ast
import inspect
import os
import re
import subprocess
import sys

import pytest

import krc


def test_import_krc_does_not_import_torch():
    code = "import sys, krc; print('torch' in sys.modules, 'onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_help_explains_the_functions():
    for f, words in [(krc.compile, ["strategy", "max_len", "LimitError", "Network"]),
                     (krc.load_automaton, ["input_format", "complete", "initial", "InputError"]),
                     (krc.decompose, ["levels", "LimitError"]),
                     (krc.Network.verify, ["exhaustive", "random", "progress"]),
                     (krc.Network.run, ["arithmetic", "attention"]),
                     (krc.zoo, ["n"])]:
        doc = inspect.getdoc(f)
        assert doc and all(w in doc for w in words), f.__name__
    assert "compile(automaton" in str(inspect.signature(krc.compile)) or \
        list(inspect.signature(krc.compile).parameters)[:3] == ["automaton", "strategy", "max_len"]


def public_names(module_object):
    # Not what every object has: nnsight (tests/python/test_circuit.py) mounts a `save` method
    # on `object` itself, so every class seems to have one once it is imported.
    inherited = set(dir(object)) if isinstance(module_object, type) else set()
    return {n for n in dir(module_object) if not n.startswith("_") and n not in inherited}


def test_stubs_name_exactly_what_the_extension_has():
    stub = os.path.join(os.path.dirname(krc.__file__), "_core.pyi")
    tree = ast.parse(open(stub).read())
    stubbed = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            members = set()
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        members.add(item.name)
                    elif isinstance(item, ast.AnnAssign):
                        members.add(item.target.id)
            stubbed[node.name] = members
        elif isinstance(node, ast.AnnAssign):
            stubbed[node.target.id] = set()
    assert set(stubbed) == public_names(krc._core) | {"__version__"}
    for name, members in stubbed.items():
        if members:
            real = public_names(getattr(krc._core, name))
            assert {m for m in members if not m.startswith("__")} == real, name


def test_py_typed_marks_the_package_typed():
    assert os.path.exists(os.path.join(os.path.dirname(krc.__file__), "py.typed"))


def test_the_krc_command_is_installed_beside_the_package():
    command = os.path.join(os.path.dirname(sys.executable), "krc")
    out = subprocess.run([command, "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("krc ")
    assert krc.__version__ in out.stdout


def test_framework_methods_hand_over_a_weights_file(tmp_path, monkeypatch):
    # The frameworks' modules (krc.torch_module, krc.tl_bridge, krc.onnx_export) stand in here
    # as recorders: each method must pass a weights file of this very network, by the
    # functions' documented names and keywords, and remove it afterwards.
    import types
    net = krc.compile(krc.zoo("parity"), max_len=8)
    calls = []

    def recorder(module, function):
        def record(path, *args, **kwargs):
            loaded = krc.load(path)
            calls.append((function, args, kwargs, loaded.residual_labels, path))
            return function
        fake = types.ModuleType("krc." + module)
        setattr(fake, function, record)
        monkeypatch.setitem(sys.modules, "krc." + module, fake)
        monkeypatch.setattr(krc, module, fake, raising=False)

    recorder("torch_module", "load_torch")
    recorder("tl_bridge", "to_transformer_lens")
    recorder("onnx_export", "to_onnx")
    assert net.to_torch(device="cpu") == "load_torch"
    assert net.to_transformer_lens() == "to_transformer_lens"
    net.to_onnx(tmp_path / "parity.onnx")
    assert [c[0] for c in calls] == ["load_torch", "to_transformer_lens", "to_onnx"]
    assert calls[0][2] == {"device": "cpu", "dtype": None}
    assert calls[2][1] == (str(tmp_path / "parity.onnx"),)
    for call in calls:
        assert call[3] == net.residual_labels
        assert not os.path.exists(call[4])  # the temporary weights file is gone


def test_readme_python_example_is_true(capsys, tmp_path, monkeypatch):
    # The tour's Python block, whole: it asserts itself that krc's runner, the torch module, the
    # TransformerLens bridge and onnxruntime give the same states; here the states it claims in
    # a comment are checked against the automaton, run by hand.
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("transformer_lens")
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)  # it writes g9.onnx
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)
    printed = capsys.readouterr().out
    assert "all right" in printed or "verified" in printed
    claimed = ast.literal_eval(block.split("states = net.run(word).states")[1]
                               .split("# ")[1].split("\n")[0].strip())
    # gridworld_9 (automata/zoo): cells 0..8 from cell 0, R moves right, L left, clamped.
    cell, expected = 0, ["0"]
    for letter in scope["word"].split():
        cell = min(8, cell + 1) if letter == "R" else max(0, cell - 1)
        expected.append(str(cell))
    assert claimed == expected == scope["states"]


def test_a_missing_framework_names_its_extra(monkeypatch):
    net = krc.compile(krc.zoo("parity"), max_len=4)
    for module, method, extra in (("transformer_lens", "to_transformer_lens", "lens"),
                                  ("torch", "to_torch", "torch")):
        monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
        with pytest.raises(krc.MissingExtraError, match=r"pip install 'krc\[%s\]'" % extra):
            getattr(net, method)()
        monkeypatch.undo()
    with pytest.raises(ImportError):  # a MissingExtraError is an ImportError too
        monkeypatch.setitem(sys.modules, "onnx", None)
        net.to_onnx(os.devnull)


def test_the_lean_lists_pin_what_requirements_txt_pins():
    # requirements-core.txt (the demo's) and pyproject's extras name versions requirements.txt
    # (the tests') pins, so the lean install and the tested one cannot drift apart.
    def pins(lines):
        return dict(re.findall(r"^\s*\"?([A-Za-z0-9_.-]+)==([^\s\",]+)", lines, re.M))
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    full = {k.lower().replace("_", "-"): v for k, v in
            pins(open(os.path.join(repo, "requirements.txt")).read()).items()}
    core = pins(open(os.path.join(repo, "requirements-core.txt")).read())
    pyproject = open(os.path.join(repo, "pyproject.toml")).read()
    extras = dict(re.findall(r"\"([A-Za-z0-9_.-]+)==([^\"]+)\"",
                             pyproject.split("[project.optional-dependencies]")[1]))
    assert core and extras
    for name, version in list(core.items()) + list(extras.items()):
        assert full[name.lower().replace("_", "-")] == version, name
    assert {"torch", "transformer-lens", "transformers", "onnx", "onnxruntime"} <= set(extras)
