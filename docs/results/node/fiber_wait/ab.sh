#!/usr/bin/env bash
# Two builds of bench_call side by side: ROUNDS rounds, each running OLD then NEW over the
# benchmarks that FILTER selects (0.3 s each); prints the median us per call of each build
# and their ratio. With CPUS set, both run under `taskset -c $CPUS` (CPUS=0: fibers on one
# worker, away from the host's placement of two virtual CPUs). Usage (from the repository
# root, with the old build's bench_call copied aside first):
#   CPUS=0 docs/results/node/fiber_wait/ab.sh /tmp/bench_call_old build/release/bench/bench_call 'fibers:1' 7
set -euo pipefail
old=$1 new=$2 filter=$3 rounds=$4
pin=()
[ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")
samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
for _ in $(seq "$rounds"); do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    "${pin[@]}" "$bin" --benchmark_filter="$filter" --benchmark_min_time=0.3 2>/dev/null |
      awk -v w="$which" '/real_time /{split($NF, a, "="); v = a[2]; sub("[a-z]*$", "", v); print w, $1, v}' >> "$samples"
  done
done
python3 - "$samples" <<'PY'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    which, name, value = line.split()
    times[(name.replace("/real_time", ""), which)].append(float(value))
print("| benchmark | old (us) | new (us) | new / old |")
print("|---|---|---|---|")
for name in sorted({k[0] for k in times}):
    o = statistics.median(times[(name, "old")])
    n = statistics.median(times[(name, "new")])
    print(f"| {name} | {o:.3f} | {n:.3f} | {n / o:.2f} |")
PY
