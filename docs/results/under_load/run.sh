#!/usr/bin/env bash
# A/B of the MPI transport's wait loop: old and new binaries interleaved, under two busy loops and without.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=/tmp/ab
for load in busy idle; do
  pids=()
  if [[ $load == busy ]]; then sh -c 'while :; do :; done' & pids+=($!); sh -c 'while :; do :; done' & pids+=($!); fi
  sleep 0.5
  for rep in 1 2 3; do
    for bin in old new; do
      timeout 300 mpirun --oversubscribe -np 2 /tmp/optcoll_$bin bench --collectives allreduce,bcast,reduce,allgather --min-bytes 8 --max-bytes 512K --rounds 3 > $out/$load-$bin-$rep.md 2>/dev/null || echo "fail $load $bin $rep"
    done
  done
  for p in "${pids[@]}"; do kill $p; done
done
