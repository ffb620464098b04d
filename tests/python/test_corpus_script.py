"""tools/corpus.py (issue 34, the corpus figure): which files it counts, and that a file krc
reads, compiles and verifies is counted so while a refused one is not read and keeps krc's
message whole. The oracles: the folders' SOURCES.md (a file with a recorded source is counted,
the loose files made up by krc's tests are not), mCRL2's dining philosophers (an ordinary LTS:
tests/frontend reads it) and mCRL2's probabilistic example (probabilities, which krc refuses by
design, tests/frontend/data/fsm/SOURCES.md)."""
import os
import sys
import tempfile

import pytest

from conftest import REPO
from frameworks_support import krc_binary

sys.path.insert(0, os.path.join(REPO, "tools"))
import corpus  # noqa: E402

DATA = os.path.join(REPO, "tests", "frontend", "data")
# krc verify's defaults take tens of seconds on a busy machine; a few words show the counting.
SHORT = ("--exhaustive", "3", "--random", "20", "--length", "16")
REALWORLD = corpus.HERE / "tests" / "reference" / "realworld"


def test_counts_the_files_with_a_recorded_source_and_no_other():
    files = corpus.corpus_files(REALWORLD)
    names = {f.name for f in files}
    assert "SOURCES.md" not in names
    assert "mod3.dot" not in names and "mod3.json" not in names  # made up by krc's tests
    for folder in ("aut", "etf", "fsm", "taf"):
        with open(os.path.join(DATA, folder, "SOURCES.md"), encoding="utf-8") as sources:
            text = sources.read()
        for name in os.listdir(os.path.join(DATA, folder)):
            if name != "SOURCES.md":
                assert name in names
                assert name.split(".")[0] in text  # each counted file has its recorded source
    assert "aalpy__tomita_3.dot" in names  # tests/reference/realworld/files


def test_a_refusal_keeps_its_continuation_lines_and_stops_at_the_next_message():
    stderr = ("krc: note: f.dot: read as symbols\nkrc: error: f.dot: line 13: partial automaton: "
              "state '1:#10233\n' has no transition on letter '34'\nkrc: note: later\n")
    assert corpus.first_error(stderr) == (
        "krc: error: f.dot: line 13: partial automaton: state '1:#10233 ' has no transition "
        "on letter '34'")


@pytest.mark.frameworks
def test_a_verified_file_and_a_refused_one():
    with tempfile.TemporaryDirectory() as tmp:
        good = corpus.check(krc_binary(), corpus.HERE / "tests/frontend/data/aut/mcrl2_dining2.aut",
                            60, "1G", tmp, SHORT)
        bad = corpus.check(krc_binary(),
                           corpus.HERE / "tests/frontend/data/fsm/mcrl2_probabilistic_fan.fsm",
                           60, "1G", tmp, SHORT)
    assert (good["format"], good["read"], good["compiled"], good["verified"]) == (
        "Aldebaran AUT", True, True, True)
    assert good["refusal"] is None
    assert (bad["format"], bad["read"], bad["compiled"], bad["verified"]) == (
        "LTSmin FSM", False, False, False)
    assert bad["refusal"]["stage"] == "compile" and bad["refusal"]["exit"] == 2
    assert "mcrl2_probabilistic_fan.fsm: line 18" in bad["refusal"]["message"]
    assert "probabilit" in bad["refusal"]["message"]
    table = corpus.markdown([good, bad])
    assert "| Aldebaran AUT | 1 | 1 | 1 | 1 |" in table
    assert "| LTSmin FSM | 1 | 0 | 0 | 0 |" in table
    assert "| **all** | 2 | 1 | 1 | 1 (50%) |" in table
