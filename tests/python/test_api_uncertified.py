"""Formats a network is not certified in are said where krc itself runs it (issue 33, item 5):
Network.run and Network.verify with arithmetic "bf16" or "fp16" raise an
UncertifiedFormatWarning naming the formats the network is exact in, and `krc run` / `krc
verify --arithmetic` print the same on stderr; a network compiled for the format stays quiet.
(to_torch and load_torch: test_frameworks_certified.py.) The oracle that the warning is due:
parity compiled for fp32 gives wrong states in bf16, which the automaton shows."""

import subprocess
import warnings

import pytest

import krc
from krc.certified import UncertifiedFormatWarning
from frameworks_support import krc_binary

WORD = "0110100"


@pytest.fixture(scope="module")
def fp32_network():
    return krc.compile(krc.zoo("parity"), max_len=8)


def test_run_and_verify_warn_in_a_format_the_network_is_not_certified_in(fp32_network):
    for arithmetic in ("bf16", "fp16"):
        with pytest.warns(UncertifiedFormatWarning,
                          match=r"parity is not certified in %s \(it is exact in: fp32 up to "
                                r"length 8\)" % arithmetic):
            fp32_network.run(WORD, arithmetic=arithmetic)
        with pytest.warns(UncertifiedFormatWarning, match="not certified in %s" % arithmetic):
            fp32_network.verify(exhaustive=2, random=0, arithmetic=arithmetic, progress=False)
    # The warning is due: the automaton says these states are wrong in bf16.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedFormatWarning)
        states = fp32_network.run(WORD, arithmetic="bf16").states
    assert states != fp32_network.automaton.run(list(WORD))


def test_certified_formats_are_quiet(fp32_network):
    bf16 = krc.compile(krc.zoo("parity"), max_len=8, precision="bf16")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedFormatWarning)
        assert bf16.run(WORD, arithmetic="bf16").states == bf16.automaton.run(list(WORD))
        assert bf16.verify(exhaustive=2, random=0, arithmetic="bf16", progress=False).ok
        for arithmetic in ("float32", "float64"):
            fp32_network.run(WORD, arithmetic=arithmetic)


@pytest.mark.frameworks
def test_the_command_line_warns_on_stderr(tmp_path, fp32_network):
    fp32 = str(tmp_path / "parity.safetensors")
    fp32_network.save(fp32)
    bf16 = str(tmp_path / "parity-bf16.safetensors")
    krc.compile(krc.zoo("parity"), max_len=8, precision="bf16").save(bf16)
    letters = " ".join(WORD)
    for command in (["run", fp32, letters], ["verify", fp32, "--exhaustive", "2",
                                              "--random", "0"]):
        r = subprocess.run([krc_binary(), *command, "--arithmetic", "bf16"], capture_output=True,
                           text=True)
        assert ("krc: warning: %s is not certified in bf16 (exact in: fp32 up to max-len 8)"
                % fp32) in r.stderr, r.stderr
    for command in (["run", bf16, letters, "--arithmetic", "bf16"],
                    ["run", fp32, letters, "--arithmetic", "float32"]):
        r = subprocess.run([krc_binary(), *command], capture_output=True, text=True)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
