"""Issue 31: krc.set_max_memory bounds the resident size of compiling, not only its estimates.

A random prefix-tree acceptor (tools/prefix_tree_acceptor.py, as FlexFringe and Stamina start
from) compiled to a cascade grows its program unit by unit; in a child interpreter whose address
space is limited a little above the budget (what `prlimit --as` sets), krc.compile must raise
krc.LimitError naming the phase and the budget, never die of the kernel's kill or MemoryError.
"""
import os
import subprocess
import sys

from conftest import REPO

CHILD = r"""
import resource, sys
sys.path.insert(0, %(tools)r)
import krc
from prefix_tree_acceptor import prefix_tree
import json, random

def statm():
    with open("/proc/self/statm") as f:
        size, resident = (int(v) * resource.getpagesize() for v in f.read().split()[:2])
    return size, resident

with open(%(path)r, "w") as f:
    json.dump(prefix_tree(300, 3, 40, random.Random(1)), f)
tree = krc.load_automaton(%(path)r, complete=True)
size, resident = statm()
budget = resident + (64 << 20)  # the interpreter's own resident size, and 64 MiB for krc
resource.setrlimit(resource.RLIMIT_AS, (size + budget + (128 << 20),) * 2)
krc.set_max_memory(budget)
try:
    krc.compile(tree, strategy="kr", max_len=64)
    print("compiled")
except krc.LimitError as e:
    print("LimitError", e.option, str(e))
# The peak of this process's memory (VmHWM): ru_maxrss would also count the parent that
# started it (Linux keeps the pre-exec high-water mark: pytest with torch loaded, 800 MB).
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmHWM:"))
print("peak", peak, "budget", budget)
"""


def test_building_a_cascade_stops_at_the_budget(tmp_path):
    code = CHILD % {"tools": os.path.join(REPO, "tools"), "path": str(tmp_path / "tree.json")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("LimitError max_memory "), r.stdout
    assert "building the Krohn-Rhodes cascade network: " in lines[0]
    # Spelt for Python: the keyword of krc.set_max_memory, not the flag (issue 33).
    assert "more than the memory budget (max_memory " in lines[0]
    _, peak, _, budget = lines[1].split()
    assert int(peak) < int(budget) + (4 << 20), r.stdout
