#!/usr/bin/python3
"""Checks that two krc binaries compile the same networks: for every description file in a
directory (default automata/zoo), each strategy and each max_len, both binaries compile it
and the two weights files must hold the same tensors (names, shapes and every value, bit for
bit, dense or sparse alike). Metadata may differ. For refactorings that must not change what
the compiler emits.

Usage: same_tensors.py OLD_KRC NEW_KRC [--automata DIR] [--strategies scan,kr]
                       [--max-len 64,1024]
Exit status 0 when every pair matches, 1 otherwise (each difference is printed)."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import load  # noqa: E402  (the reader written from README alone)


def compile_with(krc, source, strategy, max_len, out):
    subprocess.run([krc, "compile", source, "-o", out, "--strategy", strategy, "--max-len",
                    str(max_len)], check=True, stdout=subprocess.DEVNULL)
    tensors, _ = load(out, np.float32)
    return tensors


def differences(old, new):
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            yield "%s: only in %s" % (name, "new" if name in new else "old")
        elif old[name].shape != new[name].shape:
            yield "%s: shape %s vs %s" % (name, old[name].shape, new[name].shape)
        elif not np.array_equal(old[name].view(np.uint32), new[name].view(np.uint32)):
            yield "%s: values differ" % name


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--automata", default="automata/zoo")
    parser.add_argument("--strategies", default="scan,kr")
    parser.add_argument("--max-len", default="64,1024")
    args = parser.parse_args()
    failures = compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        for file in sorted(os.listdir(args.automata)):
            source = os.path.join(args.automata, file)
            for strategy in args.strategies.split(","):
                for max_len in map(int, args.max_len.split(",")):
                    old = compile_with(args.old, source, strategy, max_len, tmp + "/old.st")
                    new = compile_with(args.new, source, strategy, max_len, tmp + "/new.st")
                    compared += 1
                    for d in differences(old, new):
                        failures += 1
                        print("%s %s %d: %s" % (file, strategy, max_len, d))
    print("%d networks compared, %d differences" % (compared, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
