#!/bin/bash
# Interleaved rounds of `optcoll bench` jobs on an emulated cluster that is up
# (emulated_cluster.sh up), for comparisons on a noisy machine: each round runs one job per
# CONFIG in turn, so that a slow spell falls on all of them; summarize the rounds' medians
# with docs/results/cluster_nodes/irregular/summarize.py. A CONFIG is
#   tuned            optcoll's auto beside Open MPI's coll/tuned
#   han              optcoll's auto beside coll/han (OMPI_MCA_coll_han_priority=100)
#   ALGORITHM        that registry algorithm forced for every collective of -c (beside tuned)
# A job is repeated (up to 5 times) when it failed, when it was paused (mpirun forwards
# SIGCONT: "Forwarding signal 18"), or when in more than a tenth of 0.1 s samples another
# program was runnable; a job starts only after 3 s in which none was.
#
#   tools/cluster/interleaved_bench.sh [-n ROUNDS] [-p PER_HOST] [-r RANKS] [-c COLLECTIVES]
#       [-m MODEL] [-o OUT] BUILD_DIR CONFIG... -- BENCH_OPTIONS...
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds=5 per_host=4 ranks=16 collectives=gatherv,scatterv model="" out=interleaved
while getopts "n:p:r:c:m:o:" flag; do
  case "$flag" in
    n) rounds="$OPTARG" ;;
    p) per_host="$OPTARG" ;;
    r) ranks="$OPTARG" ;;
    c) collectives="$OPTARG" ;;
    m) model="$(realpath "$OPTARG")" ;;
    o) out="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 2 ]] || { echo "interleaved_bench.sh: give a build directory and at least one CONFIG" >&2; exit 2; }
tool="$(realpath "$1")/cli/optcoll"
shift
[[ -x "$tool" ]] || { echo "interleaved_bench.sh: no $tool (build it first)" >&2; exit 2; }
configs=()
while [[ $# -gt 0 && "$1" != -- ]]; do configs+=("$1"); shift; done
[[ "${1:-}" == -- ]] && shift
mkdir -p "$out"
out="$(realpath "$out")"
pgid=$(ps -o pgid= -p $$ | tr -d ' ')

# Runnable processes that are neither this script's nor the benchmark's.
foreign() {
  ps -eo stat=,pgid=,comm= | awk -v pg="$pgid" \
    '$1 ~ /^R/ && $2 != pg && $3 !~ /^(optcoll|mpirun|orted|prted)/ {n++} END {print n+0}'
}
wait_quiet() {
  local quiet=0
  while ((quiet < 15)); do
    if (($(foreign) == 0)); then quiet=$((quiet + 1)); else quiet=0; fi
    sleep 0.2
  done
}

for ((r = 1; r <= rounds; ++r)); do
  for config in "${configs[@]}"; do
    options=() envs=()
    case "$config" in
      tuned) ;;
      han) envs=(OMPI_MCA_coll_han_priority=100) ;;
      *) for c in ${collectives//,/ }; do options+=(--algorithm "$c=$config"); done ;;
    esac
    [[ -n "$model" ]] && options+=(--model "$model")
    for _ in 1 2 3 4 5; do
      csv="$out/${config}_r$r.csv" log="$out/${config}_r$r.log"
      wait_quiet
      (samples=0 busy=0
        while [[ ! -e "$out/.stop" ]]; do
          samples=$((samples + 1))
          (($(foreign) > 0)) && busy=$((busy + 1))
          echo "$samples $busy" > "$out/.samples"
          sleep 0.1
        done) &
      sampler=$!
      env "${envs[@]}" "$here/emulated_cluster.sh" run --per-host "$per_host" "$ranks" "$tool" bench \
        --collectives "$collectives" --format csv --out "$csv" "${options[@]}" "$@" > "$log" 2>&1
      rc=$?
      touch "$out/.stop"
      wait "$sampler"
      rm -f "$out/.stop"
      read -r samples busy < "$out/.samples"
      if [[ $rc -eq 0 ]] && ! grep -q "Forwarding signal" "$log" && ((busy * 10 <= samples)); then
        echo "round $r $config: done (others runnable in $busy of $samples samples)"
        break
      fi
      echo "round $r $config: repeated (exit $rc, others runnable in $busy of $samples samples)"
      rm -f "$csv"
    done
  done
done
