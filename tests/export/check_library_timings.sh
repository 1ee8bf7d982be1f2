#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Library timings end to end: bench/export/measure_library.py times Open MPI's own allreduce
# and bcast algorithms at p ranks (each forced in turn, one round, up to 4 KiB), optcoll
# export writes rules from those times, and the rules file, read the way Open MPI 4.x's
# coll/tuned reads it, must name at every measured size of 32 B or more (where every one of
# these algorithms runs as named at a power of two: the ring needs p elements) the algorithm
# with the least measured time, or 0 (Open MPI's own decision, timed too) where that is
# within 10% of the least, recomputed here from the timings file.
#
# usage: check_library_timings.sh OPTCOLL MEASURE_LIBRARY_PY MPIEXEC P WORKDIR
set -euo pipefail
optcoll=$1 measure=$2 mpiexec=$3 p=$4 work=$5
if ! "$mpiexec" --version 2>&1 | grep -qiE "open ?mpi|openrte|open-mpi"; then
  echo "SKIP: $mpiexec is not Open MPI's"
  exit 77
fi
mkdir -p "$work"
python3 "$measure" "$optcoll" "$p" 4096 "$work/timings.json" --rounds 1 \
  --collectives allreduce,bcast --mpirun "$mpiexec" >"$work/measure.log"
"$optcoll" export --format ompi-rules -p "$p" --library-timings "$work/timings.json" \
  --collectives allreduce,bcast --out "$work/rules.conf" >"$work/report.md"
python3 - "$work/timings.json" "$work/rules.conf" "$p" <<'PY'
import json, sys
timings, rules_file, p = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
numbers = [int(v) for line in open(rules_file) for v in line.split("#")[0].split()]
rules, i = {}, 1  # coll/tuned id -> [(key, algorithm)] of the size entry Open MPI uses
for _ in range(numbers[0]):
    coll, nsizes = numbers[i], numbers[i + 1]
    i += 2
    for s in range(nsizes):
        size, nmsg = numbers[i], numbers[i + 1]
        i += 2
        msgs = [(numbers[i + 4 * m], numbers[i + 4 * m + 1]) for m in range(nmsg)]
        i += 4 * nmsg
        if s == 0 or size <= p:
            rules[coll] = msgs
ids = {"allreduce": 2, "bcast": 7}
failures = checked = 0
for point in timings["points"]:
    if point["bytes"] < 32:
        continue
    best = min(point["runs"], key=lambda r: r["seconds"])
    default = next(r for r in point["runs"] if r["id"] == 0)  # Open MPI's own decision
    if default["seconds"] <= best["seconds"] * 1.1:  # the export's default margin
        best = default
    named = [alg for key, alg in rules[ids[point["collective"]]] if key <= point["bytes"]][-1]
    checked += 1
    if named != best["id"]:
        failures += 1
        print(f"FAIL: {point['collective']} of {point['bytes']} B: the file names algorithm "
              f"{named}, the fastest measured is {best['algorithm']} ({best['id']})")
print(f"{checked} sizes checked, {failures} wrong")
sys.exit(1 if failures or checked == 0 else 0)
PY
