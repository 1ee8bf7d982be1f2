#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The regret benchmark (docs/tuning.md, "Regret"): on this machine, at p ranks, on one backend:
#   1. optcoll calibrate: the model;
#   2. optcoll tune (run 1): a tuning table;
#   3. optcoll tune --tuning run 1's table (run 2): at every grid point of the regret grid
#      {allreduce, bcast, allgather, reduce_scatter_block, reduce, alltoall, gatherv spikes,
#      scatterv skewed} x sizes, every algorithm measured again, and the regret of model-only
#      auto and of tuned auto against the best measured in this same run.
# Writes OUT/{model.json,calibrate.txt,table1.json,tune1.md,table2.json,tune2.md,
# regret-regret.svg,regret-model.svg,summary.txt}.
#
#   bench/regret/run.sh build/release/cli/optcoll 2 docs/results/regret/vm2 threads
#   bench/regret/run.sh optcoll 16 /tmp/out mpi --budget 200
# Extra arguments go to both tune runs (--budget, --max-bytes, --collectives, ...).
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 OPTCOLL P OUT [threads|mpi] [tune options...]" >&2
  exit 2
fi
optcoll=$1 p=$2 out=$3 backend=${4:-threads}
shift $(( $# >= 4 ? 4 : 3 ))
mkdir -p "$out"
run() {
  if [[ $backend == mpi ]]; then
    mpirun --oversubscribe -np "$p" "$optcoll" "$@" --backend mpi
  else
    "$optcoll" "$@" --backend threads -p "$p"
  fi
}
run calibrate --out "$out/model.json" > "$out/calibrate.txt"
run tune --model "$out/model.json" --out "$out/table1.json" --report "$out/tune1.md" "$@" \
  > /dev/null 2>&1
run tune --model "$out/model.json" --tuning "$out/table1.json" --out "$out/table2.json" \
  --report "$out/tune2.md" --svg "$out/regret" "$@" 2> /dev/null | tee "$out/summary.txt"
