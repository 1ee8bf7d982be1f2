#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The MPI backend's default model against the reference cluster, without any calibration
# (docs/cost_model.md, "The MPI backend's default"): RUNS times, alternating, optcoll tune
# under mpirun -np P with --model OUT/ref.json ({"base": "reference"}, the model a
# Communicator on MPI used before) and without --model (the backend's default), each
# writing its report to OUT/{reference,default}.runN.md; then the table of
# compare_models.py.
#
#   bench/regret/mpi_default.sh build/release/cli/optcoll 2 docs/results/node/mpi_default_p2 5
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 OPTCOLL P OUT [RUNS]" >&2
  exit 2
fi
optcoll=$1 p=$2 out=$3 runs=${4:-5}
mkdir -p "$out"
echo '{"base": "reference"}' > "$out/ref.json"
table=$(mktemp)
trap 'rm -f "$table"' EXIT
for ((i = 1; i <= runs; ++i)); do
  mpirun -np "$p" --oversubscribe --bind-to none "$optcoll" tune --backend mpi \
    --model "$out/ref.json" --out "$table" --report "$out/reference.run$i.md" > /dev/null 2>&1
  mpirun -np "$p" --oversubscribe --bind-to none "$optcoll" tune --backend mpi \
    --out "$table" --report "$out/default.run$i.md" > /dev/null 2>&1
done
python3 "$(dirname "$0")/compare_models.py" "$out" reference default
