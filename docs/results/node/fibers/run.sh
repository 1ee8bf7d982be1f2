#!/usr/bin/env bash
# The sixteenth part's measurements (docs/performance.md, "Thread backend"): bench_call with the two ways of
# running ranks interleaved, then bench_threads_vs_mpi at p = 8 and 16, three runs each,
# alternating; median.py reduces the tables. Run from this directory after a release build.
set -euo pipefail
bin=../../../../build/release/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$bin"/bench_call --benchmark_filter='p:(8|16)' --benchmark_repetitions=11 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true > bench_call.txt
for r in 1 2 3; do
  for p in 8 16; do mpirun -np "$p" "$bin"/bench_threads_vs_mpi 50 > "tvm_p${p}_run$r.txt"; done
done
python3 median.py 8 16 > medians.txt
