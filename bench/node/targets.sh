#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The open issues' node targets in one run on the lent 16-core machine (no compiler there, no
# network). On the node of 2026-11-30 the parts took: threads 14 s, mpi 47 s, persistent
# 19 s, export 16 s, planning 63 s, model 55 s (tuned: 50 s more); the machine's start
# about 40 s more.
#
# What the run needs, prepared on the build machine (as for run.sh): .node/ at the repository
# root, filled by the device tooling's packing script with build/release/cli/optcoll,
# bench/bench_threads_vs_mpi, bench/bench_mpi_call, bench/bench_nonblocking,
# bench/bench_pmpi_persistent, pmpi/liboptcoll_pmpi.so and osu_collectives (compiled here from
# bench/export/osu_collectives.c with mpicc -O2). Then, on the lent machine:
#   bash .node/node.sh bash bench/node/targets.sh          (results: $OUT/targets.tgz)
# NODE_PARTS picks the parts (default: all but tuned); tuned needs .node/prev/model_thr.json
# and .node/prev/table_thr.json from an earlier run's model part.
#
# Parts (each step under `timeout`):
#   threads (issue 29): bench_threads_vs_mpi at p = 16, twice.
#   mpi (issue 29): optcoll bench (the MPI backend against Open MPI, 8 B .. 2 MiB, seven
#     collectives, auto under the one-node default, and again under the model calibrated
#     here); bench_mpi_call (the C API, the planned Communicator and MPI per call).
#   persistent (issue 32): bench_nonblocking and the PMPI library's persistent gatherv at
#     p = 8 (one rank per core), twice each.
#   export (issue 32): Open MPI with the rules file optcoll export writes from the model
#     calibrated here against Open MPI's defaults (bench/export/compare.sh's method, p = 16,
#     3 rounds).
#   library (issue 32, not in the default parts; not yet run on a node): Open MPI's own
#     algorithms timed at p = 16, each forced in turn (bench/export/measure_library.py, 2
#     rounds, needs python3 there), the rules file optcoll export writes from those times,
#     and that file against Open MPI's defaults as in part export.
#   planning: optcoll plan at p = 512 under the thread default, 1 and 16 planning workers.
#   model: calibrate and one tune run per backend (model error, model-only regret).
#   tuned: bench_threads_vs_mpi with "auto" under the earlier run's model and tuning table
#     too, and a second tune run on threads with that table (tuned regret).
set -u
name=targets
source "$(dirname "$0")/steps.sh"
bin=$(dirname "$(command -v optcoll)")
prev=$bin/../prev
parts=${NODE_PARTS:-threads mpi persistent export planning model}
grid=(--min-bytes 8 --max-bytes 8M --factor 8 --rounds 3)  # 8 B, 64 B, ..., 2 MiB, 8 MiB
{ nproc; lscpu | head -20; mpirun --version | head -1; } > "$res/machine.txt" 2>&1

calibrate_mpi() {
  [[ -s $res/model_mpi.json ]] ||
    step calibrate_mpi 60 mpirun -np $p optcoll calibrate --backend mpi --out "$res/model_mpi.json"
}
mpi_bench() {  # mpi_bench NAME [--model FILE]
  local step_name=$1
  shift
  step "$step_name" 110 mpirun -np $p optcoll bench --collectives \
    allreduce,bcast,allgather,reduce_scatter_block,gatherv,scatterv,alltoall \
    --min-bytes 8 --max-bytes 2M --factor 8 --rounds 3 --format csv "$@"
}

osu_against_defaults() {  # osu_against_defaults SUFFIX RULES: 3 alternating rounds
  local round
  for round in 1 2 3; do
    step "osu_defaults$1_$round" 20 mpirun -np $p osu_collectives 1048576
    step "osu_file$1_$round" 20 mpirun -np $p --mca coll_tuned_use_dynamic_rules 1 \
      --mca coll_tuned_dynamic_rules_filename "$2" osu_collectives 1048576
  done
}

part_threads() {
  for round in 1 2; do
    step "threads_vs_mpi_$round" 45 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
  done
}
part_mpi() {
  mpi_bench mpi_bench
  step mpi_call 25 mpirun -np $p bench_mpi_call 5000 9
  calibrate_mpi
  mpi_bench mpi_bench_calibrated --model "$res/model_mpi.json"
}
part_persistent() {
  for round in 1 2; do
    step "nonblocking_8_$round" 30 mpirun -np 8 bench_nonblocking 11 50
    step "pmpi_persistent_8_$round" 25 mpirun -np 8 -x LD_PRELOAD="$bin/liboptcoll_pmpi.so" \
      -x OPTCOLL_PMPI=auto bench_pmpi_persistent 11 200
  done
}
part_export() {
  calibrate_mpi
  step export 10 optcoll export --format ompi-rules -p $p --collectives \
    allreduce,bcast,reduce,allgather,alltoall,reduce_scatter_block --min-bytes 8 \
    --max-bytes 1M --factor 4 --model "$res/model_mpi.json" --out "$res/rules.conf" \
    --report "$res/choices.md"
  osu_against_defaults "" "$res/rules.conf"
}
part_library() {
  step measure_library 300 python3 "$(dirname "$0")/../export/measure_library.py" \
    "$(command -v optcoll)" $p 1048576 "$res/library_timings.json" --rounds 2 \
    --osu "$(command -v osu_collectives)"
  step export_timed 10 optcoll export --format ompi-rules -p $p --collectives \
    allreduce,bcast,reduce,allgather,alltoall,reduce_scatter_block \
    --library-timings "$res/library_timings.json" --out "$res/rules_timed.conf" \
    --report "$res/choices_timed.md"
  osu_against_defaults _timed "$res/rules_timed.conf"
}
part_planning() {
  echo '{"base": "threads", "cores": 16}' > "$res/threads16.json"
  for collective in alltoall reduce_scatter_block; do
    for workers in 1 16; do
      step "plan_${collective}_w$workers" 30 /usr/bin/time -f "%e s %M KiB" optcoll plan \
        $collective -p 512 --count 1024 --dtype double --model "$res/threads16.json" \
        --planning-workers $workers
    done
  done
}
part_model() {
  calibrate_mpi
  step tune_mpi 45 mpirun -np $p optcoll tune --backend mpi --model "$res/model_mpi.json" \
    --min-bytes 8 --max-bytes 1M --factor 32 --rounds 3 --budget 30 --out "$res/table_mpi.json" \
    --report "$res/tune_mpi.md"
  step calibrate_threads 70 optcoll calibrate --backend threads -p $p --out "$res/model_thr.json"
  step tune_threads 80 optcoll tune --backend threads -p $p --model "$res/model_thr.json" \
    "${grid[@]}" --budget 60 --out "$res/table_thr.json" --report "$res/tune_thr.md"
}
part_tuned() {
  step threads_vs_mpi_tuned 60 mpirun -np $p --bind-to none bench_threads_vs_mpi 10 8388608 \
    "$prev/model_thr.json" "$prev/table_thr.json"
  step tune_threads_tuned 80 optcoll tune --backend threads -p $p --model "$prev/model_thr.json" \
    "${grid[@]}" --budget 60 --tuning "$prev/table_thr.json" --out "$res/table_thr2.json" \
    --report "$res/tune_thr2.md"
}

for part in $parts; do "part_$part"; done
cat "$res/steps.txt"
