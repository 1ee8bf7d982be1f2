#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs tests/pmpi/unaware_app under mpirun with liboptcoll_pmpi.so preloaded and the policy
# given, then checks the per-rank call logs: under "always" every intercepted collective
# went through optcoll on every rank; under "never" none did; under "auto" every call was
# routed one way or the other (the counts add up) and the results were correct.
# EXPECT_OPTCOLL (optional, comma-separated): functions that must have gone through optcoll
# on every call (auto: the model predicts a win for them, e.g. MPI_Gatherv at p = 8, where
# the MPI library's is linear).
# EXPECT_MPI (optional, likewise): functions that must have gone to the MPI library on every
# call (auto: MPI_Gatherv/MPI_Scatterv at p <= 5, where linear without a count exchange
# cannot lose: optcoll/plan/counts_free.h).
# Usage: run_preloaded.sh MPIEXEC NP APP LIB POLICY WORKDIR [EXPECT_OPTCOLL [EXPECT_MPI]]
set -euo pipefail
mpiexec=$1 np=$2 app=$3 lib=$4 policy=$5 work=$6 expect_optcoll=${7:-} expect_mpi=${8:-}
mkdir -p "$work"
log="$work/pmpi_$policy"
rm -f "$log".*
# OPTCOLL_MODEL, where the caller sets it, reaches every rank.
"$mpiexec" -np "$np" -x LD_PRELOAD="$lib" -x OPTCOLL_PMPI="$policy" -x OPTCOLL_PMPI_LOG="$log" \
  ${OPTCOLL_MODEL:+-x OPTCOLL_MODEL} "$app"
for ((r = 0; r < np; ++r)); do
  test -s "$log.$r" || { echo "no call log from rank $r: was the library preloaded?"; exit 1; }
  echo "rank $r: $(tr '\n' ' ' < "$log.$r")"
  for f in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Reduce_scatter_block \
           MPI_Alltoall MPI_Scan MPI_Gatherv MPI_Scatterv MPI_Allgatherv MPI_Barrier; do
    line=$(grep "^$f " "$log.$r") || { echo "rank $r: $f was not intercepted"; exit 1; }
    ours=$(sed 's/.*optcoll=\([0-9]*\).*/\1/' <<< "$line")
    theirs=$(sed 's/.*mpi=\([0-9]*\).*/\1/' <<< "$line")
    case $policy in
      always) [[ $theirs == 0 && $ours -gt 0 ]] || { echo "rank $r: $f: $line"; exit 1; } ;;
      never) [[ $ours == 0 && $theirs -gt 0 ]] || { echo "rank $r: $f: $line"; exit 1; } ;;
    esac
    if [[ ",$expect_optcoll," == *",$f,"* ]]; then
      [[ $theirs == 0 && $ours -gt 0 ]] || { echo "rank $r: $f should go through optcoll: $line"; exit 1; }
    fi
    if [[ ",$expect_mpi," == *",$f,"* ]]; then
      [[ $ours == 0 && $theirs -gt 0 ]] || { echo "rank $r: $f should go to MPI: $line"; exit 1; }
    fi
  done
done
echo "pmpi $policy: every intercepted call checked"
