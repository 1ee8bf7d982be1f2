#!/bin/bash
# A/B of two cost models on the same binary: 11 rounds, the two models' runs alternating in
# order (nogap first in odd rounds, gap first in even ones), CSVs into OUT.
#   ab.sh OUT NP NOGAP_MODEL GAP_MODEL [optcoll bench options...]
#   ab.sh ab_p4 4 ../send_gap/cal4gap.json cal4gaps.json \
#       --collectives gatherv allgather alltoall reduce reduce_scatter_block allreduce bcast scatterv --max-bytes 32K --iterations 1000
# then: python3 abtab.py OUT (medians per row, the algorithm each model chose, ratio).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=/work/main/build/release/cli/optcoll
R=/work/main/docs/results/node
out=$1; np=$2; nogap=$3; gap=$4; shift 4
mkdir -p $out
for i in $(seq 1 11); do
  order="nogap gap"; [ $((i % 2)) = 0 ] && order="gap nogap"
  for v in $order; do
    m=$nogap; [ $v = gap ] && m=$gap
    mpirun -np $np --bind-to none $B bench --model $m "$@" --format csv > $out/${v}_$i.csv 2>$out/${v}_$i.err
  done
done
