#!/usr/bin/env python3
"""Runs krc on the real automaton files other tools wrote that the repository holds, as a new
user would: default `krc compile FILE -o TMP` then `krc verify TMP`, and reports per format how
many were read, compiled and verified, with every refusal's message.

The files: those of tests/frontend/data/*/ (each folder's SOURCES.md names where every file
came from) and those of tests/reference/realworld/files (its SOURCES.md). The loose files at
the top of tests/frontend/data have no recorded source (some, such as mod3.*, krc's tests made
up), so they are left out. None of these files is held out: krc's readers were written and
tested against them (issue 34's Done-when asks for files the repository has never seen).

  tools/corpus.py [--krc BUILD/krc] [--realworld DIR] [--timeout S] [--max-memory SIZE]
                  [--json] [--from-json RESULTS.json]

A file counts as "read" when compile got past the reader: it printed its "krc: output ..." line,
which comes after the file is read and before the network is built (every refusal names the
file, the reader's and the compiler's alike, so the message cannot tell them apart).
Exit status 0 when the run finished (whatever the figures), 2 on a bad argument.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent.parent

# The format each extension names (krc's own choice by extension, automata/README.md).
FORMATS = {
    ".dot": "DOT", ".gv": "DOT", ".jff": "JFLAP", ".json": "JSON", ".hoa": "HOA",
    ".aut": "Aldebaran AUT", ".ba": "RABIT BA", ".gff": "GOAL GFF", ".taf": "AutomataLib TAF",
    ".fsm": "LTSmin FSM", ".vtf": "mata VTF", ".mata": "mata VTF", ".etf": "LTSmin ETF",
    ".adl": "Stamina ADL",
}


def corpus_files(realworld: pathlib.Path) -> list[pathlib.Path]:
    files = []
    for folder in sorted((HERE / "tests/frontend/data").iterdir()):
        if folder.is_dir() and (folder / "SOURCES.md").is_file():
            files += sorted(f for f in folder.iterdir() if f.is_file() and f.name != "SOURCES.md")
    files += sorted(f for f in (realworld / "files").iterdir() if f.is_file())
    return files


def first_error(stderr: str) -> str:
    """The refusal's message: from the first line saying "krc: error" up to the next "krc:" line
    (a name in a message may hold a newline); else the last line."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("krc: error"):
            message = [line.strip()]
            for more in lines[i + 1:]:
                if more.startswith("krc:"):
                    break
                message.append(more.strip())
            return " ".join(message)
    return lines[-1].strip() if lines else "(no message)"


def run(args: list[str], timeout: float) -> tuple[int | None, str]:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s"


def check(krc: str, path: pathlib.Path, timeout: float, memory: str, tmp: str,
          verify_args: tuple[str, ...] = ()) -> dict:
    """One file: compile, then verify (with krc's defaults, or verify_args)."""
    out = os.path.join(tmp, "model.safetensors")
    if os.path.exists(out):
        os.remove(out)
    env_args = ["--max-memory", memory]
    result = {"file": str(path.relative_to(HERE) if path.is_relative_to(HERE) else path),
              "format": FORMATS.get(path.suffix.lower(), path.suffix or "?"),
              "read": False, "compiled": False, "verified": False, "refusal": None}
    rc, err = run([krc, *env_args, "compile", str(path), "-o", out], timeout)
    if rc != 0:
        message = first_error(err)
        result["read"] = rc is not None and "krc: output " in err
        result["refusal"] = {"stage": "compile", "exit": rc, "message": message}
        return result
    result["read"] = result["compiled"] = True
    rc, err = run([krc, *env_args, "verify", out, *verify_args], timeout)
    if rc == 0:
        result["verified"] = True
    else:
        result["refusal"] = {"stage": "verify", "exit": rc, "message": first_error(err)}
    return result


def markdown(results: list[dict]) -> str:
    by_format: dict[str, list[dict]] = collections.defaultdict(list)
    for r in results:
        by_format[r["format"]].append(r)
    lines = ["| format | files | read | compiled | verified |", "|---|---|---|---|---|"]
    for fmt, rs in sorted(by_format.items()):
        lines.append(f"| {fmt} | {len(rs)} | {sum(r['read'] for r in rs)} | "
                     f"{sum(r['compiled'] for r in rs)} | {sum(r['verified'] for r in rs)} |")
    n = len(results)
    verified = sum(r["verified"] for r in results)
    lines.append(f"| **all** | {n} | {sum(r['read'] for r in results)} | "
                 f"{sum(r['compiled'] for r in results)} | {verified} ({100 * verified / n:.0f}%) |")
    refusals = [r for r in results if r["refusal"]]
    if refusals:
        lines += ["", "| file | stage | refusal |", "|---|---|---|"]
        for r in refusals:
            message = r["refusal"]["message"].replace(str(HERE) + "/", "").replace("|", "\\|")
            lines.append(f"| {pathlib.Path(r['file']).name} | {r['refusal']['stage']} | {message} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--krc", default=os.environ.get("KRC_BINARY", str(HERE / "build/krc")))
    parser.add_argument("--realworld", type=pathlib.Path,
                        default=HERE / "tests/reference/realworld",
                        help="the folder of real files (files/ and SOURCES.md; default "
                             "tests/reference/realworld, a superset of shared/reference/realworld)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per krc command")
    parser.add_argument("--max-memory", default="2G", help="krc's --max-memory per command")
    parser.add_argument("--verify-args", default="",
                        help="arguments for krc verify (default none: its own defaults), such as "
                             "'--random 100' where time is short")
    parser.add_argument("files", nargs="*", type=pathlib.Path,
                        help="only these files (default: the whole corpus)")
    parser.add_argument("--json", action="store_true", help="print every file's result as JSON")
    parser.add_argument("--from-json", type=pathlib.Path,
                        help="print the tables of an earlier --json run instead of running krc")
    args = parser.parse_args()
    if args.from_json:
        print(markdown(json.loads(args.from_json.read_text())))
        return 0
    if not os.access(args.krc, os.X_OK):
        parser.error(f"no krc binary at {args.krc} (--krc or KRC_BINARY)")
    files = [f.resolve() for f in args.files] or corpus_files(args.realworld)
    results = []
    with tempfile.TemporaryDirectory(prefix="krc_corpus_") as tmp:
        for path in files:
            results.append(check(args.krc, path, args.timeout, args.max_memory, tmp,
                                 tuple(args.verify_args.split())))
            r = results[-1]
            state = "verified" if r["verified"] else (r["refusal"]["stage"] + " refused")
            print(f"{r['file']}: {state}", file=sys.stderr)
    print(json.dumps(results, indent=1) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
