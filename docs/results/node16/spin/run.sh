set -u
out=${OUT:-/tmp/o}; res=$out/d2; mkdir -p $res
pack() { tar -czf "$out/d2.tgz" -C "$out" d2; }
step() { local name=$1 limit=$2; shift 2; local start=$SECONDS
  timeout "$limit" "$@" > "$res/$name.txt" 2> "$res/$name.err"; echo "$name: exit $? in $((SECONDS - start)) s" >> "$res/steps.txt"; pack; }
p=16
step tvm_old 30 mpirun -np $p --bind-to none bench_threads_vs_mpi_old 10
step tvm_new 30 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
step tvm_old2 30 mpirun -np $p --bind-to none bench_threads_vs_mpi_old 10
step tvm_new2 30 mpirun -np $p --bind-to none bench_threads_vs_mpi 10
step calibrate_threads 30 optcoll calibrate --backend threads -p $p --out "$res/model_thr.json"
step tune_threads 80 optcoll tune --backend threads -p $p --model "$res/model_thr.json" --min-bytes 8 --max-bytes 8M --factor 8 --rounds 3 --budget 60 --out "$res/table_thr.json" --report "$res/tune_thr.md"
step calibrate_mpi 30 mpirun -np $p optcoll calibrate --backend mpi --out "$res/model_mpi.json"
step tune_mpi 50 mpirun -np $p optcoll tune --backend mpi --model "$res/model_mpi.json" --min-bytes 8 --max-bytes 1M --factor 32 --rounds 3 --budget 30 --out "$res/table_mpi.json" --report "$res/tune_mpi.md"
cat $res/steps.txt
