#!/usr/bin/env bash
# Fuzzes krc's readers with clang's libFuzzer under AddressSanitizer and UBSan: builds the
# targets of tests/fuzz in build-fuzz (-DKRC_FUZZ=ON) and runs each for SECONDS seconds, one
# after the other, on its seed corpus (tests/fuzz/seeds/TARGET) and dictionary.
#   tools/fuzz.sh [SECONDS] [TARGET...]     SECONDS default 60; TARGETs: json dot jflap hoa aut ba gff taf fsm vtf etf adl
#                                           sniff weights regex
# The growing corpus stays in build-fuzz/corpus/TARGET, crashes go to build-fuzz/findings/TARGET.
# Prints each target's figures (executions, coverage); exits 1 when a target failed, 2 when no
# clang is installed (Debian: clang-14 libclang-rt-14-dev).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(json dot jflap hoa aut ba gff taf fsm vtf etf adl sniff weights regex)

probe='extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }'
find_clang() {
  clang=""
  for candidate in clang++-14 clang++; do
    command -v "$candidate" >/dev/null && { clang=$candidate; break; }
  done
  [ -n "$clang" ] && echo "$probe" | "$clang" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null
}
# KRC_FUZZ_INSTALL=1 (tools/test.sh, so CI): install Debian's clang-14 and its libFuzzer runtime
# where they are missing, as tools/setup.sh installs the build's packages. A new machine has no
# clang, and the fuzz targets were skipped there without a word beyond this script's log.
if ! find_clang && [ "${KRC_FUZZ_INSTALL:-0}" = 1 ]; then
  echo "fuzz.sh: installing clang-14 libclang-rt-14-dev" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-14 libclang-rt-14-dev; } \
    >/dev/null 2>&1 || true
fi
if ! find_clang; then
  echo "fuzz.sh: no clang++ with libFuzzer (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
# The weights target links the runtime, whose fp16 arithmetic needs _Float16 (clang 15 on
# x86-64): with an older clang it is left out of the default list, and said so.
if ! echo '_Float16 h = 1; int main() { return static_cast<int>(h) - 1; }' |
  "$clang" -x c++ - -o /dev/null 2>/dev/null; then
  if (($#)); then
    for t in "${targets[@]}"; do
      [ "$t" != weights ] || { echo "fuzz.sh: $clang has no _Float16; weights needs clang 15+" >&2; exit 1; }
    done
  else
    echo "fuzz.sh: weights skipped: $clang has no _Float16 (the runtime's fp16 needs clang 15+)" >&2
    targets=("${targets[@]/weights/}")
    read -r -a targets <<<"${targets[*]}"
  fi
fi
build="$here/build-fuzz"
cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKRC_FUZZ=ON >/dev/null
# A failed build is a failure (1), not "no clang" (2), which tools/test.sh lets pass.
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null || {
  echo "fuzz.sh: building the fuzz targets failed" >&2
  exit 1
}

failed=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target" findings="$build/findings/$target"
  mkdir -p "$corpus" "$findings"
  log="$build/fuzz_$target.log"
  echo "fuzz.sh: $target for ${seconds} s" >&2
  # -rss_limit_mb: krc's own budget in the targets is 256 MiB; anything near 2 GB is a bug.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/fuzz_$target" "$corpus" "$here/tests/fuzz/seeds/$target" \
    -dict="$here/tests/fuzz/dictionaries/$target.dict" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=30 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || echo "cov: ?")
  corpus_size=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 || echo "corp: ?")
  echo "$target: $status, $runs executions, $coverage, $corpus_size (log: $log)"
  [ "$status" = ok ] || tail -40 "$log" >&2
done
exit $failed
