# bash scan.sh: algorithm and predicted time under receive_gap/cal4gaps.json (the p = 4
# calibration with both gaps) -> the same with "cores": 2 (--cores 2); rows that change
# only; element = 8 B (double).
B=/work/main/build/release/cli/optcoll
M=/work/main/docs/results/node/receive_gap/cal4gaps.json
for p in 4 8 16; do
for c in bcast reduce allreduce allgather reduce_scatter_block alltoall scatter gather scatterv gatherv; do
for n in 1 8 64 512 4096 32768 262144 1048576; do
  extra=""; case $c in *v) extra="--dist spikes --block-size $n";; esac
  a=$($B plan $c -p $p $([ -z "$extra" ] && echo --count $n) $extra --model $M --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  b=$($B plan $c -p $p $([ -z "$extra" ] && echo --count $n) $extra --model $M --cores 2 --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  [ "${a% *}" != "${b% *}" ] && echo "p=$p $c n=$n: $a -> $b"
done; done; done
