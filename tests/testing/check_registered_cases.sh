#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The per-algorithm ctest tests of a registry-driven binary (tests/CMakeLists.txt,
# BY_ALGORITHM) run it with OPTCOLL_TEST_ALGORITHM set, so that it registers only that
# algorithm's cases (tests/testing/registry_cases.h, registered_cases). Checks, for each
# ALGORITHM given and each BINARY, that the cases its filter selects are the same with and
# without the variable, and that a name outside the registry stops the binary with an error.
# usage: check_registered_cases.sh "ALGORITHM..." BINARY...
set -uo pipefail
unset OPTCOLL_TEST_ALGORITHM
algorithms=$1
shift
list() {  # the full names of the cases a run of the binary would run
  "$@" --gtest_list_tests | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }'
}
failures=0
for binary in "$@"; do
  for algorithm in $algorithms; do
    filter="*/${algorithm//\//_}_p*"
    want=$(list "$binary" --gtest_filter="$filter")
    got=$(OPTCOLL_TEST_ALGORITHM=$algorithm list "$binary" --gtest_filter="$filter")
    if [[ -z $want || $want != "$got" ]]; then
      echo "FAIL: $binary, $algorithm: $(wc -l <<<"$want") cases registered in full," \
        "$(wc -l <<<"$got") with OPTCOLL_TEST_ALGORITHM"
      failures=$((failures + 1))
    else
      echo "ok: $binary, $algorithm: $(wc -l <<<"$got") cases either way"
    fi
  done
  if output=$(OPTCOLL_TEST_ALGORITHM=no/such "$binary" --gtest_list_tests 2>&1) ||
    ! grep -q "OPTCOLL_TEST_ALGORITHM=no/such names no registry algorithm" <<<"$output"; then
    echo "FAIL: $binary with OPTCOLL_TEST_ALGORITHM=no/such did not stop with the error"
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
