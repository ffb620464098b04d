#!/usr/bin/env bash
# Installs krc's Debian packages when they are missing, then configures and builds krc.
# Usage: tools/setup.sh [build-dir] [extra cmake arguments...]   (default build dir: build)
# KRC_BUILD_TARGETS="krc ..." builds only those targets (the demo builds just the krc command);
# unset, everything is built, the test programs included. Builds go through ccache (installed
# here too), which saves them where its cache (~/.cache/ccache) outlives the machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
shift || true

packages=(cmake g++ make libeigen3-dev libboost-graph-dev nlohmann-json3-dev doctest-dev
          libcli11-dev python3-numpy python3-torch clang-format ccache)
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
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
targets=()
for t in ${KRC_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
