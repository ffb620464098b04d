#!/usr/bin/env bash
# Installs krc's Debian packages when they are missing, creates the Python environment .venv
# (requirements.txt), then configures and builds krc and installs the Python package krc into
# .venv from that same build (pip reuses the build directory: the C++ is compiled once).
# Usage: tools/setup.sh [build-dir] [extra cmake arguments...]   (default build dir: build)
# KRC_BUILD_TARGETS="krc ..." builds only those targets (the demo builds just the krc command);
# unset, everything is built, the test programs included. Builds go through ccache (installed
# here too), which saves them where its cache (~/.cache/ccache) outlives the machine.
# The libraries and the command build as a unity build, 16 sources a compiler run (KRC_UNITY=0: one
# source at a time, quicker to rebuild after editing one file): a fresh machine has no ccache, and
# the demo's cold build took 6.5 minutes one source at a time, about a third of that batched. The
# networks do not depend on it: the zoo's 76 networks (every strategy, fp32 and bf16) came out
# byte-identical from both builds. The test programs always build one source at a time.
# KRC_PYTHON=0 leaves out the environment and the package (sanitizer and fuzz builds do);
# KRC_VENV=DIR uses another environment than .venv; KRC_REQUIREMENTS=FILE installs FILE's pins
# instead of requirements.txt (the demo: requirements-core.txt, no frameworks).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
shift || true

packages=(cmake g++ make libeigen3-dev libboost-graph-dev nlohmann-json3-dev doctest-dev
          libcli11-dev zlib1g-dev python3-numpy clang-format python3-venv ccache
          pkg-config graphviz libgraphviz-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "krc setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cd "$here"
python=${KRC_PYTHON:-1}
# A sanitized extension would not load into a plain interpreter: those builds leave Python out.
case " $* " in *-DKRC_SANITIZE=ON*|*-DKRC_FUZZ=ON*) python=${KRC_PYTHON:-0} ;; esac
venv=${KRC_VENV:-$here/.venv}
cmake_python=()
if [ "$python" = 1 ]; then
  if [ ! -x "$venv/bin/python" ]; then
    echo "krc setup: creating the Python environment $venv" >&2
    python3 -m venv "$venv"
  fi
  # pip install -r takes seconds even when nothing is missing: only when the list changed.
  # KRC_REQUIREMENTS=requirements-core.txt (README's demo) installs the core alone.
  requirements=${KRC_REQUIREMENTS:-requirements.txt}
  stamp="$venv/.krc-requirements"
  if ! cmp -s "$requirements" "$stamp"; then
    "$venv/bin/python" -m pip install -q -r "$requirements"
    cp "$requirements" "$stamp"
  fi
  cmake_python=(-DKRC_PYTHON=ON "-DPython_EXECUTABLE=$venv/bin/python")
fi

unity=(-DCMAKE_UNITY_BUILD=OFF)
if [ "${KRC_UNITY:-1}" = 1 ]; then
  unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${unity[@]}" "${launcher[@]}" "${cmake_python[@]}" \
  "$@" \
  >/dev/null
targets=()
for t in ${KRC_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"

if [ "$python" = 1 ]; then
  # `pip install .` by scikit-build-core, in the build directory just built (its generator, no
  # isolated environment): it builds only what is missing (the extension), then installs.
  build_dir=$(cd "$build" && pwd)
  cached() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
  CMAKE_GENERATOR=$(cached CMAKE_GENERATOR) \
    "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps \
    -C "build-dir=$build_dir" -C "cmake.build-type=$(cached CMAKE_BUILD_TYPE)" "$here"
fi
