#!/usr/bin/env python3
"""What `krc bench frameworks` runs (tools/README.md, "Frameworks side by side"): krc's runtime,
PyTorch (dense, and with every layer matrix sparse) and onnxruntime (the package's ONNX export)
on the same words in this one process, interleaved, at one thread each, checked against the
automaton.

Usage: bench_frameworks.py [--core-dir DIR] [--words K] [--length N] [--repetitions R]
                           [--seed S] [--json] FILE...

For each file: K random words of N letters (default: min(256, max_len)) drawn with Python's
random.Random(S); every method runs every word once untimed (its preparation: krc's prepared
pass, ONNX's session), then R rounds, each running every word through every method, the
methods' order rotated from round to round, so that a drift in the machine's speed falls on all
of them alike. Each call is one word (batch 1) and is timed in the process's CPU seconds and in
wall seconds, the argmax over the logits included. Every call's state at every position is
compared with the automaton's (the file's own automaton, run letter by letter): a method that
is wrong anywhere is reported wrong, with its first wrong word and position, and gets no time.

Methods: krc (krc.Network.run, one word a call), torch (krc.torch_module.load_torch, dense
float32, torch.inference_mode), torch-sparse (load_torch(sparse=True): MLP and head matrices as
torch.sparse CSR), onnxruntime (krc.onnx_export.to_onnx into a temporary folder, one
InferenceSession, intra- and inter-op threads 1, sequential). torch.set_num_threads(1); BLAS
and OpenMP pools are set to one thread before numpy loads. A framework that cannot be imported
is named and its columns skipped; a network a method cannot hold (the dense budget, ONNX's
2 GiB) is skipped for that method with the reason.

Useful work: the multiply-adds per word that the network's nonzero weights need, counted from
the file's weights: per position, each head's nonzero q, k, v, o entries, each MLP's nonzero
W_in and W_out entries and the unembedding's; per head and query position t, (t + 1) keys times
the head dimensions whose q and k columns are both nonzero (scores) plus the value dimensions
whose v column and o row are both nonzero (value sums). Two FLOPs a multiply-add; krc's useful
GFLOP/s is that over krc's median CPU seconds per word, and the peak it is set against is the
best of 7 dense 1024 x 1024 float32 products (torch.matmul and numpy.matmul) at one thread.

Exit status: 0 when krc ran and every method that ran was right at every position, 1 when a
method was wrong somewhere, 2 on bad input or when krc itself could not run."""
import os

# One thread for every BLAS and OpenMP pool, before numpy or torch is imported.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_name] = "1"

import importlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

METHODS = ("krc", "torch", "torch-sparse", "onnxruntime")
TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
from bench_methods import make_methods, skip_reason  # noqa: E402
from krc_package import import_krc  # noqa: E402


class Usage(ValueError):
    pass


def optional_imports():
    """{name: module or the reason it is missing}."""
    found = {}
    for name in ("torch", "onnxruntime"):
        try:
            found[name] = importlib.import_module(name)
        except Exception as e:  # ImportError, or a broken install
            found[name] = "%s cannot be imported in %s (%s: %s)" % (
                name, sys.executable, type(e).__name__, e)
    if not isinstance(found["torch"], str):
        found["torch"].set_num_threads(1)
        try:
            import onnx  # noqa: F401  (to_onnx builds the graph with it)
        except Exception as e:
            if not isinstance(found["onnxruntime"], str):
                found["onnxruntime"] = "onnx (the export's graph builder) cannot be imported " \
                                       "(%s: %s)" % (type(e).__name__, e)
    elif not isinstance(found["onnxruntime"], str):
        found["onnxruntime"] = "the ONNX export builds its graph from the torch module, and " \
                               "torch cannot be imported"
    return found


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


def measure_peak(torch):
    """The best GFLOP/s (per CPU second) of 7 dense float32 1024 x 1024 products at one thread,
    numpy's and torch's; and which gave it."""
    import numpy as np

    n = 1024
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    candidates = [("numpy.matmul", lambda: a @ b)]
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        candidates.append(("torch.matmul", lambda: torch.matmul(ta, tb)))
    best, by = 0.0, None
    for name, product in candidates:
        product()  # warm
        for _ in range(7):
            cpu = time.process_time()
            product()
            seconds = time.process_time() - cpu
            if seconds > 0 and 2.0 * n ** 3 / seconds / 1e9 > best:
                best, by = 2.0 * n ** 3 / seconds / 1e9, name
    return {"gflops": best, "by": by, "size": n, "dtype": "float32", "threads": 1,
            "numpy": np.__version__}


