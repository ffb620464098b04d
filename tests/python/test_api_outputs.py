"""What an output path names is never destroyed from Python either (issue 33): Network.save,
to_hf and to_onnx write through the krc command's writer. A private device node and a FIFO
in a temporary folder (never the machine's /dev) stay what they were; a directory is refused
as a file; a checkpoint directory appears whole and replaces only an earlier checkpoint;
errors are krc.InputError naming the target, never a temporary file."""

import os
import stat
import threading

import pytest

import krc


@pytest.fixture(scope="module")
def parity():
    return krc.compile(krc.zoo("parity"), max_len=8)


def leftovers(directory):
    return [n for n in os.listdir(directory) if n.startswith(".krc")]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_save_to_a_device_node_writes_in_place(tmp_path, parity):
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
    parity.save(node)
    st = os.stat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert leftovers(tmp_path) == []


def test_save_to_a_fifo_sends_the_bytes_through_it(tmp_path, parity):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    parity.save(fifo)
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    parity.save(tmp_path / "file.safetensors")
    assert received == [(tmp_path / "file.safetensors").read_bytes()]
    assert leftovers(tmp_path) == []


def test_save_refuses_a_directory_and_names_it(tmp_path, parity):
    with pytest.raises(krc.InputError) as e:
        parity.save(tmp_path)
    assert e.value.file == str(tmp_path) and "is a directory" in e.value.problem
    with pytest.raises(krc.InputError) as e:
        parity.save(tmp_path / "missing" / "x.safetensors")
    assert e.value.file == str(tmp_path / "missing" / "x.safetensors")
    assert ".krc" not in str(e.value)


def test_save_through_a_link_replaces_the_file_and_keeps_the_link(tmp_path, parity):
    real = tmp_path / "real.safetensors"
    real.write_bytes(b"old")
    os.symlink(real, tmp_path / "link.safetensors")
    parity.save(tmp_path / "link.safetensors")
    assert os.path.islink(tmp_path / "link.safetensors")
    assert krc.load(real).states == parity.states


CHECKPOINT = ["config.json", "krc_circuit.json", "krc_gpt2.json", "krc_vocab.json", "model.safetensors"]


def test_to_hf_appears_whole_and_replaces_only_a_checkpoint(tmp_path, parity):
    target = tmp_path / "ck"
    parity.to_hf(target)
    assert sorted(os.listdir(target)) == CHECKPOINT
    first = (target / "model.safetensors").read_bytes()
    krc.compile(krc.zoo("cyclic_3"), max_len=8).to_hf(target)  # an earlier checkpoint: replaced
    assert sorted(os.listdir(target)) == CHECKPOINT
    assert (target / "model.safetensors").read_bytes() != first
    (target / "notes.md").write_text("mine\n")
    with pytest.raises(krc.InputError) as e:
        parity.to_hf(target)
    assert e.value.file == str(target) and '"notes.md"' in e.value.problem
    assert (target / "notes.md").read_text() == "mine\n"
    plain = tmp_path / "plain.txt"
    plain.write_text("keep\n")
    with pytest.raises(krc.InputError) as e:
        parity.to_hf(plain)
    assert "exists and is not a directory" in str(e.value) and plain.read_text() == "keep\n"
    assert leftovers(tmp_path) == []


def test_to_hf_refuses_the_directory_its_weights_were_loaded_from(tmp_path, parity):
    folder = tmp_path / "holds"
    folder.mkdir()
    parity.save(folder / "model.safetensors")
    original = (folder / "model.safetensors").read_bytes()
    loaded = krc.load(folder / "model.safetensors")
    with pytest.raises(krc.InputError) as e:
        loaded.to_hf(folder)
    assert "holds the input file" in str(e.value)
    assert (folder / "model.safetensors").read_bytes() == original
