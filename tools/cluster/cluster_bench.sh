#!/bin/bash
# The emulated-cluster experiment (docs/performance.md, "Emulated clusters"): for each build
# directory given (one built against Open MPI, one against MPICH, say), on an emulated
# cluster of HOSTS hosts with RATE links (emulated_cluster.sh):
#   1. `optcoll calibrate --backend mpi` between hosts 0 and 1   -> OUT/model_<mpi>.json
#   2. `optcoll bench --model` on all hosts, MPI's collectives
#      and optcoll's side by side, with the model's predictions -> OUT/bench_<mpi>.csv
#   3. the summary: optcoll / MPI per collective, model error  -> OUT/summary_<mpi>.md
# A cluster that is up already is used as it is (it needs HOSTS hosts); otherwise one is
# brought up for the run and taken down after.
#
#   tools/cluster/cluster_bench.sh [-n HOSTS] [-r RATE] [-o OUT] [-m MAX_BYTES] [-i ITERATIONS]
#                                  BUILD_DIR...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
hosts=4 rate=100mbit out=cluster_bench max_bytes=1M iterations=10
while getopts "n:r:o:m:i:" flag; do
  case "$flag" in
    n) hosts="$OPTARG" ;;
    r) rate="$OPTARG" ;;
    o) out="$OPTARG" ;;
    m) max_bytes="$OPTARG" ;;
    i) iterations="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || { echo "cluster_bench.sh: give at least one build directory" >&2; exit 2; }
cluster="$here/emulated_cluster.sh"
mkdir -p "$out"
brought_up=no
if [[ "$("$cluster" status)" == "no emulated cluster" ]]; then
  "$cluster" up "$hosts" "$rate"
  brought_up=yes
  trap '"$cluster" down' EXIT
fi
# Runs one MPI job whose rank 0 writes RESULT (complete, by rename); returns once RESULT is
# there and the job has ended, or 60 s after RESULT appeared: Debian's MPICH 4.0.2 over UCX
# (TCP) sometimes never leaves MPI_Finalize (seen for a plain MPI program too: 1 run in 6),
# after the results are written. Such a job is killed with a warning.
run_job() {
  local result="$1" waited=0
  shift
  rm -f "$result"
  "$cluster" run "$@" &
  local job=$!
  while kill -0 "$job" 2> /dev/null; do
    if [[ -e "$result" ]]; then
      ((waited++ < 60)) || {
        echo "cluster_bench.sh: the job wrote $result but did not end in 60 s (MPI_Finalize); killed" >&2
        pkill -P "$job" 2> /dev/null
        kill "$job" 2> /dev/null
        wait "$job" 2> /dev/null || true
        return 0
      }
    fi
    sleep 1
  done
  wait "$job" || [[ -e "$result" ]] || { echo "cluster_bench.sh: the job failed" >&2; return 1; }
}

for build in "$@"; do
  tool="$build/cli/optcoll"
  [[ -x "$tool" ]] || { echo "cluster_bench.sh: no $tool (build it first)" >&2; exit 2; }
  mpi=openmpi
  if ldd "$tool" | grep -q libmpich; then mpi=mpich; fi
  echo "== $build ($mpi): calibrating between two hosts"
  run_job "$out/model_$mpi.json" 2 "$tool" calibrate --backend mpi --out "$out/model_$mpi.json" \
    | tee "$out/calibrate_$mpi.txt"
  echo "== $build ($mpi): bench on $hosts hosts"
  run_job "$out/bench_$mpi.csv" "$hosts" "$tool" bench --model "$out/model_$mpi.json" \
    --format csv --max-bytes "$max_bytes" --iterations "$iterations" --out "$out/bench_$mpi.csv"
  python3 "$here/summarize_bench.py" --title "$mpi, $hosts hosts, $rate links" \
    "$out/bench_$mpi.csv" | tee "$out/summary_$mpi.md"
done
