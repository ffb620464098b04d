#!/usr/bin/env bash
# Sets up (tools/setup.sh), builds and runs the tests. One mode a run:
#   tools/test.sh             what CI runs (.ci/run): the Release suite, then the sanitized lane
#   tools/test.sh --release   the Release suite (build/): every test, then each fuzz target
#                             briefly (tools/fuzz.sh, which installs clang-14 where it is missing;
#                             KRC_FUZZ_SECONDS, default 5), then the Python package's tests
#                             (tests/python, pytest in .venv)
#   tools/test.sh --lane      the sanitized lane: the Debug build with AddressSanitizer and UBSan
#                             (build-asan/) of krc and the test programs, and the tests labelled
#                             "sanitize" by tests/sanitize_lane.cmake, at full scale (~15 min on 2 cores),
#                             then the Python bindings' tests against the sanitized extension
#   tools/test.sh --sanitize  every test but the heavy ones (label "heavy") in build-asan/ (~35 min); that
#                             build runs 20-50x slower, so KRC_TEST_SCALE defaults to 0.05 there
# --lane and --sanitize pass further arguments to ctest (-R 'runtime: ': that module's tests).
# Sanitizer reports go to build-asan/sanitizer/ (one file per process that had one, child krc
# processes included); a sanitized run fails when there is any, and prints them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

release() {
  tools/setup.sh build
  echo "test.sh: the Release build is ready, ${SECONDS} s in"
  ctest --test-dir build --output-on-failure -j"$(nproc)"
  echo "test.sh: the Release ctest passed, ${SECONDS} s in"
  # The fuzz targets build and run beside pytest, which mostly keeps one core busy (3-4 minutes
  # of CI saved); their report follows pytest's.
  local status=0 tests=0 fuzz_log="$here/build/fuzz.log"
  KRC_FUZZ_INSTALL=${KRC_FUZZ_INSTALL:-1} bash tools/fuzz.sh "${KRC_FUZZ_SECONDS:-5}" \
    >"$fuzz_log" 2>&1 &
  local fuzz=$!
  # The krc package that tools/setup.sh installed into the environment, not the source tree.
  (cd tests/python && "${KRC_VENV:-$here/.venv}/bin/python" -m pytest -q -p no:cacheprovider .) ||
    tests=$?
  wait "$fuzz" || status=$?
  cat "$fuzz_log"
  echo "test.sh: pytest (status $tests) and the fuzz targets (status $status) are done, ${SECONDS} s in"
  ((status == 0 || status == 2)) || exit "$status"  # 2: no clang with libFuzzer here
  return "$tests"
}

# sanitized CTEST_ARGS...: builds build-asan (KRC_BUILD_TARGETS: only those) and runs ctest there.
sanitized() {
  # The bindings join the sanitized build when the environment exists (the Release suite made
  # it): the extension krc._core is built in build-asan too, and pytest runs against it.
  local venv=${KRC_VENV:-$here/.venv} python=0 with_python=()
  if [ -x "$venv/bin/python" ] && [ "${KRC_PYTHON:-1}" = 1 ]; then
    python=1
    with_python=(-DKRC_PYTHON=ON "-DPython_EXECUTABLE=$venv/bin/python")
    [ -n "${KRC_BUILD_TARGETS:-}" ] && KRC_BUILD_TARGETS="$KRC_BUILD_TARGETS _core"
  fi
  # The libraries as a unity build, like the Release build (tools/setup.sh says why; the test
  # programs stay out). Two library sources of one batch may not define the same name in an
  # anonymous namespace; the build names it.
  KRC_PYTHON=0 tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DKRC_SANITIZE=ON \
    "${with_python[@]}"
  local reports="$here/build-asan/sanitizer"
  rm -rf "$reports" && mkdir -p "$reports"
  # A distinct exit status, so that a test expecting krc's 1 or 2 cannot take a report for it.
  export ASAN_OPTIONS="log_path=$reports/asan:exitcode=23:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:exitcode=23:print_stacktrace=1:${UBSAN_OPTIONS:-}"
  # Graphviz's and its font stack's own caches, never krc's memory (tests/lsan_graphviz.supp).
  export LSAN_OPTIONS="suppressions=$here/tests/lsan_graphviz.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
  local status=0
  echo "test.sh: the sanitized build is ready, ${SECONDS} s in"
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@" || status=$?
  echo "test.sh: the sanitized ctest ended (status $status), ${SECONDS} s in"
  if [ "$python" = 1 ]; then sanitized_python || status=$?; fi
  echo "test.sh: the sanitized run ended, ${SECONDS} s in"
  if compgen -G "$reports/*" >/dev/null; then
    echo "test.sh: sanitizer reports in $reports:" >&2
    cat "$reports"/* >&2
    status=1
  fi
  return "$status"
}

# sanitized_python: tests/python against build-asan's krc._core and krc, in the venv's interpreter
# with ASan's runtime preloaded (it must come first; CPython's own allocations are not leaks), and
# libstdc++ with it: loaded later, ASan could not find the __cxa_throw it intercepts and aborts
# at the first C++ exception.
# The package's Python files are linked beside the sanitized extension, ahead of the installed
# package on PYTHONPATH. Reports land in the same directory as ctest's. By default the bindings'
# own tests (test_api_*.py: every function and class of krc._core, about 3 minutes under ASan);
# KRC_SANITIZED_PYTEST=. runs every Python test, the framework ones through the sanitized krc too.
sanitized_python() {
  local venv=${KRC_VENV:-$here/.venv} package="$here/build-asan/python/krc"
  # Left out by default: three sweeps that take 5 of the 9 minutes under ASan and call the same
  # bindings as the tests kept (50 random regexes, every option combination in both doors, the
  # wrong-argument fuzz through the framework helpers); KRC_SANITIZED_SKIP="" keeps them.
  local skip=${KRC_SANITIZED_SKIP-"not fifty_random_regexes and not every_combination_gives and not (refused_by_name and frameworks)"}
  mkdir -p "$package"
  local f
  for f in tools/python/krc/*; do ln -sf "$here/$f" "$package/"; done
  (cd tests/python &&
    LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libstdc++.so)" \
      ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
      PYTHONPATH="$here/build-asan/python" KRC_BINARY="$here/build-asan/krc" \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider -k "$skip" ${KRC_SANITIZED_PYTEST:-test_api_*.py})
}

# The lane needs krc and the test programs it labels (not the PyTorch and heavy ones).
# free_disk STAGE: the free space before a stage, so that a run that dies of a full disk says so.
# Each stage's start is timed too (seconds since the run began), so that a run that passes the
# CI's time limit shows which stage took the time.
free_disk() {
  echo "test.sh: $(df -h --output=avail . | tail -1 | tr -d ' ') free on disk before $1, ${SECONDS} s in"
}

lane_targets="krc test_automata test_frontend test_runtime test_tools test_decompose test_backend"
case "${1:-}" in
  "")
    free_disk "the Release suite"
    release
    free_disk "the sanitized lane"
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
