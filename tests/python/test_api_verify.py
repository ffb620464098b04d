"""Network.verify: what it counts, the report as an object, progress, and a wrong network's
counterexample (a network forged by swapping two states' unembedding columns in its file)."""

import json
import struct
import sys

import numpy as np
import pytest

import krc
from conftest import Oracle, ZOO


@pytest.fixture(scope="module")
def gridworld():
    return krc.compile(krc.zoo("gridworld_9"), max_len=64)


def test_report_counts_every_position(gridworld):
    report = gridworld.verify(exhaustive=10, random=50, length=64, progress=False)
    assert isinstance(report, krc.VerifyReport)
    assert report.ok and bool(report) and report.counterexample is None
    assert report.exhaustive_words == 2 ** 10 and report.random_words == 50
    assert report.words == 2 ** 10 + 50
    assert report.positions == 2 ** 10 * 11 + 50 * 65
    assert report.wrong_positions == 0 and report.smallest_margin > 0
    assert report.arithmetic == "float32" and report.attention == gridworld.attention
    assert "verified" in report.text and str(report) == report.text


def test_progress_goes_to_a_callable(gridworld):
    seen = []
    gridworld.verify(exhaustive=12, random=100, progress=seen.append)
    assert seen and all(isinstance(p, krc.VerifyProgress) for p in seen)
    assert all(0 <= p.words_done <= p.words_total for p in seen)
    assert seen[-1].words_done == seen[-1].words_total
    # str() is krc verify's progress line: the counts with thousands separators, the seconds.
    last = seen[-1]
    words = "{:,} of {:,} words".format(last.words_done, last.words_total)
    assert str(last).startswith("verifying: ") and words in str(last)
    assert ("%d s" % int(last.seconds)) in str(last)


def swap_unembedding_columns(source, target, a, b):
    """Rewrites a dense weights file with the logits of states a and b exchanged."""
    data = bytearray(open(source, "rb").read())
    (n,) = struct.unpack("<Q", data[:8])
    entry = json.loads(data[8:8 + n])["unembed"]
    begin, end = (8 + n + o for o in entry["data_offsets"])
    w = np.frombuffer(bytes(data[begin:end]), dtype="<f4").reshape(entry["shape"]).copy()
    w[:, [a, b]] = w[:, [b, a]]
    data[begin:end] = w.tobytes()
    open(target, "wb").write(bytes(data))


def test_a_wrong_network_gives_its_counterexample(gridworld, tmp_path):
    good, bad = tmp_path / "good.safetensors", tmp_path / "bad.safetensors"
    gridworld.save(good, dense=True)
    swap_unembedding_columns(good, bad, 0, 1)
    report = krc.load(bad).verify(exhaustive=3, random=5, progress=False)
    assert not report.ok and report.wrong_positions > 0
    c = report.counterexample
    oracle = Oracle.of_json(ZOO + "/gridworld_9.json")
    assert c.part == "exhaustive" and c.position == 0  # the initial state "0" is now "1"
    assert c.expected == oracle.run(c.word)
    assert c.actual[0] == "1" and c.wrong[0]
    # Exactly the positions whose state is 0 or 1 are wrong.
    assert c.wrong == [s in ("0", "1") for s in c.expected]


def test_arguments_beyond_the_network_are_input_errors(gridworld):
    with pytest.raises(krc.InputError) as e:
        gridworld.verify(exhaustive=65, progress=False)
    assert e.value.place == "exhaustive"
    with pytest.raises(ValueError):
        gridworld.verify(arithmetic="float16", progress=False)


def test_ctrl_c_stops_a_long_verification():
    # The default progress reports through Python after every batch, where Ctrl-C is raised.
    import signal
    import subprocess
    import sys
    import time
    code = ("import krc, sys\n"
            "net = krc.compile(krc.zoo('gridworld_9'), max_len=1024)\n"
            "print('verifying', flush=True)\n"
            "try:\n"
            "    net.verify(random=10**7)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n")
    # SIGINT as a terminal gives it: a runner started in the background (CI from `cmd &`)
    # passes it on ignored, and an ignoring process rightly stays deaf to it.
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "verifying"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    assert out.strip() == "interrupted" and child.returncode == 0


def test_progress_off_a_terminal_is_whole_lines(monkeypatch):
    # Off a terminal (a log, a notebook's captured stream) a carriage return only piles the
    # updates onto one line: whole lines instead, one per ten seconds.
    import io

    from krc.progress_line import ProgressLine

    class Point:
        def __init__(self, seconds):
            self.seconds = seconds

        def __str__(self):
            return "at %g s" % self.seconds

    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    line = ProgressLine()
    for seconds in (1.0, 2.5, 5.0, 12.0, 12.6, 30.0):
        line(Point(seconds))
    line.clear()
    assert captured.getvalue() == "at 2.5 s\nat 12.6 s\nat 30 s\n"
