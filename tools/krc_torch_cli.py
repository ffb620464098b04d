"""The command line of tools/krc_torch.py (README "PyTorch and TransformerLens").

Usage: krc_torch.py FILE [--attention softmax|hard] [--dtype float32|bfloat16|float16]
                   [--sparse-mlp] [--residual] [--threads N] [--bench] [LETTER ...]
An argument that is a letter is that letter ("SYN(V,V,0)"); any other is split into letters by
tabs if it has one, else by spaces and the commas outside brackets (a piece that is not a
letter but spells one-character letters is read letter by letter); without letters, words are
read from stdin, one per line, split the same way (krc bench torch writes them tab-separated).
Prints one JSON line per word, as `krc run --json` does:
{"letters", "states", "margins", "expected", "attention", "precision"}; --dtype runs the
module in that dtype (weights cast to it, every operation in it; default float32), and
"precision" names it. --residual adds
"residual": {hook name: [{label: value} for each position, nonzero entries only]}.
--sparse-mlp runs the MLPs through sparse weights (KrcTransformer.use_sparse_mlp). --bench
times one batched forward pass over the words from stdin and prints {"seconds", "cpu_seconds",
"threads", "states": [state ids per word]} (what `krc bench torch` reads)."""
import json
import sys
import time

import torch

from krc_torch import DTYPES, KrcFileError, load_torch


def automaton_run(automaton, letters):
    """The automaton's state after every prefix (README "Input formats": names or indices)."""
    states = automaton["states"]
    index = {s: i for i, s in enumerate(states)}
    as_index = (lambda s: s if isinstance(s, int) else index[s])
    q = as_index(automaton["initial"])
    out = [states[q]]
    for a in letters:
        q = as_index(automaton["transitions"][a][q])
        out.append(states[q])
    return out


def split_letters(text):
    """One string of letters (automata/README.md, "Letters on the command line"): with a tab,
    tabs alone separate letters; else spaces and the commas outside brackets do."""
    if "\t" in text:
        return [p.strip("\r\n") for p in text.split("\t") if p.strip("\r\n")]
    parts, part, depth = [], "", 0
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth > 0:
            depth -= 1
        if c in " \r\n" or (c == "," and depth == 0):
            if part:
                parts.append(part)
            part = ""
        else:
            part += c
    return parts + ([part] if part else [])


def parse_word(arguments, alphabet):
    """An argument that is a letter is that letter; any other is split by split_letters, and a
    piece that is not a letter but spells one-character letters ("0110") is read letter by
    letter."""
    word = []
    for argument in arguments:
        if argument in alphabet:
            word.append(argument)
            continue
        for token in split_letters(argument):
            if token in alphabet:
                word.append(token)
            elif all(ch in alphabet for ch in token):
                word.extend(token)
            else:
                raise KrcFileError("letter %r is not in the network's alphabet (%s)"
                                   % (token, ", ".join(sorted(alphabet)) or "the alphabet is "
                                      "empty: the network reads only the empty word"))
    return word


def report(model, word, logits, attention, cache, dtype):
    top = torch.topk(logits.float(), min(2, logits.shape[1]), dim=1)
    margins = (top.values[:, 0] - top.values[:, 1]).tolist() if logits.shape[1] > 1 else \
        [None] * logits.shape[0]
    out = {"letters": word, "states": [model.states[s] for s in top.indices[:, 0].tolist()],
           "margins": margins, "expected": automaton_run(model.automaton, word),
           "attention": attention, "precision": dtype}
    if cache is not None:
        out["residual"] = {name: [model.labelled(row) for row in value[: len(word) + 1]]
                           for name, value in cache.items()}
    return out


def bench(model, words, attention):
    """Times one batched forward pass over the words (the file already loaded); the states by
    id after every prefix, for the caller to compare."""
    tokens = model.tokens(words)
    start, cpu = time.perf_counter(), time.process_time()
    logits = model(tokens, attention)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    states = logits.argmax(dim=2)
    config = torch.__config__.show()
    blas = config.split("BLAS_INFO=")[1].split(",")[0] if "BLAS_INFO=" in config else "unknown"
    return {"seconds": seconds, "cpu_seconds": cpu, "threads": torch.get_num_threads(),
            "torch": torch.__version__, "blas": blas,
            "states": [states[w, : len(word) + 1].tolist() for w, word in enumerate(words)]}


def main(argv):
    args = argv[1:]
    options = {"--attention": None, "--threads": None, "--dtype": "float32"}
    for name in options:
        if name in args:
            at = args.index(name)
            options[name] = args[at + 1] if at + 1 < len(args) else None
            del args[at:at + 2]
    flags = {f: f in args for f in ("--residual", "--sparse-mlp", "--bench")}
    args = [a for a in args if a not in flags]
    residual, sparse = flags["--residual"], flags["--sparse-mlp"]
    if not args or args[0].startswith("-") or options["--attention"] not in (None, "softmax", "hard") \
            or options["--dtype"] not in DTYPES:
        sys.stderr.write(__doc__ + "\n")
        return 2
    if options["--threads"]:
        if not options["--threads"].isdigit() or int(options["--threads"]) < 1:
            sys.stderr.write("krc_torch: error: --threads wants a positive number\n")
            return 2
        torch.set_num_threads(int(options["--threads"]))
    try:
        model = load_torch(args[0], dtype=options["--dtype"]).use_sparse_mlp(sparse)
        attention = options["--attention"] or model.attention
        alphabet = set(model.vocabulary[1:])
        lines = [args[1:]] if len(args) > 1 else [[line] for line in sys.stdin.read().splitlines()]
        words = [parse_word(line, alphabet) for line in lines]
        for word in words:
            if len(word) > model.max_len:
                raise KrcFileError("a word of %d letters, more than the network's max_len %d"
                                   % (len(word), model.max_len))
    except (OSError, ValueError) as e:  # KrcFileError, and --sparse-mlp outside float32
        sys.stderr.write("krc_torch: error: %s\n" % e)
        return 2
    if flags["--bench"]:
        print(json.dumps(bench(model, words, attention)))
        return 0
    names = None if residual else ()
    with torch.no_grad():
        for word in words:
            logits, cache = model.run_with_cache(model.tokens([word]), attention, names)
            cache = {n: v[0].float() for n, v in cache.items()} if residual else None
            print(json.dumps(report(model, word, logits[0], attention, cache, options["--dtype"])))
    return 0
