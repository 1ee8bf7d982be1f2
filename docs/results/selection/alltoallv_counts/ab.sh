#!/usr/bin/env bash
# One-rank alltoallv plans at p = 4,096, two builds interleaved (docs/results/selection/
# one_rank.table, the alltoallv rows): OLD and NEW are build trees (build/release of each
# commit). Three rounds; each line: round, build, row, rank, then /usr/bin/time's
# "elapsed user system maxrss-KB".
#   docs/results/selection/alltoallv_counts/ab.sh OLD_TREE NEW_TREE > runs.txt
set -u
OLD=$1
NEW=$2
PC="--placement 64x64 --inter-alpha 2e-6 --inter-beta 1e-10 --alpha 5e-7 --beta 2e-11 --per-byte --dist random --block-size 16"
t() { /usr/bin/time -f "%e %U %S %M" "$@" 2>&1 >/dev/null | tail -1; }
for round in 1 2 3; do
  for b in old new; do
    B=$OLD
    [ "$b" = new ] && B=$NEW
    for r in 0 4095; do
      # shellcheck disable=SC2086
      echo "round$round $b count rank$r $(t "$B"/cli/optcoll plan alltoallv -p 4096 --count 1024 --rank $r)"
      # shellcheck disable=SC2086
      echo "round$round $b placement rank$r $(t "$B"/cli/optcoll plan alltoallv -p 4096 $PC --rank $r)"
    done
  done
done
