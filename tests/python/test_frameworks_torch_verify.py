"""tools/torch_verify.py: krc networks verified in PyTorch in a dtype (what a GPU check runs,
here on the CPU). A network compiled for bf16 is right at every position in bfloat16; a
float32 kr network cast to bfloat16 is not (its counters' offsets 1.5*2^21 have no bf16
neighbours one apart: compiler/README.md "bf16 and fp16"), and the tool exits 1 naming the
position; a file that is not a network is exit 2."""
import json
import os
import subprocess
import sys

import pytest

from frameworks_support import compile_zoo, REPO

pytestmark = pytest.mark.frameworks

TOOL = os.path.join(REPO, "tools", "torch_verify.py")


def torch_verify(*args):
    out = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    return out.returncode, rows, out.stderr


def test_a_network_compiled_for_bf16_is_right_in_bfloat16(tmp_path):
    path = compile_zoo(tmp_path, "cyclic_3", "scan", 256, "--precision", "bf16")
    rc, rows, err = torch_verify("--dtype", "bfloat16", "--words", "2", path)
    assert rc == 0, err
    assert rows[0]["dtype"] == "bfloat16" and rows[0]["length"] == 256 and rows[0]["words"] == 2
    assert rows[0]["first_wrong"] == [None, None]
    assert rows[-1] == {"files": 1, "wrong_files": 0}


def test_a_float32_kr_network_in_bfloat16_is_wrong_and_says_where(tmp_path):
    path = compile_zoo(tmp_path, "parity", "kr", 64)
    rc, rows, _ = torch_verify("--dtype", "float32", path)
    assert rc == 0 and rows[0]["first_wrong"] == [None, None, None]  # right where it is exact
    rc, rows, _ = torch_verify("--dtype", "bfloat16", "--length", "40", path)
    assert rc == 1 and rows[0]["length"] == 40
    assert all(w is not None and 0 <= w <= 40 for w in rows[0]["first_wrong"])
    assert rows[-1] == {"files": 1, "wrong_files": 1}


def test_bad_input_is_exit_2(tmp_path):
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    rc, _, err = torch_verify(str(junk))
    assert rc == 2 and "junk.safetensors" in err
    rc, _, err = torch_verify("--dtype", "int8", str(junk))
    assert rc == 2 and "--dtype" in err
    rc, _, err = torch_verify("--words", "0", str(junk))
    assert rc == 2 and "--words" in err
