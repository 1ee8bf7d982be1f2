#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The open issues' node targets in one run on the lent 16-core machine (no compiler there, no
# network): about 4 minutes on the node of 2026-11-27 (the
# step limits add up to 15 minutes; nothing there came near its limit).
#
# What the run needs, prepared on the build machine (as for run.sh): .node/ at the repository
# root, filled by the device tooling's packing script with build/release/cli/optcoll,
# bench/bench_threads_vs_mpi, bench/bench_mpi_call, bench/bench_nonblocking,
# bench/bench_pmpi_persistent, pmpi/liboptcoll_pmpi.so and osu_collectives (compiled here from
# bench/export/osu_collectives.c with mpicc -O2). Then, on the lent machine:
#   bash .node/node.sh bash bench/node/targets.sh          (results: $OUT/targets.tgz)
#
# Steps (each under `timeout`):
#   issue 29: bench_threads_vs_mpi at p = 16 (twice, first and last, so that the two runs
#     bracket the others); optcoll bench (the MPI backend against Open MPI, 8 B .. 2 MiB, seven
#     collectives, auto under the one-node default); bench_mpi_call (the C API, the planned
#     Communicator and MPI per call).
#   issue 32: bench_nonblocking and the PMPI library's persistent gatherv at p = 8 (one rank
#     per core) and 16; Open MPI with the rules file optcoll export writes from the model calibrated
#     here against Open MPI's defaults (bench/export/compare.sh's method, p = 16, 3 rounds).
#   planning: optcoll plan at p = 512 under the thread default, 1 and 16 planning workers.
#   the model at p = 16 (as run.sh, shorter): calibrate and one tune run per backend (model
#     error, model-only regret).
set -u
name=targets
source "$(dirname "$0")/steps.sh"
bin=$(dirname "$(command -v optcoll)")
{ nproc; lscpu | head -20; mpirun --version | head -1; } > "$res/machine.txt" 2>&1
step threads_vs_mpi_1 45 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
step mpi_bench 110 mpirun -np $p optcoll bench --collectives \
  allreduce,bcast,allgather,reduce_scatter_block,gatherv,scatterv,alltoall \
  --min-bytes 8 --max-bytes 2M --factor 8 --rounds 3 --format csv
step mpi_call 25 mpirun -np $p bench_mpi_call 5000 9
for ranks in 8 $p; do
  step "nonblocking_$ranks" 30 mpirun -np $ranks bench_nonblocking 11 50
  step "pmpi_persistent_$ranks" 25 mpirun -np $ranks -x LD_PRELOAD="$bin/liboptcoll_pmpi.so" \
    -x OPTCOLL_PMPI=auto bench_pmpi_persistent 11 200
done
step calibrate_mpi 60 mpirun -np $p optcoll calibrate --backend mpi --out "$res/model_mpi.json"
step export 10 optcoll export --format ompi-rules -p $p --collectives \
  allreduce,bcast,reduce,allgather,alltoall,reduce_scatter_block --min-bytes 8 --max-bytes 1M \
  --factor 4 --model "$res/model_mpi.json" --out "$res/rules.conf" --report "$res/choices.md"
for round in 1 2 3; do
  step "osu_defaults_$round" 20 mpirun -np $p osu_collectives 1048576
  step "osu_file_$round" 20 mpirun -np $p --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_dynamic_rules_filename "$res/rules.conf" osu_collectives 1048576
done
echo '{"base": "threads", "cores": 16}' > "$res/threads16.json"
for collective in alltoall reduce_scatter_block; do
  for workers in 1 16; do
    step "plan_${collective}_w$workers" 30 /usr/bin/time -f "%e s %M KiB" optcoll plan \
      $collective -p 512 --count 1024 --dtype double --model "$res/threads16.json" \
      --planning-workers $workers
  done
done
step tune_mpi 45 mpirun -np $p optcoll tune --backend mpi --model "$res/model_mpi.json" \
  --min-bytes 8 --max-bytes 1M --factor 32 --rounds 3 --budget 30 --out "$res/table_mpi.json" \
  --report "$res/tune_mpi.md"
step calibrate_threads 70 optcoll calibrate --backend threads -p $p --out "$res/model_thr.json"
step tune_threads 80 optcoll tune --backend threads -p $p --model "$res/model_thr.json" \
  --min-bytes 8 --max-bytes 8M --factor 8 --rounds 3 --budget 60 --out "$res/table_thr.json" \
  --report "$res/tune_thr.md"
step threads_vs_mpi_2 45 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
cat "$res/steps.txt"
