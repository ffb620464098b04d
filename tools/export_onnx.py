#!/usr/bin/env python3
"""What `krc export FILE --format onnx -o OUT` runs: the Python package's ONNX export
(krc.onnx_export.to_onnx), so that the command line and `Network.to_onnx` write the same bytes
from one implementation, through krc's one writer (whole or not at all, never over a device, a
FIFO or the input).

Usage: export_onnx.py [--core-dir DIR] [--max-bytes N] [--json] FILE OUT

--core-dir: the directory of the krc._core extension built beside the krc binary that runs this
(tools/krc_package.py); --max-bytes: refuse when the dense weights would pass N bytes (ONNX's
initializers are dense; at most 2 GiB in any case). Prints what it wrote (--json: one JSON
object). Exit status 0 when written; 2 with "krc: error: ..." on stderr when the input is not a
krc network, the budget or ONNX's 2 GiB is passed, the output cannot be written, or the extra
krc[onnx] is missing; 130 on Ctrl-C (nothing written)."""
import argparse
import json
import os
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
from krc_package import import_krc  # noqa: E402


def parse(argv):
    """(weights, out, core_dir, max_bytes, as_json); argparse's usage error (exit 2) otherwise."""
    parser = argparse.ArgumentParser(prog="export_onnx.py", description=__doc__.split("\n")[0])
    parser.add_argument("--core-dir")
    parser.add_argument("--max-bytes", type=int)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("file")
    parser.add_argument("out")
    a = parser.parse_args(argv)
    return a.file, a.out, a.core_dir, a.max_bytes, a.json


def export(krc, weights, out, max_bytes):
    """Writes OUT; the summary's fields."""
    from krc.errors import require
    require(["torch", "safetensors", "onnx"], "onnx", "krc export --format onnx")
    from krc.dense_budget import DenseBudgetError
    from krc.onnx_export import to_onnx
    options = {} if max_bytes is None else {"max_dense_bytes": max_bytes}
    try:
        to_onnx(weights, out, **options)
    except DenseBudgetError as e:  # the command line's spelling of the budget
        raise ValueError(e.message_naming("--max-bytes %d" % e.budget)) from None
    return {"file": weights, "output": out, "format": "onnx", "bytes": os.path.getsize(out)}


def main(argv):
    weights, out, core_dir, max_bytes, as_json = parse(argv)
    if out == "-":
        print("krc: error: --output: an ONNX model is written to a file, not to stdout (-)",
              file=sys.stderr)
        return 2
    try:
        krc = import_krc(core_dir)
        try:
            summary = export(krc, weights, out, max_bytes)
        except (krc.KrcError, ValueError, OSError) as e:
            print("krc: error: %s" % e, file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        print("krc: interrupted; %s was not written" % out, file=sys.stderr)
        return 130
    if as_json:
        print(json.dumps(summary))
    else:
        print("wrote %s (ONNX, opset 17, %d bytes) from %s" % (out, summary["bytes"], weights))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
