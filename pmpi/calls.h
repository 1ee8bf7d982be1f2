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

// The routes of the blocking calls, which their persistent forms (MPI_<Name>_init) share.
// Every rank knows a gather's block from its own arguments (the root from recvcount), a
// scatter's likewise.
Route gather_route(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int recvcount, MPI_Datatype recvtype, int root);
Route scatter_route(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root);
// MPI_Allgather's and MPI_Alltoall's (`kind`).
Route regular_route(MPI_Comm comm, CollectiveKind kind, const void* sendbuf, MPI_Datatype sendtype,
                    int recvcount, MPI_Datatype recvtype);
Route barrier_route(MPI_Comm comm);
// MPI_Alltoallv goes through optcoll only under "always" (its count matrix exchange costs
// what a linear alltoallv saves).
Route alltoallv_route(MPI_Comm comm, const void* sendbuf, MPI_Datatype sendtype,
                      MPI_Datatype recvtype);

// MPI_Gatherv's and MPI_Scatterv's routes, which need counts that MPI gives at the root
// only. Every rank must take the same path: only what all ranks know (communicator, root,
// policy) decides before the count exchange, which is itself collective (gatherv: one
// PMPI_Allgather of each rank's byte count; scatterv: a PMPI_Bcast of the root's and a
// PMPI_Allreduce agreeing on the receivers' datatypes). Routed to optcoll, `byte_counts`
// holds every rank's byte count (what OPTCOLL_Gatherv_known / _Scatterv_known take off the
// root).
Route gatherv_route(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    const int recvcounts[], MPI_Datatype recvtype, int root,
                    std::vector<int>* byte_counts);
Route scatterv_route(MPI_Comm comm, const int sendcounts[], MPI_Datatype sendtype,
                     const void* recvbuf, MPI_Datatype recvtype, int root,
                     std::vector<int>* byte_counts);

// Set while the PMPI library runs optcoll (a collective, its start or its completion): the
// request calls that optcoll's MPI transport makes on its own requests (MPI_Testsome & co.,
// interposed like the program's) then go straight to the MPI library without looking for
// the program's optcoll requests among them.
inline int optcoll_depth = 0;
class InOptcoll {
 public:
  InOptcoll() { ++optcoll_depth; }
  ~InOptcoll() { --optcoll_depth; }
  InOptcoll(const InOptcoll&) = delete;
  InOptcoll& operator=(const InOptcoll&) = delete;
  static bool now() { return optcoll_depth > 0; }
};

template <typename Optcoll, typename Mpi>
int dispatch(const char* function, Route route, Optcoll&& ours, Mpi&& theirs) {
  count_call(function, route);
  if (route != Route::kOptcoll) return theirs();
  const InOptcoll inside;
  return ours();
}

}  // namespace optcoll::pmpi
