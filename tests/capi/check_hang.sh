#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hang reports under a real mpirun (optcoll/api/hang_report.h): rank 2 of 4 holds up the
# third allreduce of stall_app (MODE skip: never calls it; late: calls it 3 s late, past the
# others' 1 s timeout). The ranks whose call failed write their reports on stderr, and
# `optcoll diagnose` on that stderr must name rank 2 as EXPECTED says.
#
# usage: check_hang.sh MPIEXEC STALL_APP OPTCOLL MODE EXPECTED WORKDIR
set -euo pipefail
mpiexec=$1 app=$2 optcoll=$3 mode=$4 expected=$5 work=$6
mkdir -p "$work"
err=$work/stderr_$mode.txt
timeout 120 "$mpiexec" -np 4 -x OPTCOLL_TIMEOUT_MS=1000 "$app" "$mode" 2 3 \
  >"$work/stdout_$mode.txt" 2>"$err" || true
cat "$work/stdout_$mode.txt"
reports=$(grep -c "optcoll-hang:" "$err" || true)
echo "$reports hang reports on stderr"
diagnosis=$("$optcoll" diagnose "$err")
echo "$diagnosis"
if ! grep -qF "$expected" <<<"$diagnosis"; then
  echo "FAIL: the diagnosis does not say: $expected"
  exit 1
fi
echo "diagnosis ok"
