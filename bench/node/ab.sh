#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An old/new comparison on the lent 16-core machine, in one run: the binaries of two builds
# interleaved, two rounds each, so that both see the same machine. .node/bin must hold the
# new build's optcoll and bench_threads_vs_mpi (as for run.sh) and the old build's beside
# them as optcoll_old and bench_threads_vs_mpi_old.
#   bash .node/node.sh bash bench/node/ab.sh        (results: $OUT/ab.tgz)
# Steps, each under `timeout`:
#   - bench_threads_vs_mpi 10 (threads, fibers and Open MPI at p = 16, 8 B .. 2 MiB)
#   - mpirun -np 16 optcoll bench (the MPI backend against Open MPI, 8 B .. 32 KiB)
set -u
name=ab
source "$(dirname "$0")/steps.sh"
for round in 1 2; do
  for build in old new; do
    suffix=$([[ $build == old ]] && echo _old || echo)
    step "threads_vs_mpi_${build}_$round" 30 mpirun -np $p --bind-to none \
      "bench_threads_vs_mpi$suffix" 10
    step "mpi_bench_${build}_$round" 20 mpirun -np $p "optcoll$suffix" bench \
      --collectives allreduce,bcast,allgather,reduce_scatter_block,gatherv --min-bytes 8 \
      --max-bytes 32K --rounds 3 --format csv
  done
done
cat "$res/steps.txt"
