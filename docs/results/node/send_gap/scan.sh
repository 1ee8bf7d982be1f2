B=/work/main/build/release/cli/optcoll
R=/work/main/docs/results/node
for p in 4 8 16; do
for c in bcast reduce allreduce allgather reduce_scatter_block alltoall scatter gather; do
for n in 1 8 64 512 4096 32768 262144 1048576; do
  a=$($B plan $c -p $p --count $n --model $R/cores_bound_cal4/cal4.json --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  b=$($B plan $c -p $p --count $n --model $R/send_gap/cal4gap.json --json 2>/dev/null | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['algorithm'],d['predicted_time'])")
  [ "${a% *}" != "${b% *}" ] && echo "p=$p $c n=$n: $a -> $b"
done; done; done
