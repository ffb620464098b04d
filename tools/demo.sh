#!/usr/bin/env bash
# krc's main job on a built-in example, from a fresh machine: set up (apt-get, build), show the
# Krohn-Rhodes decomposition of gridworld_9, compile it into a transformer, verify every
# position of every word up to length 16 and of 1000 random words of the maximum length, and
# check with an independent numpy forward pass that the weights file means what krc says; last,
# the same word through the Python package.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
# Only the command and the Python extension, in one parallel build (pip then installs the
# package into .venv without compiling); tools/test.sh builds the tests. The core's Python
# dependencies alone (requirements-core.txt): no frameworks, seconds to install.
KRC_REQUIREMENTS=${KRC_REQUIREMENTS:-requirements-core.txt} KRC_BUILD_TARGETS="krc _core" \
  tools/setup.sh build

example=automata/zoo/gridworld_9.json
out=$(mktemp -d)/gridworld_9.safetensors
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step build/krc decompose "$example"
step build/krc compile "$example" -o "$out"
step build/krc verify "$out"
word="R R R L R R R R R R L L"
step build/krc run "$out" $word
printf '\n\033[1m$ /usr/bin/python3 tools/reference_forward.py %s %s\033[0m\n' "$out" "$word"
/usr/bin/python3 tools/reference_forward.py "$out" $word
python=${KRC_VENV:-$here/.venv}/bin/python
step "$python" -c "import krc; print(krc.load('$out').run('$word').states)"
