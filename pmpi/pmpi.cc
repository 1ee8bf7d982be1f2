// SPDX-License-Identifier: Apache-2.0
// File: liboptcoll_pmpi.so: MPI's collective entry points, interposed (LD_PRELOAD) in an
// unmodified MPI program. Each builds the optcoll spec of the call, asks route() whether
// optcoll is predicted to win (route.h: policy, model, margin), and calls OPTCOLL_X or the
// MPI library's PMPI_X. MPI_Gatherv and MPI_Scatterv first tell every rank the counts (one
// PMPI_Allgather / PMPI_Bcast of p integers: MPI gives them at the root only), then every
// rank decides alike. MPI_Alltoallv goes through optcoll only under OPTCOLL_PMPI=always (its
// count matrix exchange costs what a linear alltoallv saves). MPI_Finalize writes the call
// counts to $OPTCOLL_PMPI_LOG.<rank> when set. MPI_Init and MPI_Init_thread check the
// OPTCOLL_* settings (settings_check.h): a bad one is reported, and a fatal one stops the
// program there.
//
//   mpirun -np 8 -x LD_PRELOAD=/usr/local/lib/liboptcoll_pmpi.so -x OPTCOLL_MODEL=model.json ./app
#include <vector>

#include "optcoll.h"
#include "optcoll/model/collective.h"
#include "pmpi/calls.h"
#include "pmpi/route.h"
#include "pmpi/settings_check.h"

using optcoll::CollectiveKind;
using optcoll::pmpi::Route;

using optcoll::pmpi::comm_rank;
using optcoll::pmpi::dispatch;
using optcoll::pmpi::movement;
using optcoll::pmpi::reduction;

extern "C" {

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return dispatch(
      "MPI_Bcast",
      movement(comm, optcoll::pmpi::movable_bytes(datatype), CollectiveKind::kBcast, count, root),
      [&] { return OPTCOLL_Bcast(buffer, count, datatype, root, comm); },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  return dispatch(
      "MPI_Reduce", reduction(comm, datatype, op, CollectiveKind::kReduce, count, root),
      [&] { return OPTCOLL_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  return dispatch(
      "MPI_Allreduce", reduction(comm, datatype, op, CollectiveKind::kAllreduce, count, 0),
      [&] { return OPTCOLL_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return dispatch(
      "MPI_Reduce_scatter_block",
      reduction(comm, datatype, op, CollectiveKind::kReduceScatterBlock, recvcount, 0),
      [&] { return OPTCOLL_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return dispatch(
      "MPI_Scan", reduction(comm, datatype, op, CollectiveKind::kScan, count, 0),
      [&] { return OPTCOLL_Scan(sendbuf, recvbuf, count, datatype, op, comm); },
      [&] { return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  return dispatch(
      "MPI_Exscan", reduction(comm, datatype, op, CollectiveKind::kExscan, count, 0),
      [&] { return OPTCOLL_Exscan(sendbuf, recvbuf, count, datatype, op, comm); },
      [&] { return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return dispatch(
      "MPI_Gather",
      optcoll::pmpi::gather_route(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, root),
      [&] {
        return OPTCOLL_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
      },
      [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return dispatch(
      "MPI_Scatter",
      optcoll::pmpi::scatter_route(comm, sendcount, sendtype, recvbuf, recvcount, recvtype, root),
      [&] {
        return OPTCOLL_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm);
      },
      [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch(
      "MPI_Allgather",
      optcoll::pmpi::regular_route(comm, CollectiveKind::kAllgather, sendbuf, sendtype, recvcount,
                                   recvtype),
      [&] {
        return OPTCOLL_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      },
      [&] {
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch(
      "MPI_Alltoall",
      optcoll::pmpi::regular_route(comm, CollectiveKind::kAlltoall, sendbuf, sendtype, recvcount,
                                   recvtype),
      [&] {
        return OPTCOLL_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      },
      [&] {
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  const Route route =
      optcoll::pmpi::allgatherv_route(comm, sendbuf, sendtype, recvcounts, displs, recvtype);
  return dispatch(
      "MPI_Allgatherv", route,
      [&] {
        return OPTCOLL_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm);
      },
      [&] {
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
      });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const Route route = optcoll::pmpi::reduce_scatter_route(comm, recvcounts, datatype, op);
  return dispatch(
      "MPI_Reduce_scatter", route,
      [&] { return OPTCOLL_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); },
      [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  std::vector<int> byte_counts;
  const Route route = optcoll::pmpi::gatherv_route(comm, sendbuf, sendcount, sendtype, recvcounts,
                                                   recvtype, root, &byte_counts);
  return dispatch(
      "MPI_Gatherv", route,
      [&] {
        // The root passes its own arguments; the others pass the exchanged byte counts.
        return comm_rank(comm) == root
                   ? OPTCOLL_Gatherv_known(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, root, comm)
                   : OPTCOLL_Gatherv_known(sendbuf, sendcount, sendtype, nullptr,
                                           byte_counts.data(), nullptr, MPI_BYTE, root, comm);
      },
      [&] {
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
      });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  std::vector<int> byte_counts;
  const Route route = optcoll::pmpi::scatterv_route(comm, sendcounts, sendtype, recvbuf, recvtype,
                                                    root, &byte_counts);
  return dispatch(
      "MPI_Scatterv", route,
      [&] {
        return comm_rank(comm) == root
                   ? OPTCOLL_Scatterv_known(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                            recvcount, recvtype, root, comm)
                   : OPTCOLL_Scatterv_known(nullptr, byte_counts.data(), nullptr, MPI_BYTE, recvbuf,
                                            recvcount, recvtype, root, comm);
      },
      [&] {
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm);
      });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const Route route = optcoll::pmpi::alltoallv_route(comm, sendbuf, sendtype, recvtype);
  return dispatch(
      "MPI_Alltoallv", route,
      [&] {
        return OPTCOLL_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm);
      },
      [&] {
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm);
      });
}

int MPI_Barrier(MPI_Comm comm) {
  return dispatch(
      "MPI_Barrier", optcoll::pmpi::barrier_route(comm), [&] { return OPTCOLL_Barrier(comm); },
      [&] { return PMPI_Barrier(comm); });
}

int MPI_Init(int* argc, char*** argv) {
  const int code = PMPI_Init(argc, argv);
  if (code == MPI_SUCCESS) optcoll::pmpi::check_settings_at_init();
  return code;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int code = PMPI_Init_thread(argc, argv, required, provided);
  if (code == MPI_SUCCESS) optcoll::pmpi::check_settings_at_init();
  return code;
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  optcoll::pmpi::write_log(rank);
  return PMPI_Finalize();
}

}  // extern "C"
