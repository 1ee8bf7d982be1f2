// SPDX-License-Identifier: Apache-2.0
// File: what the PMPI library's entry points share (pmpi.cc: blocking collectives;
// requests.cc: nonblocking ones and the request calls): the optcoll spec of an intercepted
// call, its route, and the dispatch that counts it.
#pragma once

#include <cstddef>
#include <vector>

#include <mpi.h>

#include "optcoll/model/collective.h"
#include "pmpi/route.h"

namespace optcoll::pmpi {

int comm_size(MPI_Comm comm);  // 0 for MPI_COMM_NULL or an invalid handle
int comm_rank(MPI_Comm comm);

CollectiveSpec spec_of(CollectiveKind kind, int nranks, Count count, int root,
                       std::size_t elem_bytes, bool commutative);
CollectiveSpec spec_of_counts(CollectiveKind kind, int nranks, std::vector<Count> counts, int root);

// The size of `main`'s elements when both datatypes are contiguous, else 0. (Ranks judge
// their own datatypes: a call where some ranks use non-contiguous types and others
// contiguous ones of the same signature fails with optcoll's MPI_ERR_TYPE: docs/c_api.md.)
std::size_t both_movable(MPI_Datatype main, MPI_Datatype other);

// The route of a data-movement call whose spec is made from the element bytes `bytes`
// (0: optcoll cannot move the datatype).
Route movement(MPI_Comm comm, std::size_t bytes, CollectiveKind kind, long long count, int root);
// The route of a reduction.
Route reduction(MPI_Comm comm, MPI_Datatype type, MPI_Op op, CollectiveKind kind, long long count,
                int root);

// The routes of MPI_(I)allgatherv and MPI_(I)reduce_scatter (counts known on every rank).
Route allgatherv_route(MPI_Comm comm, const void* sendbuf, MPI_Datatype sendtype,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype);
Route reduce_scatter_route(MPI_Comm comm, const int recvcounts[], MPI_Datatype datatype, MPI_Op op);

template <typename Optcoll, typename Mpi>
int dispatch(const char* function, Route route, Optcoll&& ours, Mpi&& theirs) {
  count_call(function, route);
  return route == Route::kOptcoll ? ours() : theirs();
}

}  // namespace optcoll::pmpi
