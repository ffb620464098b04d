"""What an output path names is never destroyed from Python either (issue 33): Network.save,
to_hf and to_onnx write through the krc command's writer. A private device node and a FIFO
in a temporary folder (never the machine's /dev) stay what they were; a directory is refused
as a file; a checkpoint directory appears whole and replaces only an earlier checkpoint;
errors are krc.InputError naming the target, never a temporary file. As an ordinary user
(a child process that drops root), what it may not write is refused and left as it was."""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
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
    # A private full disk (/dev/full's numbers): InputError naming it, still a device.
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    with pytest.raises(krc.InputError, match="write failed: No space left on device") as e:
        parity.save(full)
    assert e.value.file == str(full) and stat.S_ISCHR(os.stat(full).st_mode)
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


# ---- as an ordinary user: permissions, which root ignores, decide
NOBODY = 65534

# Run in a child process, which becomes NOBODY once krc is imported (the venv's Python lives
# in root's home, which NOBODY may not enter): each case writes through the Python door and
# reports what happened, [exception type, e.file, str(e)] or ["ok"].
AS_NOBODY = r"""
import json, os, resource, sys
import krc
paths = json.loads(sys.argv[1])
net = krc.load(paths["weights"])
loaded = krc.load(paths["held"])
os.setgroups([])
os.setgid(paths["user"])
os.setuid(paths["user"])
assert os.geteuid() != 0
out = {}
def case(name, call):
    try:
        call()
        out[name] = ["ok"]
    except krc.KrcError as e:
        out[name] = [type(e).__name__, getattr(e, "file", None), str(e)]
for name in ("locked_new", "locked_mine", "read_only", "link", "full", "root_null", "root_fifo",
             "own_new"):
    case(name, lambda: net.save(paths[name]))
case("locked_ck", lambda: net.to_hf(paths["locked_ck"]))
case("root_ck", lambda: net.to_hf(paths["root_ck"]))
case("holds_input", lambda: loaded.to_hf(os.path.dirname(paths["held"])))
# A full disk part way through a directory: the file size limit fails its last file (EFBIG).
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
case("part_way", lambda: krc._core.write_directory(
    paths["part_way"], [("small.json", b"{}"), ("large.bin", b"x" * 4000)], [], "directory"))
case("hf_part_way", lambda: net.to_hf(paths["hf_part_way"]))
print(json.dumps(out))
"""


@pytest.fixture
def shared_dir(parity):
    """A folder the ordinary user can read (pytest's tmp_path is root's alone), holding
    "open" (theirs to write) and "locked" (root's, theirs only to read)."""
    if os.geteuid() != 0:
        pytest.skip("becoming an ordinary user (uid %d) needs root" % NOBODY)
    top = tempfile.mkdtemp(prefix="krc-nobody-")
    os.chmod(top, 0o755)
    os.mkdir(os.path.join(top, "open"))
    os.chown(os.path.join(top, "open"), NOBODY, NOBODY)
    os.mkdir(os.path.join(top, "locked"), 0o755)
    yield top
    shutil.rmtree(top)


def test_as_an_ordinary_user_what_it_may_not_write_is_refused_and_kept(shared_dir, parity):
    p = lambda *names: os.path.join(shared_dir, *names)  # noqa: E731
    parity.save(p("p.safetensors"))
    os.mkdir(p("open", "holds"))
    os.chown(p("open", "holds"), NOBODY, NOBODY)
    parity.save(p("open", "holds", "model.safetensors"))
    for name, content, mode, owner in (("locked/mine", "keep me\n", 0o666, 0),
                                       ("open/ro.safetensors", "keep me\n", 0o444, NOBODY)):
        with open(p(name), "w") as f:
            f.write(content)
        os.chmod(p(name), mode)
        os.chown(p(name), owner, owner)
    os.symlink(p("locked", "mine"), p("open", "link"))
    os.mknod(p("open", "full"), stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers
    os.chmod(p("open", "full"), 0o666)
    os.mknod(p("open", "root_null"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
    os.mkfifo(p("open", "root_fifo"), 0o600)
    parity.to_hf(p("open", "root_ck"))  # an earlier checkpoint of root's
    config = open(p("open", "root_ck", "config.json")).read()
    paths = {"user": NOBODY, "weights": p("p.safetensors"),
             "held": p("open", "holds", "model.safetensors"),
             "locked_new": p("locked", "new.safetensors"), "locked_mine": p("locked", "mine"),
             "read_only": p("open", "ro.safetensors"), "link": p("open", "link"),
             "full": p("open", "full"), "root_null": p("open", "root_null"),
             "root_fifo": p("open", "root_fifo"), "own_new": p("open", "new.safetensors"),
             "locked_ck": p("locked", "ck"), "root_ck": p("open", "root_ck"),
             "part_way": p("open", "part_way"), "hf_part_way": p("open", "hf_part_way")}
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(krc.__file__)))
    r = subprocess.run([sys.executable, "-c", AS_NOBODY, json.dumps(paths)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    denied = "Permission denied"
    expected = {"locked_new": "cannot write here: " + denied,
                "locked_mine": "cannot write here: " + denied,
                "read_only": "cannot write the file: " + denied,
                "link": "cannot write here: " + denied,
                "full": "write failed: No space left on device",
                "root_null": "cannot write here: " + denied,
                "root_fifo": "cannot write here: " + denied,
                "locked_ck": "cannot create the directory: " + denied,
                "root_ck": "cannot replace the directory: " + denied,
                "holds_input": "holds the input file",
                "part_way": "write failed: File too large",
                "hf_part_way": "write failed: File too large"}
    for name, problem in expected.items():
        assert len(got[name]) == 3, (name, got[name])  # refused, not written
        kind, file, message = got[name]
        assert kind == "InputError" and problem in message, (name, got[name])
        # The error names the target (the checkpoint refused for its input: that folder).
        assert file == (p("open", "holds") if name == "holds_input" else paths[name]), name
    assert got["own_new"] == ["ok"]  # where it may write, it writes
    # Nothing written or replaced: contents, types and the links as they were.
    assert open(p("locked", "mine")).read() == "keep me\n"
    assert open(p("open", "ro.safetensors")).read() == "keep me\n"
    assert os.listdir(p("locked")) == ["mine"] and os.path.islink(p("open", "link"))
    assert stat.S_ISCHR(os.stat(p("open", "full")).st_mode)
    assert stat.S_ISCHR(os.stat(p("open", "root_null")).st_mode)
    assert stat.S_ISFIFO(os.stat(p("open", "root_fifo")).st_mode)
    assert open(p("open", "root_ck", "config.json")).read() == config
    assert not os.path.exists(p("open", "part_way"))
    assert not os.path.exists(p("open", "hf_part_way"))
    assert krc.load(p("open", "new.safetensors")).states == parity.states
    assert leftovers(p("open")) == [] and leftovers(p("locked")) == []
