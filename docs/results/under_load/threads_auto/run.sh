#!/usr/bin/env bash
# The thread backend beside two busy loops on the 2-core VM: bench_threads_vs_mpi at p = 2
# without binding (so the world may use both CPUs), three runs under load and one idle.
# Columns: threads, fibers and auto (as the world chose at the start of its run) against
# Open MPI in the same run. Run from the repository root after the build.
set -euo pipefail
out=docs/results/under_load/threads_auto
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bench() { mpirun -np 2 --bind-to none build/release/bench/bench_threads_vs_mpi 20 2097152; }
sh -c 'while :; do :; done' & a=$!
sh -c 'while :; do :; done' & b=$!
trap 'kill $a $b 2>/dev/null || true' EXIT
sleep 1
for r in 1 2 3; do bench > "$out/loaded_run$r.txt"; done
kill $a $b
sleep 2
bench > "$out/idle.txt"
