"""The suite's directory through both doors (issue 33's write cases, for `krc suite` and
krc.suite): an earlier suite whose model folder is now a FIFO or holds a device node (made
privately in a temporary folder, never the machine's /dev) is refused; so is one whose model
folder an ordinary user (uid 65534) may not write (made 0500), which before was exchanged with
the new suite and left, half removed, in a .krc-tmp folder beside it while the door said it had
succeeded. Refused means exit status 2 / krc.InputError naming the suite's directory, the earlier
suite left as it was (its bytes, types and modes), and nothing beside it. Where the user may
write the earlier suite, both doors replace it (the refusal is not a blanket one)."""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

import krc
from conftest import ZOO
from frameworks_support import krc_binary

NOBODY = 65534
MODEL = "parity.scan.none"
OPTIONS = {"set": "none", "strategies": "scan", "norm": "none", "max_len": 4, "random": 0}

# The Python door as the ordinary user: a child interpreter that becomes NOBODY once krc is
# imported (the venv lives in root's home); [type, e.file, str(e)] or ["ok"] per target.
AS_NOBODY = r"""
import json, os, sys, threading
import krc
paths, options = json.loads(sys.argv[1]), json.loads(sys.argv[2])
os.setgroups([])
os.setgid(%d)
os.setuid(%d)
out = {}
for name, (directory, member) in paths.items():
    try:
        krc.suite(directory, files=[member], **options)
        out[name] = ["ok"]
    except krc.KrcError as e:
        out[name] = [type(e).__name__, e.file, str(e)]
print(json.dumps(out))
""" % (NOBODY, NOBODY)


def snapshot(directory):
    """{relative path: (file type and mode, bytes of a regular file)} under `directory`."""
    out = {}
    for root, dirs, names in os.walk(directory):
        for n in dirs + names:
            path = os.path.join(root, n)
            mode = os.lstat(path).st_mode
            out[os.path.relpath(path, directory)] = (
                mode, open(path, "rb").read() if stat.S_ISREG(mode) else None)
    return out


def cli_suite(krc_command, directory, member, user=None):
    args = [krc_command, "suite", member, "-o", directory]
    for key, value in OPTIONS.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, user=user,
                          group=user, extra_groups=[] if user is not None else None,
                          cwd=os.path.dirname(member))


@pytest.fixture
def shared():
    """A folder the ordinary user can read, with "open" theirs to write, a copy of krc and of
    parity's description they can run and read (a checkout may sit in a 0700 folder)."""
    if krc_binary() is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    top = tempfile.mkdtemp(prefix="krc-suite-")
    os.chmod(top, 0o755)
    os.mkdir(os.path.join(top, "open"))
    shutil.copy(krc_binary(), os.path.join(top, "krc"))
    shutil.copy(os.path.join(ZOO, "parity.json"), os.path.join(top, "parity.json"))
    os.chmod(os.path.join(top, "parity.json"), 0o644)
    yield top
    for root, dirs, _ in os.walk(top):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    shutil.rmtree(top)


def earlier_suite(shared, name):
    directory = os.path.join(shared, "open", name)
    r = cli_suite(os.path.join(shared, "krc"), directory, os.path.join(shared, "parity.json"))
    assert r.returncode == 0, r.stderr
    return directory


def python_options():
    return dict(OPTIONS, strategies=[OPTIONS["strategies"]], norm=[OPTIONS["norm"]])


def test_a_fifo_or_device_node_in_an_earlier_suite_is_refused_and_kept(shared):
    member = os.path.join(shared, "parity.json")
    targets = {}
    for door in ("cli", "py"):
        fifo = earlier_suite(shared, "fifo_" + door)
        shutil.rmtree(os.path.join(fifo, MODEL))
        os.mkfifo(os.path.join(fifo, MODEL), 0o600)
        device = earlier_suite(shared, "device_" + door)
        weights = os.path.join(device, MODEL, "weights.safetensors")
        os.remove(weights)
        os.mknod(weights, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
        targets[door] = {"fifo": (fifo, '"%s"' % MODEL),
                         "device": (device, '"%s/weights.safetensors"' % MODEL)}
    before = snapshot(os.path.join(shared, "open"))
    for name, (directory, named) in targets["cli"].items():
        r = cli_suite(os.path.join(shared, "krc"), directory, member)
        assert r.returncode == 2, (name, r.stderr)
        assert "krc: error: %s: is a directory holding %s" % (directory, named) in r.stderr
    for name, (directory, named) in targets["py"].items():
        with pytest.raises(krc.InputError) as e:
            krc.suite(directory, files=[member], **python_options())
        assert e.value.file == directory and "is a directory holding " + named in str(e.value)
    after = snapshot(os.path.join(shared, "open"))
    assert after == before  # the FIFOs and device nodes as they were; nothing beside them
    assert stat.S_ISFIFO(os.lstat(os.path.join(targets["py"]["fifo"][0], MODEL)).st_mode)


def test_an_unwritable_model_folder_is_refused_for_an_ordinary_user(shared):
    if os.geteuid() != 0:
        pytest.skip("becoming an ordinary user (uid %d) needs root" % NOBODY)
    member = os.path.join(shared, "parity.json")
    targets = {door + "_" + case: earlier_suite(shared, door + "_" + case)
               for door in ("cli", "py") for case in ("locked", "mine")}
    for root, dirs, names in os.walk(os.path.join(shared, "open")):
        for n in [root] + [os.path.join(root, d) for d in dirs + names]:
            os.chown(n, NOBODY, NOBODY)
    for door in ("cli", "py"):
        os.chmod(os.path.join(targets[door + "_locked"], MODEL), 0o500)
    # The earlier suites differ from what the doors write (a verify report edited), so that
    # a replaced one shows.
    for directory in targets.values():
        with open(os.path.join(directory, "manifest.json"), "a") as f:
            f.write(" ")
    locked = {door: snapshot(targets[door + "_locked"]) for door in ("cli", "py")}
    got = {}
    for case in ("locked", "mine"):
        got["cli_" + case] = cli_suite(os.path.join(shared, "krc"), targets["cli_" + case],
                                       member, user=NOBODY)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(krc.__file__)))
    paths = {name: (targets[name], member) for name in ("py_locked", "py_mine")}
    r = subprocess.run([sys.executable, "-c", AS_NOBODY, json.dumps(paths),
                        json.dumps(python_options())], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    python = json.loads(r.stdout)
    problem = 'cannot replace the directory: krc may not write "%s" in it: Permission denied' % \
        MODEL
    cli = got["cli_locked"]
    assert cli.returncode == 2 and \
        "krc: error: %s: %s" % (targets["cli_locked"], problem) in cli.stderr, cli.stderr
    assert python["py_locked"] == ["InputError", targets["py_locked"],
                                   "%s: %s" % (targets["py_locked"], problem)]
    for door in ("cli", "py"):
        assert snapshot(targets[door + "_locked"]) == locked[door]  # bytes, types, the 0500
    # Where the ordinary user may write the earlier suite, both doors replace it, whole.
    assert got["cli_mine"].returncode == 0, got["cli_mine"].stderr
    assert python["py_mine"] == ["ok"]
    for door in ("cli", "py"):
        manifest = open(os.path.join(targets[door + "_mine"], "manifest.json")).read()
        assert not manifest.endswith("\n ") and json.loads(manifest)["models"][0]["model"] == MODEL
    assert [n for n in os.listdir(os.path.join(shared, "open")) if n.startswith(".krc")] == []
