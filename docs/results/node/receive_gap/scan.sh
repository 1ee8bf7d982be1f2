# bash scan.sh: algorithm and predicted time under send_gap/cal4gap.json (send gap 153 ns) ->
# cal4gaps.json (the same, and a receive gap of 153 ns, as `optcoll calibrate` now writes
# it); rows that change only; element = 8 B (double).
B=/work/main/build/release/cli/optcoll
R=/work/main/docs/results/node
for p in 4 8 16; do
for c in bcast reduce allreduce allgather reduce_scatter_block alltoall scatter gather scatterv gatherv; do
for n in 1 8 64 512 4096 32768 262144 1048576; do
  extra=""; case $c in *v) extra="--dist spikes --block-size $n";; esac
  a=$($B plan $c -p $p $([ -z "$extra" ] && echo --count $n) $extra --model $R/send_gap/cal4gap.json --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  b=$($B plan $c -p $p $([ -z "$extra" ] && echo --count $n) $extra --model $R/receive_gap/cal4gaps.json --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  [ "${a% *}" != "${b% *}" ] && echo "p=$p $c n=$n: $a -> $b"
done; done; done
