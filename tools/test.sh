#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test. Pass --sanitize for the Debug build with
# AddressSanitizer and UndefinedBehaviorSanitizer (build directory build-asan).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
if [ "${1:-}" = "--sanitize" ]; then
  tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DKRC_SANITIZE=ON
  build=build-asan
else
  tools/setup.sh build
  build=build
fi
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
