#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs tests/pmpi/persistent_app under mpirun with liboptcoll_pmpi.so preloaded and the
# policy given, then checks each rank's call log: under "always" every persistent collective
# init call (MPI 4's MPI_<Name>_init, or Open MPI's MPIX_<Name>_init) went through optcoll,
# under "never" to the MPI library.
# Usage: run_persistent.sh MPIEXEC NP APP LIB POLICY WORKDIR
set -euo pipefail
mpiexec=$1 np=$2 app=$3 lib=$4 policy=$5 work=$6
mkdir -p "$work"
log="$work/pmpi_$policy"
rm -f "$log".*
app_args=()
[[ $policy == always ]] && app_args=(optcoll)  # it may check what only optcoll promises
# Open MPI's mpirun passes variables with -x NAME=VALUE, MPICH's (Hydra) with -genv NAME VALUE.
env_args=()
launcher=$("$mpiexec" --version 2>&1 || true)
for setting in LD_PRELOAD="$lib" OPTCOLL_PMPI="$policy" OPTCOLL_PMPI_LOG="$log"; do
  if [[ $launcher == *HYDRA* ]]; then
    env_args+=(-genv "${setting%%=*}" "${setting#*=}")
  else
    env_args+=(-x "$setting")
  fi
done
"$mpiexec" -np "$np" "${env_args[@]}" "$app" "${app_args[@]}"
for ((r = 0; r < np; ++r)); do
  test -s "$log.$r" || { echo "no call log from rank $r: was the library preloaded?"; exit 1; }
  for f in Allreduce Bcast Gatherv Scatterv Reduce_scatter_block Barrier; do
    line=$(grep -E "^MPIX?_${f}_init " "$log.$r") || {
      echo "rank $r: the ${f}_init call was not intercepted"; exit 1; }
    ours=$(sed 's/.*optcoll=\([0-9]*\).*/\1/' <<< "$line")
    theirs=$(sed 's/.*mpi=\([0-9]*\).*/\1/' <<< "$line")
    case $policy in
      always) [[ $theirs == 0 && $ours -gt 0 ]] || { echo "rank $r: $line"; exit 1; } ;;
      never) [[ $ours == 0 && $theirs -gt 0 ]] || { echo "rank $r: $line"; exit 1; } ;;
    esac
  done
  # A strided datatype (persistent_app's gather, Open MPI only) goes to the MPI library.
  if line=$(grep -E "^MPIX?_Gather_init " "$log.$r"); then
    [[ $line == *" optcoll=0 "* ]] || { echo "rank $r: $line"; exit 1; }
  fi
done
echo "every rank's persistent collectives routed as asked ($policy)"
