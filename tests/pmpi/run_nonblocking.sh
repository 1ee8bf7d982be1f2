#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs tests/pmpi/nonblocking_app under mpirun with liboptcoll_pmpi.so preloaded and the
# policy given, then checks each rank's call log: under "always" every intercepted nonblocking
# collective went through optcoll, under "never" to the MPI library.
# Usage: run_nonblocking.sh MPIEXEC NP APP LIB POLICY WORKDIR
set -euo pipefail
mpiexec=$1 np=$2 app=$3 lib=$4 policy=$5 work=$6
mkdir -p "$work"
log="$work/pmpi_$policy"
rm -f "$log".*
"$mpiexec" -np "$np" -x LD_PRELOAD="$lib" -x OPTCOLL_PMPI="$policy" -x OPTCOLL_PMPI_LOG="$log" \
  "$app"
for ((r = 0; r < np; ++r)); do
  test -s "$log.$r" || { echo "no call log from rank $r: was the library preloaded?"; exit 1; }
  for f in MPI_Iallreduce MPI_Ibcast MPI_Iallgather MPI_Iallgatherv MPI_Ireduce \
           MPI_Ireduce_scatter MPI_Ialltoallv MPI_Ibarrier; do
    line=$(grep "^$f " "$log.$r") || { echo "rank $r: $f was not intercepted"; exit 1; }
    ours=$(sed 's/.*optcoll=\([0-9]*\).*/\1/' <<< "$line")
    theirs=$(sed 's/.*mpi=\([0-9]*\).*/\1/' <<< "$line")
    case $policy in
      always) [[ $theirs == 0 && $ours -gt 0 ]] || { echo "rank $r: $f: $line"; exit 1; } ;;
      never) [[ $ours == 0 && $theirs -gt 0 ]] || { echo "rank $r: $f: $line"; exit 1; } ;;
    esac
  done
done
echo "every rank's nonblocking collectives routed as asked ($policy)"
