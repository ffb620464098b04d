"""Issue 31, item 4: the memory budget is a hard bound in every phase of the krc command.

Each case runs `build/krc` (or $KRC_BINARY) under `prlimit --as`, an address-space limit a few
hundred MiB above `--max-memory` (the binary, its libraries and the allocator's arenas are
mapped before krc allocates anything), with a small file whose structure makes one phase large:
reading, the subset construction, the holonomy decomposition, the scan planner, building,
verifying and exporting. (Minimisation is checked too, but its need is below the subset
construction's or the reader's before it, so no input drives it alone past the budget.) Each must stop with exit status 2 and a message naming the
phase and the memory budget: never the kernel's kill, never std::bad_alloc (krc's "out of
memory" message), never a partial output file. The peak resident size (the child's
ru_maxrss, measured by a small wrapper that forks it, so that pytest's own high-water mark is
not inherited) stays under the address-space limit by construction; the test also checks it
against the budget plus the binary's own baseline.

Not under AddressSanitizer: it reserves terabytes of shadow before main, so no address-space
limit can hold, and its resident size is no measure of the budget."""
import json
import os
import re
import random
import shutil
import signal
import subprocess
import sys

import pytest

from frameworks_support import krc_binary

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools")
sys.path.insert(0, TOOLS)
from prefix_tree_acceptor import prefix_tree  # noqa: E402

sys.path.remove(TOOLS)

MIB = 1 << 20
BUDGET = 200 * MIB
# The address-space limit: the budget and 384 MiB for what krc maps before it allocates (the
# binary and its libraries, glibc's arenas, thread stacks).
ADDRESS_SPACE = BUDGET + 384 * MIB
# What the checks cannot see beside the budget: krc's own resident size before it allocates
# (its binary and libraries, about 10 MiB) and the last growth under way.
BASELINE = 32 * MIB
VERIFY_BUDGET = 100 * MIB

# Forks krc (through prlimit) from a small interpreter and reports its exit status and peak
# resident size: ru_maxrss of a child that pytest started directly would keep pytest's own
# high-water mark across exec.
WRAPPER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\nwrapper: status %d peak %d\n"
                 % (os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024))
