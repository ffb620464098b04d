"""How the Python scripts that the krc command runs (tools/bench_frameworks.py,
tools/export_onnx.py) import the package krc: this checkout's sources (tools/python/krc) with
the compiled core built beside the krc binary that runs them (core_dir, BUILD/python/krc), so
that the C++ they use is that binary's; without core_dir, the installed package."""
import importlib.util
import os
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))


def import_krc(core_dir):
    """The module krc, from the sources beside this file and the extension in core_dir."""
    if core_dir:
        sources = os.path.join(TOOLS, "python", "krc")
        spec = importlib.util.spec_from_file_location(
            "krc", os.path.join(sources, "__init__.py"),
            submodule_search_locations=[sources, os.path.abspath(core_dir)])
        module = importlib.util.module_from_spec(spec)
        sys.modules["krc"] = module
        spec.loader.exec_module(module)
        return module
    sys.path.append(os.path.join(TOOLS, "python"))
    import krc
    return krc