def useful_multiply_adds(network, length):
    """Multiply-adds per word of `length` letters (the module docstring's count)."""
    import numpy as np

    positions = length + 1
    keys = positions * (positions + 1) // 2  # sum over t of t + 1
    per_position, per_key = 0, 0
    for layer in network.layers:
        for h in layer.heads:
            q, k, v, o = h.query, h.key, h.value, h.output
            per_position += sum(int(np.count_nonzero(m)) for m in (q, k, v, o))
            per_key += int(np.count_nonzero(q.any(axis=0) & k.any(axis=0)))
            per_key += int(np.count_nonzero(v.any(axis=0) & o.any(axis=1)))
        if layer.mlp is not None:
            per_position += int(np.count_nonzero(layer.mlp.in_weight))
            per_position += int(np.count_nonzero(layer.mlp.out_weight))
    per_position += int(np.count_nonzero(network._core.unembedding))
    return per_position * positions + per_key * keys


def first_difference(states, expected):
    """The first position where states differ from expected (a shorter answer differs where
    it ends), or None."""
    import numpy as np

    states = np.asarray(states)
    n = min(len(states), len(expected))
    differ = np.flatnonzero(states[:n] != expected[:n])
    if len(differ):
        return int(differ[0])
    return None if len(states) == len(expected) else n


def call(method, i, expected):
    """One timed call of `method` on word i; the answer is checked after the clock stops."""
    cpu, wall = time.process_time(), time.perf_counter()
    states = method.run(i)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    wrong = first_difference(states, expected[i])
    if wrong is not None and method.first_wrong is None:
        method.first_wrong = {"word": i, "position": wrong}
    return cpu, wall


def draw_words(network, path, options):
    """The length and the random words, the same for every method."""
    length = options["length"] if options["length"] is not None else min(256, network.max_len)
    if length > network.max_len:
        raise Usage("%s: --length %d is longer than the network's max_len %d"
                    % (path, length, network.max_len))
    if not network.letters:
        raise Usage("%s: the automaton has no letters, so there are no random words to time"
                    % path)
    rng = random.Random(options["seed"])
    return length, [[rng.choice(network.letters) for _ in range(length)]
                    for _ in range(options["words"])]


def warm_up(methods, words, expected, skipped):
    """One untimed call each (krc prepares its pass, the others make their first allocations);
    the methods that ran it. A framework that fails is skipped with the reason; krc raises."""
    ready = []
    for m in methods:
        try:
            m.prepare(words)
            call(m, 0, expected)
            ready.append(m)
        except Exception as e:
            if m.name == "krc":
                raise
            skipped[m.name] = "failed on the first word: " + skip_reason(e)
    return ready


def run_rounds(methods, words, expected, repetitions):
    """Round r runs every word through every method, the methods' order rotated by r."""
    for r in range(repetitions):
        order = methods[r % len(methods):] + methods[:r % len(methods)]
        for i in range(len(words)):
            for m in order:
                cpu, wall = call(m, i, expected)
                m.cpu.append(cpu)
                m.wall.append(wall)


def method_rows(methods, skipped):
    """One row per name in METHODS: medians and the ratio to krc for a right method, none for
    a wrong or skipped one."""
    krc_cpu = statistics.median(methods[0].cpu) if methods[0].first_wrong is None else None
    rows = []
    for name in METHODS:
        m = next((m for m in methods if m.name == name), None)
        if m is None:
            rows.append({"method": name, "skipped": skipped[name], "right": None,
                         "seconds_per_word": None, "wall_seconds_per_word": None,
                         "ratio_to_krc": None})
            continue
        right = m.first_wrong is None
        cpu = statistics.median(m.cpu) if right else None
        rows.append({"method": name, "right": right, "first_wrong": m.first_wrong,
                     "seconds_per_word": cpu,
                     "wall_seconds_per_word": statistics.median(m.wall) if right else None,
                     "ratio_to_krc": cpu / krc_cpu if right and krc_cpu else None,
                     "samples": len(m.cpu)})
    return rows


def bench_file(krc, found, path, network, options):
    import numpy as np

    length, words = draw_words(network, path, options)
    state_index = {s: i for i, s in enumerate(network.states)}
    # The oracle: the file's automaton run letter by letter (a state the network cannot name
    # is -1, which no method's answer equals).
    expected = [np.array([state_index.get(s, -1) for s in network.automaton.run(w)])
                for w in words]
    with tempfile.TemporaryDirectory(prefix="krc-bench-frameworks-") as folder:
        methods, skipped = make_methods(krc, found, path, network, state_index, folder)
    methods = warm_up(methods, words, expected, skipped)
    run_rounds(methods, words, expected, options["repetitions"])
    rows = method_rows(methods, skipped)
    multiply_adds = useful_multiply_adds(network, length)
    krc_cpu = rows[0]["seconds_per_word"]
    size = network.size
    return {"file": path, "automaton": network.automaton.name, "strategy": network.strategy,
            "attention": network.attention, "layers": size.layers, "d_model": size.d_model,
            "nonzeros": size.nonzeros, "words": len(words), "length": length,
            "repetitions": options["repetitions"], "seed": options["seed"],
            "useful_multiply_adds_per_word": multiply_adds,
            "krc_useful_gflops": 2.0 * multiply_adds / krc_cpu / 1e9 if krc_cpu else None,
            "methods": rows}


