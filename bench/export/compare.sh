#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Open MPI with the rules file optcoll export writes against Open MPI's own (fixed)
# decisions, on the OSU-style grid of osu_collectives.c: runs alternate (defaults, file,
# defaults, file, ...), ROUNDS of each; per collective and size the medians and their
# ratio (file / defaults: below 1 the file is faster). Prints a Markdown table.
#
# usage: compare.sh OPTCOLL P ROUNDS MAX_BYTES WORKDIR [MODEL_OPTIONS...]
#   e.g. bench/export/compare.sh build/release/cli/optcoll 4 5 1M /tmp/cmp --model model.json
set -euo pipefail
optcoll=$1 p=$2 rounds=$3 max=$4 work=$5
shift 5
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
mpicc -O2 -o "$work/osu_collectives" "$here/osu_collectives.c"
max_bytes=$(numfmt --from=iec "$max")
rules=$work/rules_p$p.conf
"$optcoll" export --format ompi-rules -p "$p" --collectives \
  allreduce,bcast,reduce,allgather,alltoall,reduce_scatter_block \
  --min-bytes 8 --max-bytes "$max" --factor 4 --out "$rules" --report "$work/choices_p$p.md" "$@" \
  >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
: >"$work/runs_p$p.txt"
for ((r = 0; r < rounds; ++r)); do
  mpirun -np "$p" "$work/osu_collectives" "$max_bytes" | sed 's/^/defaults /' >>"$work/runs_p$p.txt"
  mpirun -np "$p" --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_dynamic_rules_filename "$rules" "$work/osu_collectives" "$max_bytes" |
    sed 's/^/file /' >>"$work/runs_p$p.txt"
done
python3 - "$work/runs_p$p.txt" "$p" "$rules" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, coll, size, us = line.split()
    runs[(coll, int(size), who)].append(float(us))
print(f"| collective | bytes | Open MPI defaults (us) | with optcoll's file (us) | file / defaults |")
print("|---|---|---|---|---|")
ratios = []
for coll, size in sorted({(c, s) for c, s, _ in runs}, key=lambda k: (k[0], k[1])):
    d = statistics.median(runs[(coll, size, "defaults")])
    f = statistics.median(runs[(coll, size, "file")])
    ratios.append(f / d)
    print(f"| {coll} | {size} | {d:.1f} | {f:.1f} | {f / d:.2f} |")
wins = sum(r < 0.9 for r in ratios); losses = sum(r > 1.1 for r in ratios)
print(f"\np = {sys.argv[2]}: the file is faster by more than 10% in {wins} of {len(ratios)} rows, "
      f"slower by more than 10% in {losses}, within 10% in {len(ratios) - wins - losses}; "
      f"median ratio {statistics.median(ratios):.2f}")
PY
