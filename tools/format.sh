#!/usr/bin/env bash
# Applies .clang-format to every tracked C++ source (tools/format.sh), or only reports the files
# that differ from it and fails (tools/format.sh --check, what the test suite runs).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
formatter=${CLANG_FORMAT:-clang-format}
if ! command -v "$formatter" >/dev/null; then
  echo "format.sh: $formatter is not installed (tools/setup.sh installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' 2>/dev/null || find compiler runtime automata tests tools -name '*.[ch]pp')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    "$formatter" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format (run tools/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files follow .clang-format"
else
  for f in "${files[@]}"; do [ -f "$f" ] && "$formatter" -i "$f"; done
  echo "format.sh: formatted ${#files[@]} files"
fi
