// SPDX-License-Identifier: Apache-2.0
// File: the PMPI library's decision: whether an intercepted MPI collective goes through
// optcoll or to the MPI library's own PMPI_ version.
//
// $OPTCOLL_PMPI selects the policy (the settings are read and checked once, at MPI_Init:
// optcoll/capi/settings.h): "auto" (the default) uses optcoll when the cost model
// ($OPTCOLL_MODEL, else the MPI backend's default) predicts that optcoll's choice beats the
// best algorithm the MPI library itself has for that collective, priced on the library's
// own transport (the model without optcoll's same-node channel: its messages above the
// eager limit all wait for a handshake), by more than the margin
// ($OPTCOLL_PMPI_MARGIN, default 0.1 = 10%); "always" sends every supported call through
// optcoll; "never" none. Every rank decides alike from the same arguments and model, so the
// ranks of one call always take the same path. Calls optcoll cannot serve (non-contiguous
// datatypes, inter-communicators, MPI_THREAD_MULTIPLE, counts past INT_MAX bytes) go to
// PMPI_ whatever the policy. Decisions are cached per call signature.
#pragma once

#include <string>

#include <mpi.h>

#include "optcoll/model/collective.h"

namespace optcoll::pmpi {

enum class Route { kOptcoll, kMpi };

// Whether optcoll may serve calls on `comm` at all (policy not "never", an intra-
// communicator, no MPI_THREAD_MULTIPLE); every rank answers alike.
bool enabled(MPI_Comm comm);
bool always();  // the policy is "always"

// The route for `spec` (nranks, counts, elem_bytes, commutative filled in) on `comm`.
// Never throws: anything unexpected routes to MPI.
Route route(MPI_Comm comm, const CollectiveSpec& spec);

// Whether an MPI_Gatherv / MPI_Scatterv (`kind`) on `comm` goes straight to the MPI library,
// before and instead of the count exchange optcoll needs: under "auto", when the model says
// linear without an exchange cannot be slower than optcoll's best after one
// (optcoll/plan/counts_free.h), since the MPI library's own is linear (at p <= 5 on the
// reference cluster), and the library's transport is optcoll's (the model describes no
// same-node channel: on one node under the default it does, and the counts are exchanged).
// Every rank answers alike; never throws (answers false).
bool skip_count_exchange(MPI_Comm comm, CollectiveKind kind);

// For datatype checks before a spec can be made: the element size of a contiguous type,
// or 0 when optcoll cannot move it (the call then goes to MPI).
std::size_t movable_bytes(MPI_Datatype type);
// The element size for a reduction over (type, op), or 0 when optcoll cannot reduce it;
// `commutative` is set from the operator.
std::size_t reducible_bytes(MPI_Datatype type, MPI_Op op, bool* commutative);

// Counts one call of `function` ("MPI_Allreduce") by route, for $OPTCOLL_PMPI_LOG.
void count_call(const char* function, Route route);
// Writes the counts to "$OPTCOLL_PMPI_LOG.<rank>" (at MPI_Finalize), if set.
void write_log(int rank);

}  // namespace optcoll::pmpi
