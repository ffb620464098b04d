#!/usr/bin/env python3
"""Verify krc networks in PyTorch, on any device and in any dtype: the check `krc verify
--arithmetic` makes in krc's runtime, made instead by the framework the user runs (a GPU's
cuBLAS and softmax kernels in bf16 or fp16, say).

Usage: torch_verify.py [--device cpu|cuda] [--dtype float32|bfloat16|float16] [--words N]
                       [--length L] [--seed S] [--sparse] FILE...

Each network is loaded with krc_torch.load_torch (weights cast to --dtype, every operation in
it; with --sparse the layers' weight matrices kept sparse, krc.torch_sparse, for networks whose
dense layers do not fit in memory: a dense load past 8 GiB is refused, exit 2, saying so), run
on N random words of L letters (default: the network's max_len), drawn with Python's
random.Random seeded by S and the file's name, and its state at every position (the argmax of
the logits, ties to the lowest state, as `krc run` reads it) compared with the automaton's,
which the file carries. Prints one JSON line per file: {"file", "device", "dtype", "words",
"length", "layers", "sparse", "first_wrong": [first wrong position per word, null where
right], "seconds"}, then a summary line {"files", "wrong_files"}. Exit 0 when every position of
every word is right, 1 when some is wrong, 2 on bad input (a file that is not a krc network)."""
import json
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from krc_torch import DTYPES, KrcFileError, load_torch  # noqa: E402
from krc.dense_budget import DenseBudgetError  # noqa: E402
from krc_torch_cli import automaton_run  # noqa: E402


def random_words(alphabet, count, length, seed):
    """count words of length letters, the same for the same seed (a string seed hashes
    deterministically in random.Random)."""
    rng = random.Random(seed)
    return [[rng.choice(alphabet) for _ in range(length)] for _ in range(count)]


def first_wrong(states, expected):
    """The first position (letters read) where states differ from expected, or None."""
    return next((t for t, (s, e) in enumerate(zip(states, expected)) if s != e), None)


def check(path, device, dtype, words, length, seed, sparse=False):
    """One file's JSON row."""
    start = time.perf_counter()
    model = load_torch(path, device=device, dtype=dtype, sparse=sparse)
    alphabet = model.vocabulary[1:]
    length = model.max_len if length is None else min(length, model.max_len)
    drawn = random_words(alphabet, words if alphabet else 1, length if alphabet else 0,
                         "%s:%s" % (seed, os.path.basename(path)))
    with torch.no_grad():
        logits = model(model.tokens(drawn))
    argmax = logits.float().argmax(dim=2).cpu()
    wrong = [first_wrong([model.states[s] for s in argmax[w, : len(word) + 1].tolist()],
                         automaton_run(model.automaton, word)) for w, word in enumerate(drawn)]
    if device == "cuda":
        torch.cuda.synchronize()
    return {"file": path, "device": device, "dtype": dtype, "words": len(drawn),
            "length": length, "layers": len(model.blocks), "sparse": sparse,
            "first_wrong": wrong,
            "seconds": round(time.perf_counter() - start, 3)}


def parse(argv):
    options = {"--device": "cpu", "--dtype": "float32", "--words": "3", "--length": None,
               "--seed": "1", "--sparse": False}
    files, i = [], 0
    while i < len(argv):
        if argv[i] == "--sparse":
            options["--sparse"] = True
            i += 1
        elif argv[i] in options and i + 1 < len(argv):
            options[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            raise ValueError("unknown option %s" % argv[i])
        else:
            files.append(argv[i])
            i += 1
    for name in ("--words", "--length"):
        if options[name] is not None and (not options[name].isdigit() or int(options[name]) < 1):
            raise ValueError("%s wants a positive number, not %r" % (name, options[name]))
    if options["--dtype"] not in DTYPES:
        raise ValueError("--dtype: one of %s" % ", ".join(DTYPES))
    if options["--device"] == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: this PyTorch sees no CUDA device")
    if not files:
        raise ValueError("no network files")
    return options, files


def main(argv):
    try:
        options, files = parse(argv[1:])
    except ValueError as e:
        sys.stderr.write("torch_verify: error: %s\n\n%s\n" % (e, __doc__))
        return 2
    wrong_files = 0
    for path in files:
        try:
            row = check(path, options["--device"], options["--dtype"], int(options["--words"]),
                        None if options["--length"] is None else int(options["--length"]),
                        options["--seed"], options["--sparse"])
        except (OSError, KrcFileError, DenseBudgetError) as e:
            sys.stderr.write("torch_verify: error: %s\n" % e)
            return 2
        wrong_files += any(w is not None for w in row["first_wrong"])
        print(json.dumps(row), flush=True)
    print(json.dumps({"files": len(files), "wrong_files": wrong_files}))
    return 1 if wrong_files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
