#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the README's LD_PRELOAD command as written, from a directory laid out as the README
# assumes (the repository root after its build: build/release is this build tree), with ./app
# the plain MPI program tests/pmpi/unaware_app.c, and checks that the library was really
# preloaded on every rank (the dynamic loader only warns about a path it cannot find, and the
# program then runs without optcoll): each rank writes its call log.
# Usage: readme_command.sh README BUILD_DIR APP WORKDIR
set -euo pipefail
readme=$1 build=$2 app=$3 work=$4
line=$(grep -E '^mpirun .*LD_PRELOAD=' "$readme") || { echo "no LD_PRELOAD command in $readme"; exit 1; }
[[ $(wc -l <<<"$line") == 1 ]] || { echo "more than one LD_PRELOAD command in $readme"; exit 1; }
echo "README: $line"
rm -rf "$work" && mkdir -p "$work/build"
ln -s "$build" "$work/build/release"
ln -s "$app" "$work/app"
np=$(sed -E 's/.*-np ([0-9]+).*/\1/' <<<"$line")
cd "$work"
out=$(OPTCOLL_PMPI_LOG="$work/calls" bash -c "$line" 2>&1)
echo "$out"
! grep -q "cannot be preloaded" <<<"$out" || { echo "the library was not preloaded"; exit 1; }
grep -q "all results correct" <<<"$out" || { echo "the program did not run correctly"; exit 1; }
for ((r = 0; r < np; ++r)); do
  test -s "$work/calls.$r" || { echo "rank $r wrote no call log: the library was not preloaded"; exit 1; }
done
echo "readme command: ok ($np ranks preloaded)"
