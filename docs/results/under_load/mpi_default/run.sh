#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The MPI backend against Open MPI at p = 2 beside two busy loops and idle (issue 29: under
# load never more than 1.5x Open MPI): optcoll bench with the backend's default model (one
# node here) and with the reference cluster (the default before), interleaved, REPS runs of
# each, every run's Markdown in OUT; then median.py prints the table.
#
#   docs/results/under_load/mpi_default/run.sh build/release/cli/optcoll docs/results/under_load/mpi_default 3
set -euo pipefail
optcoll=$1 out=$2 reps=${3:-3}
mkdir -p "$out"
echo '{"base": "reference"}' > "$out/ref.json"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for load in busy idle; do
  pids=()
  if [[ $load == busy ]]; then
    sh -c 'while :; do :; done' & pids+=($!)
    sh -c 'while :; do :; done' & pids+=($!)
    sleep 0.5
  fi
  for ((rep = 1; rep <= reps; ++rep)); do
    for model in default reference; do
      args=()
      [[ $model == reference ]] && args=(--model "$out/ref.json")
      timeout 300 mpirun --oversubscribe -np 2 "$optcoll" bench "${args[@]}" \
        --collectives allreduce,bcast,reduce,allgather --min-bytes 8 --max-bytes 512K \
        --rounds 3 > "$out/$load-$model-$rep.md" 2> /dev/null
    done
  done
  for pid in "${pids[@]}"; do kill "$pid"; done
done
python3 "$(dirname "$0")/median.py" "$out"
