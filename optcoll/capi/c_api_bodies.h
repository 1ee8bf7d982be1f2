// SPDX-License-Identifier: Apache-2.0
// File: the C API's collectives as one table: each row names a collective (its MPI name and
// the lower-case one of its nonblocking form), its parameters and their names. Its body,
// `<lower>_body(Call&, parameters...)` (c_api_rooted.cc, c_api_symmetric.cc), does the work
// for all three forms that c_api_forms.cc makes of it: OPTCOLL_<Name> (blocking),
// OPTCOLL_I<lower> (nonblocking) and OPTCOLL_<Name>_init (persistent).
#pragma once

#include <mpi.h>

#include "optcoll/capi/call.h"

// X(Name, lower, (parameters), (argument names))
#define OPTCOLL_C_COLLECTIVES(X)                                                                   \
  X(Bcast, bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),       \
    (buffer, count, datatype, root, comm))                                                         \
  X(Reduce, reduce,                                                                                \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,    \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, count, datatype, op, root, comm))                                           \
  X(Gather, gather,                                                                                \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,      \
     MPI_Datatype recvtype, int root, MPI_Comm comm),                                              \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))                      \
  X(Scatter, scatter,                                                                              \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,      \
     MPI_Datatype recvtype, int root, MPI_Comm comm),                                              \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))                      \
  X(Gatherv, gatherv,                                                                              \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,                     \
     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))             \
  X(Gatherv_known, gatherv_known,                                                                  \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,                     \
     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))             \
  X(Scatterv, scatterv,                                                                            \
    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,       \
     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),                \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))             \
  X(Scatterv_known, scatterv_known,                                                                \
    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,       \
     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),                \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))             \
  X(Allreduce, allreduce,                                                                          \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,              \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, count, datatype, op, comm))                                                 \
  X(Reduce_scatter_block, reduce_scatter_block,                                                    \
    (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,          \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, recvcount, datatype, op, comm))                                             \
  X(Reduce_scatter, reduce_scatter,                                                                \
    (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, recvcounts, datatype, op, comm))                                            \
  X(Allgather, allgather,                                                                          \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,      \
     MPI_Datatype recvtype, MPI_Comm comm),                                                        \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                            \
  X(Allgatherv, allgatherv,                                                                        \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,                     \
     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),            \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))                   \
  X(Alltoall, alltoall,                                                                            \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,      \
     MPI_Datatype recvtype, MPI_Comm comm),                                                        \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                            \
  X(Alltoallv, alltoallv,                                                                          \
    (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,      \
     void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,            \
     MPI_Comm comm),                                                                               \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))        \
  X(Scan, scan,                                                                                    \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,              \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, count, datatype, op, comm))                                                 \
  X(Exscan, exscan,                                                                                \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,              \
     MPI_Comm comm),                                                                               \
    (sendbuf, recvbuf, count, datatype, op, comm))                                                 \
  X(Barrier, barrier, (MPI_Comm comm), (comm))

// (Call& call, parameters...): a body's parameter list.
#define OPTCOLL_C_WITH_CALL(...) (::optcoll::capi::Call & call, __VA_ARGS__)

namespace optcoll::capi {

#define OPTCOLL_C_DECLARE_BODY(Name, lower, Params, Args) \
  void lower##_body OPTCOLL_C_WITH_CALL Params;
OPTCOLL_C_COLLECTIVES(OPTCOLL_C_DECLARE_BODY)
#undef OPTCOLL_C_DECLARE_BODY

}  // namespace optcoll::capi
