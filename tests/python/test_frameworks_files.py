"""Issue 21 part 3: every file krc writes (compile: each strategy, sparse and dense, softmax and
hard; export) opens with the official `safetensors` package: safe_open and load_file give the
tensors and the metadata that the file's bytes hold, read here by hand from the format's
definition (8-byte little-endian header length, a JSON header, raw little-endian data). Then
the package's readers of krc.torch_module, and its errors on hostile files."""
import json
import os
import struct

import numpy as np
import pytest

from frameworks_support import compile_zoo, krc

pytestmark = pytest.mark.frameworks

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1"}


def by_hand(path):
    """(tensors as numpy, metadata) straight from the bytes."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors, metadata


def krc_files(directory):
    files = [compile_zoo(directory, "gridworld_4", "kr", 32),
             compile_zoo(directory, "symmetric_3", "scan", 16, "--dense"),
             compile_zoo(directory, "flipflop_2", "kr", 64, "--attention", "hard"),
             compile_zoo(directory, "parity", "onelayer", 6)]
    exported = os.path.join(str(directory), "exported.safetensors")
    krc("export", files[0], "-o", exported)
    return files + [exported]


def test_every_krc_file_opens_with_the_safetensors_package(tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import load_file

    for path in krc_files(tmp_path):
        tensors, metadata = by_hand(path)
        assert metadata and all(isinstance(v, str) for v in metadata.values()), path
        with safe_open(path, framework="np") as f:
            assert f.metadata() == metadata, path
            assert sorted(f.keys()) == sorted(tensors), path
            for name in f.keys():
                t = f.get_tensor(name)
                assert t.dtype == tensors[name].dtype and np.array_equal(t, tensors[name]), (path, name)
        loaded = load_file(path)
        assert sorted(loaded) == sorted(tensors), path
        assert all(np.array_equal(loaded[k], tensors[k]) for k in tensors), path
        with safe_open(path, framework="pt") as f:  # and into torch
            assert all(np.array_equal(f.get_tensor(k).numpy(), tensors[k]) for k in tensors), path


def test_the_torch_module_reads_krc_and_export_files_alike(tmp_path):
    import torch

    from krc.torch_module import load_torch

    kr, exported = compile_zoo(tmp_path, "gridworld_4", "kr", 32), str(tmp_path / "e.safetensors")
    krc("export", kr, "-o", exported)
    a, b = load_torch(kr), load_torch(exported)
    tokens = a.tokens([["L", "R", "R", "R", "L"], ["R"] * 32])
    assert a.states == b.states and a.residual_labels == b.residual_labels
    assert torch.allclose(a(tokens), b(tokens), rtol=0, atol=1e-5)
    assert torch.equal(a(tokens).argmax(2), b(tokens).argmax(2))


def test_hostile_files_raise_errors_that_name_the_file(tmp_path):
    from krc.onnx_export import to_onnx
    from krc.torch_module import KrcFileError, load_torch

    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01\x02")
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(struct.pack("<Q", 5) + b"{nope" + b"\0" * 8)
    plain = tmp_path / "plain.safetensors"  # a valid safetensors file that is no krc network
    header = json.dumps({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    plain.write_bytes(struct.pack("<Q", len(header)) + header + b"\0\0\0\0")
    for bad in (short, garbage, plain, tmp_path / "missing.safetensors"):
        with pytest.raises((KrcFileError, OSError)) as error:
            load_torch(str(bad))
        assert str(bad) in str(error.value)
        out = tmp_path / "out.onnx"
        with pytest.raises((KrcFileError, OSError)):
            to_onnx(str(bad), str(out))
        assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".krc-tmp")]
