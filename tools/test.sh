#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test. Pass --sanitize for the Debug build with
# AddressSanitizer and UndefinedBehaviorSanitizer (build directory build-asan); that build runs
# 20-50x slower, so the heavy verification tests then check 5% of their random automata and
# words (KRC_TEST_SCALE=0.05; set it yourself to choose another fraction) and leaves out the
# heavy tests (ctest label "heavy"). Where clang is
# installed, each fuzz target then runs briefly (tools/fuzz.sh, KRC_FUZZ_SECONDS, default 15).
# Last, the Python package's tests (tests/python, pytest in .venv; not in the sanitizer build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
if [ "${1:-}" = "--sanitize" ]; then
  KRC_PYTHON=0 tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DKRC_SANITIZE=ON
  build=build-asan
  export KRC_TEST_SCALE=${KRC_TEST_SCALE:-0.05}
  # The heavy tests (max-len 16384 and 65536) would take hours there; they run in Release.
  exclude=(-LE heavy)
else
  tools/setup.sh build
  build=build
  exclude=()
fi
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${exclude[@]}"
if [ "${1:-}" != "--sanitize" ]; then
  status=0
  bash tools/fuzz.sh "${KRC_FUZZ_SECONDS:-15}" || status=$?
  ((status == 0 || status == 2)) || exit "$status"  # 2: no clang with libFuzzer here
  # The krc package that tools/setup.sh installed into the environment, not the source tree.
  (cd tests/python && "${KRC_VENV:-$here/.venv}/bin/python" -m pytest -q -p no:cacheprovider .)
fi