def cell(value, digits=4):
    return "-" if value is None else ("%.*g" % (digits, value))


def print_table(report):
    peak = report["peak"]
    print("CPU: %s; one thread each; CPU seconds per word, the median over rounds and words"
          % report["cpu"])
    print("peak: %.1f GFLOP/s (%s, float32 %d x %d, best of 7, one thread)\n"
          % (peak["gflops"], peak["by"], peak["size"], peak["size"]))
    print("%-34s %-13s %-13s %-9s %12s %12s %8s" % ("file", "words x len", "method", "right",
                                                     "CPU s/word", "wall s/word", "÷ krc"))
    for n in report["networks"]:
        label = "%d x %d" % (n["words"], n["length"])
        for m in n["methods"]:
            if "skipped" in m:
                right = "skipped"
            elif m["right"]:
                right = "yes"
            else:
                right = "WRONG w%d t%d" % (m["first_wrong"]["word"], m["first_wrong"]["position"])
            print("%-34s %-13s %-13s %-9s %12s %12s %8s" % (
                os.path.basename(n["file"])[:34], label, m["method"], right,
                cell(m["seconds_per_word"]), cell(m["wall_seconds_per_word"]),
                cell(m["ratio_to_krc"], 3)))
        if n["krc_useful_gflops"] is not None:
            print("%-34s krc useful work: %.4g multiply-adds a word, %.3g GFLOP/s, %.1f%% of the "
                  "peak" % ("", n["useful_multiply_adds_per_word"], n["krc_useful_gflops"],
                            100 * n["krc_useful_gflops"] / peak["gflops"]))
    for name, reason in report["skipped_frameworks"].items():
        print("%s: skipped: %s" % (name, reason))


def parse(argv):
    options = {"core_dir": None, "words": 4, "length": None, "repetitions": 5, "seed": 1,
               "json": False}
    files, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if a == "--json":
            options["json"] = True
            i += 1
        elif a in ("--core-dir", "--words", "--length", "--repetitions", "--seed"):
            if i + 1 == len(argv):
                raise Usage("%s wants a value" % a)
            key, value = a[2:].replace("-", "_"), argv[i + 1]
            if key != "core_dir":
                if not value.isdigit() or (int(value) < 1 and key != "seed"):
                    raise Usage("%s wants a positive number, not %r" % (a, value))
                value = int(value)
                if key in ("words", "repetitions") and value > 10000:
                    raise Usage("%s: at most 10000" % a)
            options[key] = value
            i += 2
        elif a.startswith("-"):
            raise Usage("unknown option %s" % a)
        else:
            files.append(a)
            i += 1
    if not files:
        raise Usage("no network files")
    return options, files


def main(argv):
    try:
        options, files = parse(argv[1:])
        krc = import_krc(options["core_dir"])
    except Usage as e:
        sys.stderr.write("krc: error: bench frameworks: %s\n" % e)
        return 2
    except ImportError as e:
        sys.stderr.write("krc: error: bench frameworks: krc's Python package cannot be imported "
                         "in %s (%s), so krc itself cannot run\n" % (sys.executable, e))
        return 2
    networks = []
    for path in files:  # bad input is refused before anything is imported or measured
        try:
            networks.append(krc.load(path))
        except (krc.KrcError, OSError) as e:
            sys.stderr.write("krc: error: bench frameworks: %s\n" % e)
            return 2
    found = optional_imports()
    torch = None if isinstance(found["torch"], str) else found["torch"]
    report = {"cpu": cpu_model(), "threads": 1, "python": sys.version.split()[0],
              "krc": krc.__version__,
              "versions": {n: getattr(m, "__version__", None) for n, m in found.items()
                           if not isinstance(m, str)},
              "skipped_frameworks": {n: m for n, m in found.items() if isinstance(m, str)},
              "peak": measure_peak(torch), "networks": []}
    for path, network in zip(files, networks):
        try:
            report["networks"].append(bench_file(krc, found, path, network, options))
        except (Usage, krc.KrcError, OSError) as e:
            sys.stderr.write("krc: error: bench frameworks: %s\n" % e)
            return 2
        except Exception as e:  # exit 1 means a wrong answer: a crash is not one
            import traceback
            traceback.print_exc()
            sys.stderr.write("krc: error: bench frameworks: %s: %s\n" % (path, skip_reason(e)))
            return 2
        if not options["json"]:
            sys.stdout.flush()
    report["all_right"] = all(m["right"] is not False for n in report["networks"]
                              for m in n["methods"])
    if options["json"]:
        print(json.dumps(report, indent=1))
    else:
        print_table(report)
        print("\n%s" % ("every method that ran was right at every position of every word"
                        if report["all_right"] else "SOME METHOD WAS WRONG (its time is not "
                        "reported)"))
    return 0 if report["all_right"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
