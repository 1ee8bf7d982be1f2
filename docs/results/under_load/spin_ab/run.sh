#!/usr/bin/env bash
# A/B of the spin budget: old and new binaries interleaved, threads and MPI backends, p = 2, under two busy loops and idle.
# /tmp/optcoll_old and /tmp/optcoll_new: the CLI built before and after the change (summ.py makes summary.txt).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(dirname "$0")
for load in busy idle; do
  pids=()
  if [[ $load == busy ]]; then sh -c 'while :; do :; done' & pids+=($!); sh -c 'while :; do :; done' & pids+=($!); fi
  sleep 0.5
  for rep in 1 2 3 4 5 6 7; do
    for bin in old new; do
      for count in 1 32768; do
        for c in allreduce bcast; do
          t=$(timeout 60 /tmp/optcoll_$bin run $c -p 2 --count $count --iterations 20 --rounds 5 2>/dev/null | grep 'per call' | awk '{v=$1; if ($2=="ns") v=v/1000; if ($2=="ms") v=v*1000; if ($2=="s") v=v*1e6; print v}')
          echo "$load threads $bin $c $((count*8)) $t" >> $out/res.txt
        done
      done
      timeout 300 mpirun --oversubscribe -np 2 /tmp/optcoll_$bin bench --collectives allreduce,bcast --min-bytes 8 --max-bytes 256K --factor 32768 --rounds 3 --format csv > $out/$load-$bin-$rep.csv 2>/dev/null || echo "fail $load $bin $rep"
    done
  done
  for p in "${pids[@]}"; do kill $p; done
done
