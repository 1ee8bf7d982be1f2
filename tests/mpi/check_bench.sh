#!/bin/sh
# Runs `optcoll bench --format csv` (the command line given) and checks its table: exactly
# EXPECTED rows, every one with the same result as the MPI library's collective, and every
# collective of the list present, and (if CHECK_BENCH_COUNTS is set) every gatherv/scatterv
# row labelled with those counts; and that the CSV parses into the header's 9 fields on every
# row (an algorithm such as "compose(reduce/x, bcast/y)" holds a comma and must be quoted).
# Usage: check_bench.sh EXPECTED COLLECTIVES COMMAND...
expected="$1"
collectives="$2"
shift 2
out=$("$@" --format csv) || { echo "check_bench: the bench failed (exit $?)"; exit 1; }
echo "$out"
echo "$out" | python3 -c '
import csv, sys
bad = [row for row in csv.reader(sys.stdin) if len(row) != 9]
sys.exit("check_bench: rows without 9 CSV fields: %s" % bad if bad else 0)' || exit 1
rows=$(echo "$out" | tail -n +2 | grep -c ',yes$')
if [ "$rows" != "$expected" ]; then
  echo "check_bench: $rows rows with the same result as MPI, expected $expected"
  exit 1
fi
for c in $(echo "$collectives" | tr ',' ' '); do
  echo "$out" | grep -q "^$c," || { echo "check_bench: no row for $c"; exit 1; }
done
if [ -n "$CHECK_BENCH_COUNTS" ]; then
  other=$(echo "$out" | grep -E '^(gatherv|scatterv)' | grep -vc ",$CHECK_BENCH_COUNTS,")
  if [ "$other" != "0" ]; then
    echo "check_bench: $other gatherv/scatterv rows not labelled $CHECK_BENCH_COUNTS"
    exit 1
  fi
fi
echo "check_bench: ok ($rows rows)"
