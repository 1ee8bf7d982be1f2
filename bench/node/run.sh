#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The node check of the model issue, in one run on a lent 16-core machine (no compiler there,
# and no network): the whole run takes about 3 minutes (445 s of step limits).
#
# What the run needs, prepared on the build machine first (figures in docs/performance.md,
# "16-core node"): a git-ignored folder .node/ at the repository root holding
#   - bin/: the binaries built here, build/release/cli/optcoll and
#     build/release/bench/bench_threads_vs_mpi (the lent machine cannot build them);
#   - the Debian packages of Open MPI and the runtime libraries the binaries need;
#   - node.sh, a wrapper that unpacks those packages beside the system's own (touching
#     nothing installed there), puts .node/bin on PATH, allows mpirun as root, and then runs
#     the command it is given.
# The project's device tooling provides a packing script that fills .node/ this way.
# Then, on the lent machine: command "bash .node/node.sh bash bench/node/run.sh", carrying
# .node along, with a 300 s time limit. Results: $OUT/results.tgz (tarred again after every
# step, so a step that runs out of time leaves the earlier ones).
#
# Steps (each under `timeout`):
#   1. calibrate --backend threads -p 16                     (target: under 60 s)
#   2. the regret benchmark on threads at p = 16: tune run 1, then run 2 with run 1's table
#   3. bench_threads_vs_mpi 16 (optcoll threads and fibers beside Open MPI)
#   4. calibrate --backend mpi and tune under mpirun -np 16 (model error and model-only regret)
set -u
name=results
source "$(dirname "$0")/steps.sh"
{ nproc; lscpu | head -20; mpirun --version | head -1; } > "$res/machine.txt" 2>&1
grid=(--min-bytes 8 --max-bytes 8M --factor 8 --rounds 3)  # 8 B, 64 B, ..., 2 MiB, 8 MiB
step calibrate_threads 70 optcoll calibrate --backend threads -p $p --out "$res/model_thr.json"
step tune_threads_1 100 optcoll tune --backend threads -p $p --model "$res/model_thr.json" \
  "${grid[@]}" --budget 80 --out "$res/table_thr1.json" --report "$res/tune_thr1.md"
step tune_threads_2 110 optcoll tune --backend threads -p $p --model "$res/model_thr.json" \
  "${grid[@]}" --budget 90 --tuning "$res/table_thr1.json" --out "$res/table_thr2.json" \
  --report "$res/tune_thr2.md" --svg "$res/regret_thr"
step threads_vs_mpi 50 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
step calibrate_mpi 45 mpirun -np $p optcoll calibrate --backend mpi --out "$res/model_mpi.json"
# 8 MiB per rank over MPI takes minutes at p = 16 (an allgather of 8 MiB: 60 ms a call).
step tune_mpi 70 mpirun -np $p optcoll tune --backend mpi --model "$res/model_mpi.json" \
  --min-bytes 8 --max-bytes 1M --factor 32 --rounds 3 --budget 45 --out "$res/table_mpi.json" \
  --report "$res/tune_mpi.md"
cat "$res/steps.txt"
