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
#include <climits>
#include <cstdint>
#include <vector>

#include "optcoll.h"
#include "optcoll/model/collective.h"
#include "pmpi/calls.h"
#include "pmpi/route.h"
#include "pmpi/settings_check.h"

using optcoll::CollectiveKind;
using optcoll::CollectiveSpec;
using optcoll::Count;
using optcoll::pmpi::Route;

using optcoll::pmpi::both_movable;
using optcoll::pmpi::comm_rank;
using optcoll::pmpi::comm_size;
using optcoll::pmpi::dispatch;
using optcoll::pmpi::movement;
using optcoll::pmpi::reduction;
using optcoll::pmpi::spec_of;
using optcoll::pmpi::spec_of_counts;

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
  // Every rank knows the block from its own arguments (the root from recvcount).
  const bool at_root = comm_size(comm) > 0 && comm_rank(comm) == root;
  const std::size_t bytes = both_movable(at_root ? recvtype : sendtype,
                                         at_root && sendbuf != MPI_IN_PLACE ? sendtype : MPI_BYTE);
  const int block = at_root ? recvcount : sendcount;
  return dispatch(
      "MPI_Gather",
      sendbuf == MPI_IN_PLACE && !at_root
          ? Route::kMpi
          : movement(comm, bytes, CollectiveKind::kGather, block, root),
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
  const bool at_root = comm_size(comm) > 0 && comm_rank(comm) == root;
  const std::size_t bytes = both_movable(at_root ? sendtype : recvtype,
                                         at_root && recvbuf != MPI_IN_PLACE ? recvtype : MPI_BYTE);
  const int block = at_root ? sendcount : recvcount;
  return dispatch(
      "MPI_Scatter", movement(comm, bytes, CollectiveKind::kScatter, block, root),
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
      movement(comm, both_movable(recvtype, sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype),
               CollectiveKind::kAllgather, recvcount, 0),
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
      movement(comm, both_movable(recvtype, sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype),
               CollectiveKind::kAlltoall, recvcount, 0),
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
  const int p = comm_size(comm);
  auto theirs = [&] {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm);
  };
  // Every rank must take the same path: only what all ranks know (communicator, root,
  // policy) decides before the count exchange, which is itself collective.
  if (p == 0 || root < 0 || root >= p || !optcoll::pmpi::enabled(comm) ||
      optcoll::pmpi::skip_count_exchange(comm, CollectiveKind::kGatherv)) {
    return dispatch("MPI_Gatherv", Route::kMpi, theirs, theirs);
  }
  const bool at_root = comm_rank(comm) == root;
  const bool in_place = at_root && sendbuf == MPI_IN_PLACE;
  const std::size_t send_bytes = in_place ? 1 : optcoll::pmpi::movable_bytes(sendtype);
  const std::size_t recv_bytes = at_root ? optcoll::pmpi::movable_bytes(recvtype) : 1;
  // Each rank's byte count, or -1 when this rank cannot go through optcoll.
  std::int64_t mine = -1;
  if (send_bytes > 0 && recv_bytes > 0) {
    if (in_place) {
      mine = recvcounts != nullptr
                 ? std::int64_t{recvcounts[root]} * static_cast<std::int64_t>(recv_bytes)
                 : -1;
    } else if (sendcount >= 0) {
      mine = std::int64_t{sendcount} * static_cast<std::int64_t>(send_bytes);
    }
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(p));
  PMPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm);
  std::vector<Count> counts(all.begin(), all.end());
  std::vector<int> int_counts(static_cast<std::size_t>(p));
  bool servable = true;
  for (int r = 0; r < p; ++r) {
    const std::int64_t c = all[static_cast<std::size_t>(r)];
    servable = servable && c >= 0 && c <= INT_MAX;
    int_counts[static_cast<std::size_t>(r)] = static_cast<int>(c);
  }
  const Route route =
      servable
          ? optcoll::pmpi::route(comm, spec_of_counts(CollectiveKind::kGatherv, p, counts, root))
          : Route::kMpi;
  return dispatch(
      "MPI_Gatherv", route,
      [&] {
        // The root passes its own arguments; the others pass the exchanged byte counts.
        return at_root ? OPTCOLL_Gatherv_known(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                               displs, recvtype, root, comm)
                       : OPTCOLL_Gatherv_known(sendbuf, sendcount, sendtype, nullptr,
                                               int_counts.data(), nullptr, MPI_BYTE, root, comm);
      },
      theirs);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  const int p = comm_size(comm);
  auto theirs = [&] {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
  };
  if (p == 0 || root < 0 || root >= p || !optcoll::pmpi::enabled(comm) ||
      optcoll::pmpi::skip_count_exchange(comm, CollectiveKind::kScatterv)) {
    return dispatch("MPI_Scatterv", Route::kMpi, theirs, theirs);
  }
  const bool at_root = comm_rank(comm) == root;
  // The root tells every rank the byte counts (or -1 when it cannot go through optcoll).
  std::vector<std::int64_t> all(static_cast<std::size_t>(p), -1);
  if (at_root) {
    const std::size_t bytes = optcoll::pmpi::movable_bytes(sendtype);
    if (bytes > 0 && sendcounts != nullptr) {
      for (int r = 0; r < p; ++r) {
        all[static_cast<std::size_t>(r)] =
            std::int64_t{sendcounts[r]} * static_cast<std::int64_t>(bytes);
      }
    }
  }
  PMPI_Bcast(all.data(), p, MPI_INT64_T, root, comm);
  // Every receiver's datatype must be movable too: one more small agreement.
  int movable = (at_root && recvbuf == MPI_IN_PLACE) || optcoll::pmpi::movable_bytes(recvtype) > 0;
  PMPI_Allreduce(MPI_IN_PLACE, &movable, 1, MPI_INT, MPI_MIN, comm);
  std::vector<int> int_counts(static_cast<std::size_t>(p));
  bool servable = movable != 0;
  for (int r = 0; r < p; ++r) {
    const std::int64_t c = all[static_cast<std::size_t>(r)];
    servable = servable && c >= 0 && c <= INT_MAX;
    int_counts[static_cast<std::size_t>(r)] = static_cast<int>(c);
  }
  const Route route =
      servable ? optcoll::pmpi::route(
                     comm, spec_of_counts(CollectiveKind::kScatterv, p,
                                          std::vector<Count>(all.begin(), all.end()), root))
               : Route::kMpi;
  return dispatch(
      "MPI_Scatterv", route,
      [&] {
        return at_root ? OPTCOLL_Scatterv_known(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                                recvcount, recvtype, root, comm)
                       : OPTCOLL_Scatterv_known(nullptr, int_counts.data(), nullptr, MPI_BYTE,
                                                recvbuf, recvcount, recvtype, root, comm);
      },
      theirs);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const bool servable = optcoll::pmpi::movable_bytes(recvtype) > 0 &&
                        (sendbuf == MPI_IN_PLACE || optcoll::pmpi::movable_bytes(sendtype) > 0);
  const Route route = optcoll::pmpi::always() && servable && optcoll::pmpi::enabled(comm)
                          ? Route::kOptcoll
                          : Route::kMpi;
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
  const int p = comm_size(comm);
  return dispatch(
      "MPI_Barrier",
      p > 0 ? optcoll::pmpi::route(comm, spec_of(CollectiveKind::kBarrier, p, 0, 0, 1, true))
            : Route::kMpi,
      [&] { return OPTCOLL_Barrier(comm); }, [&] { return PMPI_Barrier(comm); });
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
