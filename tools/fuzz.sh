#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target of tests/fuzz for SECONDS each, two at a time, starting from the
# seed corpus in tests/fuzz/corpus/<target>/ (new inputs go to a scratch directory, so the
# repository's corpus only changes by hand). A crash, leak, sanitizer report or timeout fails
# the run and leaves the input as build/fuzz/<target>-crash-* (add it to the corpus once fixed).
# Usage: tools/fuzz.sh BUILD_DIR [SECONDS]   (BUILD_DIR configured with clang -DOPTCOLL_FUZZ=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tools/fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
out=build/fuzz
mkdir -p "$out"
targets=(schedule_text schedule_json model_json cli_problem verifier_mutation)

fuzz_one() {
  local target=$1
  rm -rf "${out:?}/$target" && mkdir -p "$out/$target"
  if "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$out/$target-" "$out/$target" \
      "tests/fuzz/corpus/$target" >"$out/$target.log" 2>&1; then
    echo "fuzz_$target: $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$out/$target.log" \
      | grep -Eo '[0-9]+$') runs in $seconds s, no crash"
  else
    echo "fuzz_$target FAILED; log $out/$target.log:"
    grep -E 'ERROR|SUMMARY|Test unit written' "$out/$target.log" || tail -30 "$out/$target.log"
    return 1
  fi
}

status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pids=()
  for target in "${targets[@]:i:2}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
exit $status
