"""Formats a file does not certify are said (issue 33): to_torch and load_torch warn when asked
for a dtype the network is not exact in (krc.certified.UncertifiedFormatWarning naming the
formats it is exact in), and stay quiet where it is; too many tokens is a krc.InputError; the
torch helpers' errors are krc errors; Ctrl-C stops Network.verify(progress=False) at once."""

import os
import signal
import subprocess
import sys
import time
import warnings

import pytest
import torch

import krc
from krc.certified import UncertifiedFormatWarning
from krc.torch_module import KrcFileError, load_torch
from frameworks_support import REPO, krc_binary

pytestmark = pytest.mark.frameworks


def letters_of(network, n, seed=3):
    import random
    rng = random.Random(seed)
    return [rng.choice(network.automaton.letters) for _ in range(n)]


def torch_states(module, network, word):
    logits = module(module.tokens([word]))[0]
    return [module.states[i] for i in logits.float().argmax(-1).tolist()]


def test_an_fp32_network_warns_in_bf16_and_fp16_and_not_in_float32():
    network = krc.compile(krc.zoo("symmetric_3"), strategy="kr", max_len=64)
    for dtype, fmt in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
        with pytest.warns(UncertifiedFormatWarning, match="not certified in %s .*fp32 up to "
                          "length 64" % fmt):
            network.to_torch(dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedFormatWarning)
        module = network.to_torch()
    word = letters_of(network, 64)
    assert torch_states(module, network, word) == network.automaton.run(word)


def test_a_bf16_network_is_quiet_in_bf16_and_right_there():
    network = krc.compile(krc.zoo("flipflop_2"), precision="bf16", max_len=64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedFormatWarning)
        module = network.to_torch(dtype=torch.bfloat16)
    word = letters_of(network, 64)
    assert torch_states(module, network, word) == network.automaton.run(word)


def test_files_and_exports_warn_by_their_path(tmp_path):
    weights = str(tmp_path / "s3.safetensors")
    krc.compile(krc.zoo("symmetric_3"), strategy="kr", max_len=16).save(weights)
    with pytest.warns(UncertifiedFormatWarning, match="s3.safetensors is not certified in bf16"):
        load_torch(weights, dtype="bfloat16")
    export = str(tmp_path / "s3-tl.safetensors")
    subprocess.run([krc_binary(), "export", weights, "-o", export], check=True,
                   capture_output=True)
    with pytest.warns(UncertifiedFormatWarning, match="s3-tl.safetensors is not certified in "
                      "fp16"):
        load_torch(export, dtype=torch.float16)


def test_too_many_tokens_and_unknown_letters_are_krc_errors():
    network = krc.compile(krc.zoo("parity"), max_len=8)
    module = network.to_torch()
    with pytest.raises(krc.InputError, match="10 positions, more than the network's max_len 8"):
        module(module.tokens([[network.automaton.letters[0]] * 9]))
    with pytest.raises(krc.KrcError):
        module.tokens([["not-a-letter"]])
    assert issubclass(KrcFileError, krc.InputError) and issubclass(KrcFileError, ValueError)


def test_ctrl_c_stops_verify_without_progress():
    # A verification of minutes (a million random words of length 512); SIGINT after it has
    # begun must end it with KeyboardInterrupt within seconds, not when it is done.
    script = (
        "import sys, krc\n"
        "n = krc.compile(krc.zoo('gridworld_9'), strategy='scan', max_len=512)\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    n.verify(random=10**6, exhaustive=0, progress=False, threads=1)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True); sys.exit(7)\n"
        "print('finished', flush=True)\n")
    # SIGINT as a terminal gives it, whatever the runner inherited (a background CI job
    # passes it on ignored, and an ignoring process rightly stays deaf to it).
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    waited = time.monotonic() - sent
    assert child.returncode == 7 and out.strip() == "interrupted"
    assert waited < 10, waited  # before: the whole run (minutes) went by first
