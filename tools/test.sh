#!/usr/bin/env bash
# Sets up (tools/setup.sh), builds and runs the tests. One mode a run:
#   tools/test.sh             what CI runs (.ci/run): the Release suite, then the sanitized lane
#   tools/test.sh --release   the Release suite (build/): every test, then each fuzz target
#                             briefly where clang is installed (tools/fuzz.sh, KRC_FUZZ_SECONDS,
#                             default 15), then the Python package's tests (tests/python, pytest in .venv)
#   tools/test.sh --lane      the sanitized lane: the Debug build with AddressSanitizer and UBSan
#                             (build-asan/) of krc and the test programs, and the tests labelled
#                             "sanitize" by tests/sanitize_lane.cmake, at full scale (~15 min on 2 cores)
#   tools/test.sh --sanitize  every test but the heavy ones (label "heavy") in build-asan/; that
#                             build runs 20-50x slower, so KRC_TEST_SCALE defaults to 0.05 there
# --lane and --sanitize pass further arguments to ctest (-R 'runtime: ': that module's tests).
# Sanitizer reports go to build-asan/sanitizer/ (one file per process that had one, child krc
# processes included); a sanitized run fails when there is any, and prints them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

release() {
  tools/setup.sh build
  ctest --test-dir build --output-on-failure -j"$(nproc)"
  local status=0
  bash tools/fuzz.sh "${KRC_FUZZ_SECONDS:-15}" || status=$?
  ((status == 0 || status == 2)) || exit "$status"  # 2: no clang with libFuzzer here
  # The krc package that tools/setup.sh installed into the environment, not the source tree.
  (cd tests/python && "${KRC_VENV:-$here/.venv}/bin/python" -m pytest -q -p no:cacheprovider .)
}

# sanitized CTEST_ARGS...: builds build-asan (KRC_BUILD_TARGETS: only those) and runs ctest there.
sanitized() {
  KRC_PYTHON=0 tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DKRC_SANITIZE=ON
  local reports="$here/build-asan/sanitizer"
  rm -rf "$reports" && mkdir -p "$reports"
  # A distinct exit status, so that a test expecting krc's 1 or 2 cannot take a report for it.
  export ASAN_OPTIONS="log_path=$reports/asan:exitcode=23:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:exitcode=23:print_stacktrace=1:${UBSAN_OPTIONS:-}"
  local status=0
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@" || status=$?
  # The Python bindings' tests join here, against the sanitized build, ASan's runtime preloaded
  # for the interpreter (CPython's own allocations are not leaks):
  #   LD_PRELOAD=$(g++ -print-file-name=libasan.so) ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 \
  #     .venv/bin/python -m pytest -q tests/python || status=$?
  if compgen -G "$reports/*" >/dev/null; then
    echo "test.sh: sanitizer reports in $reports:" >&2
    cat "$reports"/* >&2
    status=1
  fi
  return "$status"
}

# The lane needs krc and the test programs it labels (not the PyTorch and heavy ones).
lane_targets="krc test_automata test_frontend test_runtime test_tools test_decompose test_backend"
case "${1:-}" in
  "")
    release
    KRC_BUILD_TARGETS=$lane_targets sanitized -L sanitize
    ;;
  --release) release ;;
  --lane) KRC_BUILD_TARGETS=$lane_targets sanitized -L sanitize "${@:2}" ;;
  --sanitize)
    export KRC_TEST_SCALE=${KRC_TEST_SCALE:-0.05}
    sanitized -LE heavy "${@:2}"  # the heavy tests (max-len 16384 and 65536) run in Release only
    ;;
  *)
    echo "usage: tools/test.sh [--release | --lane [CTEST_ARGS...] | --sanitize [CTEST_ARGS...]]" >&2
    exit 2
    ;;
esac
