#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs route_app.c with liboptcoll_pmpi.so under OPTCOLL_PMPI=auto and a call log, then
# checks that every rank sent its MPI_Gatherv calls through optcoll and none to the MPI
# library (the route prices the library's algorithms on its own transport). Prints
# "route check: ok" when the results were right and every rank's log says so.
#
# Usage: run_route.sh MPIEXEC NP APP LIB WORKDIR [APP ARGUMENTS...]
set -euo pipefail
mpiexec=$1 np=$2 app=$3 lib=$4 work=$5
shift 5
mkdir -p "$work"
log="$work/route"
rm -f "$log".*
"$mpiexec" -np "$np" -x LD_PRELOAD="$lib" -x OPTCOLL_PMPI=auto -x OPTCOLL_PMPI_LOG="$log" "$app" "$@"
for ((r = 0; r < np; ++r)); do
  line=$(grep "^MPI_Gatherv " "$log.$r") || { echo "rank $r: no MPI_Gatherv in its call log"; exit 1; }
  [[ $line =~ optcoll=([0-9]+)\ mpi=0$ && ${BASH_REMATCH[1]} -gt 0 ]] ||
    { echo "rank $r: MPI_Gatherv should go through optcoll: $line"; exit 1; }
done
echo "route check: ok"
