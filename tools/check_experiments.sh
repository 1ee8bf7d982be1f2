#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest experiments_reduced: runs every experiment of optcoll/experiments/experiments.def at
# its reduced size (`optcoll experiment all --quick`) into a temporary folder and compares
# the tables, CSV and SVG files with the checked-in docs/results/reduced/ byte for byte. So a
# change to any experiment's numbers or charts fails until the reduced outputs are
# regenerated with the command printed below (docs/experiments.md, Regenerating).
# Usage: tools/check_experiments.sh PATH/TO/optcoll
set -euo pipefail
cli=$(realpath "${1:?usage: tools/check_experiments.sh PATH/TO/optcoll}")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$cli" experiment all --quick --out "$tmp/reduced" >"$tmp/stdout" 2>"$tmp/stderr"; then
  cat "$tmp/stdout" "$tmp/stderr"
  echo "experiments_reduced: 'optcoll experiment all --quick' failed"
  exit 1
fi
if ! diff -ru docs/results/reduced "$tmp/reduced" >"$tmp/diff"; then
  head -n 150 "$tmp/diff"
  echo "experiments_reduced: the reduced outputs differ from docs/results/reduced/" \
    "($(grep -c '^diff\|^Only in' "$tmp/diff") file(s); the first 150 lines of the diff above)."
  echo "If the change is intended, regenerate them and commit the result:"
  echo "  rm -rf docs/results/reduced && build/cli/optcoll experiment all --quick --out docs/results/reduced"
  exit 1
fi
echo "experiments_reduced: every experiment's reduced output equals docs/results/reduced/"
