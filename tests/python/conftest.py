"""Shared by the Python tests: where the repository's data lies, the automaton oracle (oracle.py),
and the marker `frameworks` of the tests that run networks through torch, TransformerLens and
onnxruntime beside the krc command."""

import os
import sys

import pytest

from oracle import Oracle, REPO, ZOO  # noqa: F401  (the API tests import them from here)

REFERENCE = os.path.join(REPO, "tests", "reference")


@pytest.fixture(scope="session")
def gridworld_file():
    return os.path.join(ZOO, "gridworld_9.json")


@pytest.fixture(scope="session")
def reference_forward():
    """tools/reference_forward.py: the independent numpy forward pass of README's format."""
    sys.path.insert(0, os.path.join(REPO, "tools"))
    try:
        import reference_forward
    finally:
        sys.path.pop(0)
    return reference_forward


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "frameworks: needs the krc command (skipped without it); torch on one thread")


@pytest.fixture(autouse=True)
def _frameworks(request):
    """For tests marked `frameworks`: skipped without the krc command; torch on one intra-op
    thread while they run (frameworks_support.one_thread says why)."""
    if request.node.get_closest_marker("frameworks") is None:
        yield
        return
    from frameworks_support import krc_binary, one_thread

    if krc_binary() is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    with one_thread():
        yield
