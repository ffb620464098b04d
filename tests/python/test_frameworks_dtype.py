"""Issue 20 item 4: the torch module in bfloat16 and float16 (load_torch(dtype=...),
tools/krc_torch.py --dtype). The weights are the float32 ones cast to the dtype and every
activation is in it, on the CPU; against krc's own --arithmetic of the same name where the krc
binary has it (skipped otherwise, with the reason); bad dtypes are refused."""
import json
import os
import subprocess
import sys

import pytest
import torch

from frameworks_support import compile_zoo, krc, Oracle, REPO

pytestmark = pytest.mark.frameworks

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_the_module_runs_in_the_dtype_on_weights_cast_to_it(dtype, tmp_path):
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "gridworld_4", "kr", 32)
    exact, low = load_torch(path), load_torch(path, dtype=dtype)
    reference = dict(exact.named_parameters())
    for name, p in low.named_parameters():
        assert p.dtype == DTYPES[dtype] and torch.equal(p, reference[name].to(DTYPES[dtype])), name
    tokens = low.tokens([["L", "R", "R", "L", "L", "L"]])
    logits, cache = low.run_with_cache(tokens)
    assert logits.dtype == DTYPES[dtype] and cache and all(v.dtype == DTYPES[dtype] for v in cache.values())


def krc_arithmetic(dtype):
    """krc's name for the arithmetic of `dtype`, or None when `krc run` has none."""
    text = krc("run", "--help").stdout
    return next((n for n in {"bfloat16": ("bfloat16", "bf16"), "float16": ("float16", "fp16")}[dtype]
                 if n in text), None)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_krc_torch_dtype_against_krc_arithmetic(dtype, tmp_path):
    arithmetic = krc_arithmetic(dtype)
    if arithmetic is None:
        pytest.skip("this krc has no --arithmetic for %s" % dtype)
    path = compile_zoo(tmp_path, "flipflop_3", "kr", 64)
    words = Oracle.of_file(path).words(7, 20, 64, 20)
    out = subprocess.run([sys.executable, os.path.join(REPO, "tools", "krc_torch.py"), path,
                          "--dtype", dtype], input="\n".join(" ".join(w) for w in words) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(words)
    for word, line in zip(words, out):
        mine = json.loads(line)
        theirs = json.loads(krc("run", path, "--json", "--arithmetic", arithmetic,
                                ",".join(word)).stdout)
        assert mine["precision"] == dtype
        assert mine["states"] == theirs["states"], word


def test_bad_dtypes_are_refused(tmp_path):
    from krc.torch_module import load_torch

    path = compile_zoo(tmp_path, "parity", "kr", 8)
    for bad in ("float8", torch.int32, torch.float64):
        with pytest.raises(ValueError):
            load_torch(path, dtype=bad)
    with pytest.raises(ValueError):
        load_torch(path, dtype="bfloat16").use_sparse_mlp()
    result = subprocess.run([sys.executable, os.path.join(REPO, "tools", "krc_torch.py"), path,
                             "--dtype", "float8", "1"], capture_output=True, text=True)
    assert result.returncode == 2
