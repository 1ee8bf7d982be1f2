#!/usr/bin/env bash
# The replays of docs/performance.md "Model error and selection regret": measured tuning
# tables of the node (tune_d2/, regret/) predicted again under changed models, on any
# machine (bench/regret/replay.py). Run from the repository root after building:
#   docs/results/node16/replays.sh > docs/results/node16/replays.txt
set -eu
r=docs/results/node16
replay() { echo "## $*"; bench/regret/replay.py "$@"; echo; }
# Threads, the run before the all-pairs gap (tune_d2): its model, then the gap under load
# (0.54 us: the gap at which the model predicts tune's alltoall/linear of 8 B as measured).
replay $r/tune_d2/table_thr.json $r/tune_d2/model_thr.json
replay $r/tune_d2/table_thr.json $r/tune_d2/model_thr.json --set send_gap=5.4e-7 --set receive_gap=5.4e-7
# ... and predicting four back-to-back calls per run (what tune measures).
replay $r/tune_d2/table_thr.json $r/tune_d2/model_thr.json --set send_gap=5.4e-7 --set receive_gap=5.4e-7 --steady 4
# Threads, the final run (regret/): its model (alpha 4.13 us), then with the alpha of the
# run before (1.45 us).
replay $r/regret/table_thr2.json $r/regret/model_thr.json
replay $r/regret/table_thr2.json $r/regret/model_thr.json --set alpha=1.45e-6
# MPI, the final run: its model (node_beta fitted by least largest error: 13 GB/s), then
# node_beta as the least-squares fit now gives (56 GB/s) and the send mode that then
# predicts the calibration's fan-out best (shared: 2.24 ms against 0.97 measured; port 7.06).
replay $r/regret/table_mpi.json $r/regret/model_mpi.json
replay $r/regret/table_mpi.json $r/regret/model_mpi.json --set node_beta=1.78e-11 --set send_mode='"shared"'
