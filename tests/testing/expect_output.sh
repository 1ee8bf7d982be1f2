#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command and checks what it did: its exit status and its output (stdout and stderr
# together). Prints the output, then each failed check; exits 0 only when all hold.
# Usage: expect_output.sh --status N [--match ERE]... [--absent ERE]... [--once ERE]...
#                         [--env NAME=VALUE]... -- COMMAND [ARG]...
#   --status N    the command's exit status must be N ("nonzero": anything but 0)
#   --match ERE   some line matches (grep -E)
#   --absent ERE  no line matches
#   --once ERE    exactly one line matches
#   --env N=V     set in the command's environment
set -uo pipefail
status="" matches=() absents=() onces=() envs=()
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --status) status=$2 ;;
    --match) matches+=("$2") ;;
    --absent) absents+=("$2") ;;
    --once) onces+=("$2") ;;
    --env) envs+=("$2") ;;
    *) echo "expect_output: unknown option $1"; exit 2 ;;
  esac
  shift 2
done
shift
[[ -n $status && $# -gt 0 ]] || { echo "expect_output: give --status N and -- COMMAND"; exit 2; }
out=$(env "${envs[@]}" "$@" 2>&1)
got=$?
echo "$out"
echo "--- exit status $got"
failed=0
fail() { echo "expect_output: $1"; failed=1; }
if [[ $status == nonzero ]]; then
  [[ $got != 0 ]] || fail "exit status 0, expected a failure"
else
  [[ $got == "$status" ]] || fail "exit status $got, expected $status"
fi
for re in "${matches[@]}"; do
  grep -Eq -- "$re" <<<"$out" || fail "no line matches: $re"
done
for re in "${absents[@]}"; do
  ! grep -Eq -- "$re" <<<"$out" || fail "a line matches what must be absent: $re"
done
for re in "${onces[@]}"; do
  n=$(grep -Ec -- "$re" <<<"$out")
  [[ $n == 1 ]] || fail "$n lines match, expected exactly one: $re"
done
[[ $failed == 0 ]] && echo "expect_output: ok"
exit $failed