"""


def sanitized(binary):
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        return True
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


@pytest.fixture(scope="module")
def krc_command():
    binary = krc_binary()
    if binary is None:
        pytest.skip("no krc binary (build/krc or $KRC_BINARY)")
    if shutil.which("prlimit") is None:
        pytest.skip("no prlimit (util-linux)")
    if sanitized(binary):
        pytest.skip("AddressSanitizer: no address-space limit can hold")
    return binary


def run_limited(binary, *args, budget=BUDGET, address_space=ADDRESS_SPACE, timeout=60):
    """krc ARGS --max-memory BUDGET under prlimit --as: (status, stderr, peak bytes)."""
    command = [sys.executable, "-c", WRAPPER, "prlimit", "--as=%d" % address_space, "--",
               binary, *map(str, args), "--max-memory", str(budget)]
    # In a session of its own, so that a timeout kills krc too, not only the wrapper (an
    # orphaned krc once ran on for 100 minutes beside the rest of the suite).
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as child:
        try:
            _, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise
    tail = stderr.rstrip().rsplit("\n", 1)[-1].split()
    assert tail[:2] == ["wrapper:", "status"], stderr
    return int(tail[2]), stderr, int(tail[4])


def krc_unlimited(binary, *args):
    r = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def mib_text(size):
    """As krc prints a size of mebibytes (byte_size_text): 3 significant digits."""
    value = size / MIB
    return ("%.2f" if value < 10 else "%.1f" if value < 100 else "%.0f") % value + " MiB"


def check_refused(status, err, peak, phase, output=None, budget=BUDGET):
    """Exit 2 naming the phase and the budget; no kill, no bad_alloc, no output file."""
    assert status == 2, "status %d (a kill is negative): %s" % (status, err)
    # The phase leads the message, after the input file's name where the command names one.
    assert re.search(r"^krc: error: (\S+: )?" + re.escape(phase), err, re.M), err
    assert "more than the memory budget (--max-memory %s)" % mib_text(budget) in err, err
    assert "out of memory" not in err, err  # std::bad_alloc: an allocation no check foresaw
    assert peak < budget + BASELINE, peak
    if output is not None:
        assert not os.path.exists(output)


# -- inputs: small files, large structures -------------------------------------------------

def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def blowup_nfa_dot(k):
    """The NFA of (a|b)* a (a|b)^k: k + 2 states, whose subset construction makes 2^(k+1)."""
    lines = ["digraph nfa {", '  __start0 [label="" shape="none"];', "  __start0 -> q0;",
             '  q0 -> q0 [label="a"];', '  q0 -> q0 [label="b"];', '  q0 -> q1 [label="a"];']
    for i in range(1, k + 1):
        lines += ['  q%d -> q%d [label="a"];' % (i, i + 1), '  q%d -> q%d [label="b"];' % (i, i + 1)]
    lines.append('  q%d [shape="doublecircle"];' % (k + 1))
    return "\n".join(lines + ["}"]) + "\n"


def tree_json(states, letters=3, seed=1):
    return json.dumps(prefix_tree(states, letters, 40, random.Random(seed)))


def cycle_swap_merge_json(n):
    """A cycle, a swap and a merge on n states: its monoid is the full transformation monoid
    (n^n elements), so the scan planner has no element form and n^3 units a step."""
    states = [str(q) for q in range(n)]
    cycle = [(q + 1) % n for q in range(n)]
    swap = [1, 0] + list(range(2, n))
    merge = [0, 0] + list(range(2, n))
    return json.dumps({"states": states, "alphabet": ["c", "s", "m"], "initial": 0,
                       "transitions": {"c": cycle, "s": swap, "m": merge}})


# -- one case per phase --------------------------------------------------------------------

def test_reading_stops_at_the_budget(krc_command, tmp_path):
    # A 90-byte HOA file declaring a billion states.
    path = write(tmp_path, "huge.hoa",
                 "HOA: v1\nStates: 1000000000\nStart: 0\nAcceptance: 0 t\nAP: 1 \"p\"\n"
                 "--BODY--\n--END--\n")
    status, err, peak = run_limited(krc_command, "info", path)
    check_refused(status, err, peak, "reading " + path + ": ")
    assert "states of the HOA automaton" in err


def test_subset_construction_stops_at_the_budget(krc_command, tmp_path):
    path = write(tmp_path, "nfa.dot", blowup_nfa_dot(24))  # 26 states, 2^25 subsets
    status, err, peak = run_limited(krc_command, "info", path, "--max-subset-states", 10 ** 9)
    check_refused(status, err, peak, "determinising: the subset construction of ")


def test_holonomy_stops_at_the_budget(krc_command, tmp_path):
    path = write(tmp_path, "tree.json", tree_json(8000))
    out = str(tmp_path / "kr.safetensors")
    status, err, peak = run_limited(krc_command, "compile", path, "--complete", "--strategy", "kr",
                                    "--max-len", 64, "-o", out, budget=100 * MIB,
                                    address_space=100 * MIB + 384 * MIB)
    check_refused(status, err, peak, "decomposing (holonomy): ", out, budget=100 * MIB)


def test_scan_planning_stays_within_the_budget(krc_command, tmp_path):
    # 2,450 states after minimisation: no integer form (n > 2,047), and a monoid far larger than
    # any table the budget holds, so the planner enumerates it only that far, then finds every
    # form over the unit limit: exit 2 within the budget, in well under a second.
    path = write(tmp_path, "tree.json", tree_json(6000))
    out = str(tmp_path / "scan.safetensors")
    status, err, peak = run_limited(krc_command, "compile", path, "--complete", "--strategy",
                                    "scan", "--max-len", 64, "-o", out)
    assert status == 2, err
    assert "krc: error: %s: scan: a parallel-prefix step over 2450 states would need" % path \
        in err, err
    assert "out of memory" not in err, err
    assert peak < BUDGET + BASELINE
    assert not os.path.exists(out)


def test_building_a_scan_stops_at_the_budget(krc_command, tmp_path):
    # 1,090 states: the integer form's program and its read-back bound, refused up front.
    path = write(tmp_path, "tree.json", tree_json(2500))
    out = str(tmp_path / "scan.safetensors")
    status, err, peak = run_limited(krc_command, "compile", path, "--complete", "--strategy",
                                    "scan", "--max-len", 64, "-o", out)
    check_refused(status, err, peak, "building the parallel-prefix network: scan: the parallel "
                  "prefix over 1090 states", out)


def test_building_a_cascade_stops_at_the_budget(krc_command, tmp_path):
    path = write(tmp_path, "tree.json", tree_json(300))
    out = str(tmp_path / "kr.safetensors")
    status, err, peak = run_limited(krc_command, "compile", path, "--complete", "--strategy", "kr",
                                    "--max-len", 64, "-o", out, budget=48 * MIB,
                                    address_space=48 * MIB + 384 * MIB)
    check_refused(status, err, peak, "building the Krohn-Rhodes cascade network: ", out,
                  budget=48 * MIB)


@pytest.fixture(scope="module")
def big_network(krc_command, tmp_path_factory):
    """The scan network of a 300-state prefix tree (about 12 MB), compiled without a limit."""
    directory = tmp_path_factory.mktemp("network")
    tree = write(directory, "tree.json", tree_json(300))
    path = str(directory / "scan.safetensors")
    krc_unlimited(krc_command, "compile", tree, "--complete", "--strategy", "scan", "--max-len",
                  64, "-o", path)
    return path


def test_verifying_stops_at_the_budget(krc_command, big_network):
    # Verifying holds the network and the forward pass's prepared copies, and a batch of words
    # per thread: the loader estimates the first two from the file's header before reading it
    # (they fit here), and the verifier the words' buffers before it runs them (they do not: 64
    # threads' buffers; on one thread the words fit beside the prepared copies' real size, 65 MB
    # at most, and the run goes on).
    status, err, peak = run_limited(krc_command, "verify", big_network, "--threads", 64,
                                    "--length", 64, "--random", 100000, budget=VERIFY_BUDGET,
                                    address_space=VERIFY_BUDGET + 384 * MIB)
    check_refused(status, err, peak, "verifying: running ", budget=VERIFY_BUDGET)
    assert re.search(r"words of up to \d+ letters on 64 threads needs about", err), err


def test_exporting_stops_at_the_budget(krc_command, big_network, tmp_path):
    out = str(tmp_path / "export.safetensors")
    status, err, peak = run_limited(krc_command, "export", big_network, "-o", out, "--max-bytes",
                                    10 ** 11)
    check_refused(status, err, peak, "exporting the dense TransformerLens file", out)


def bushy_tree_json(states, letters, seed):
    """A tree grown one state at a time at a random free (state, letter) slot: bushier and
    shallower than prefix_tree's words, and 30% of its states accepting. Completed, its monoid
    has thousands of elements over some 2,000 states."""
    rng = random.Random(seed)
    alphabet = [chr(ord("a") + i) for i in range(letters)]
    transitions = {a: [None] * states for a in alphabet}
    free = [(0, a) for a in alphabet]
    for child in range(1, states):
        i = rng.randrange(len(free))
        (parent, a), free[i] = free[i], free[-1]
        free.pop()
        transitions[a][parent] = child
        free += [(child, b) for b in alphabet]
    accepting = [q for q in range(states) if rng.random() < 0.3]
    return json.dumps({"name": "bushy_%d" % states, "states": [str(q) for q in range(states)],
                       "alphabet": alphabet, "initial": 0, "accepting": accepting,
                       "transitions": transitions})


def test_a_wide_prefix_tree_is_refused_quickly_at_4g(krc_command, tmp_path):
    # Issue 31's case at its own budget: a 10,539-state partial tree over 20 letters,
    # `--complete --max-memory 4G`. Its monoid (some 19,000 elements over 2,172 states) fits a
    # 4 GiB table, and the element form's product table used to compose every pair of elements
    # (m^2 compositions of n states: more than 10 minutes). It is now walked along the BFS tree:
    # seconds. The timeout is the test: the refusal (every form over the unit limit) must come
    # within it, exit 2, inside the budget.
    path = write(tmp_path, "bushy.json", bushy_tree_json(10539, 20, 7))
    out = str(tmp_path / "bushy.safetensors")
    budget = 4 << 30
    status, err, peak = run_limited(krc_command, "compile", path, "--complete", "-o", out,
                                    budget=budget, address_space=budget + 512 * MIB, timeout=240)
    assert status == 2, err
    assert "krc: error: %s: no strategy fits: scan: a parallel-prefix step over" % path in err, err
    assert "out of memory" not in err, err
    assert peak < budget + BASELINE
    assert not os.path.exists(out)
