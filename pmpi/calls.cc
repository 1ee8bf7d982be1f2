// SPDX-License-Identifier: Apache-2.0
// File: what the PMPI library's entry points share (calls.h).
#include "pmpi/calls.h"

#include <climits>
#include <cstdint>

namespace optcoll::pmpi {

int comm_size(MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return 0;
  return size;
}
int comm_rank(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

CollectiveSpec spec_of(CollectiveKind kind, int nranks, Count count, int root,
                       std::size_t elem_bytes, bool commutative) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = nranks;
  spec.count = count;
  spec.root = optcoll::is_rooted(kind) ? root : 0;
  spec.elem_bytes = elem_bytes;
  spec.commutative = commutative;
  return spec;
}

CollectiveSpec spec_of_counts(CollectiveKind kind, int nranks, std::vector<Count> counts,
                              int root) {
  CollectiveSpec spec = spec_of(kind, nranks, 0, root, 1, true);
  spec.counts = std::move(counts);
  return spec;
}

std::size_t both_movable(MPI_Datatype main, MPI_Datatype other) {
  return movable_bytes(other) > 0 ? movable_bytes(main) : 0;
}

Route movement(MPI_Comm comm, std::size_t bytes, CollectiveKind kind, long long count, int root) {
  const int p = comm_size(comm);
  if (bytes == 0 || p == 0 || count < 0 || root < 0 || (optcoll::is_rooted(kind) && root >= p)) {
    return Route::kMpi;  // MPI reports the error in its own words
  }
  return route(comm, spec_of(kind, p, count * static_cast<long long>(bytes), root, 1, true));
}

Route reduction(MPI_Comm comm, MPI_Datatype type, MPI_Op op, CollectiveKind kind, long long count,
                int root) {
  bool commutative = true;
  const std::size_t bytes = reducible_bytes(type, op, &commutative);
  const int p = comm_size(comm);
  if (bytes == 0 || p == 0 || count < 0 || root < 0 || (optcoll::is_rooted(kind) && root >= p)) {
    return Route::kMpi;
  }
  return route(comm, spec_of(kind, p, count, root, bytes, commutative));
}

Route allgatherv_route(MPI_Comm comm, const void* sendbuf, MPI_Datatype sendtype,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  const int p = comm_size(comm);
  const std::size_t bytes = both_movable(recvtype, sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype);
  if (p == 0 || bytes == 0 || recvcounts == nullptr || displs == nullptr) return Route::kMpi;
  std::vector<Count> counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    if (recvcounts[r] < 0) return Route::kMpi;
    counts[static_cast<std::size_t>(r)] = Count{recvcounts[r]} * static_cast<Count>(bytes);
  }
  return route(comm, spec_of_counts(CollectiveKind::kAllgatherv, p, counts, 0));
}

Route reduce_scatter_route(MPI_Comm comm, const int recvcounts[], MPI_Datatype datatype,
                           MPI_Op op) {
  const int p = comm_size(comm);
  bool commutative = true;
  const std::size_t bytes = reducible_bytes(datatype, op, &commutative);
  if (p == 0 || bytes == 0 || recvcounts == nullptr) return Route::kMpi;
  CollectiveSpec spec = spec_of(CollectiveKind::kReduceScatter, p, 0, 0, bytes, commutative);
  for (int r = 0; r < p; ++r) {
    if (recvcounts[r] < 0) return Route::kMpi;
    spec.counts.push_back(recvcounts[r]);
  }
  return route(comm, spec);
}

Route gather_route(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int recvcount, MPI_Datatype recvtype, int root) {
  const bool at_root = comm_size(comm) > 0 && comm_rank(comm) == root;
  if (sendbuf == MPI_IN_PLACE && !at_root) return Route::kMpi;
  const std::size_t bytes = both_movable(at_root ? recvtype : sendtype,
                                         at_root && sendbuf != MPI_IN_PLACE ? sendtype : MPI_BYTE);
  return movement(comm, bytes, CollectiveKind::kGather, at_root ? recvcount : sendcount, root);
}

Route scatter_route(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root) {
  const bool at_root = comm_size(comm) > 0 && comm_rank(comm) == root;
  const std::size_t bytes = both_movable(at_root ? sendtype : recvtype,
                                         at_root && recvbuf != MPI_IN_PLACE ? recvtype : MPI_BYTE);
  return movement(comm, bytes, CollectiveKind::kScatter, at_root ? sendcount : recvcount, root);
}

Route regular_route(MPI_Comm comm, CollectiveKind kind, const void* sendbuf, MPI_Datatype sendtype,
                    int recvcount, MPI_Datatype recvtype) {
  return movement(comm, both_movable(recvtype, sendbuf == MPI_IN_PLACE ? MPI_BYTE : sendtype), kind,
                  recvcount, 0);
}

Route barrier_route(MPI_Comm comm) {
  const int p = comm_size(comm);
  return p > 0 ? route(comm, spec_of(CollectiveKind::kBarrier, p, 0, 0, 1, true)) : Route::kMpi;
}

Route alltoallv_route(MPI_Comm comm, const void* sendbuf, MPI_Datatype sendtype,
                      MPI_Datatype recvtype) {
  const bool servable =
      movable_bytes(recvtype) > 0 && (sendbuf == MPI_IN_PLACE || movable_bytes(sendtype) > 0);
  return always() && servable && enabled(comm) ? Route::kOptcoll : Route::kMpi;
}

namespace {

// The byte counts of an exchange (-1 where a rank cannot go through optcoll) as ints, or
// false when one of them rules optcoll out.
bool servable_counts(const std::vector<std::int64_t>& all, std::vector<int>* byte_counts) {
  byte_counts->assign(all.size(), 0);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] < 0 || all[r] > INT_MAX) return false;
    (*byte_counts)[r] = static_cast<int>(all[r]);
  }
  return true;
}

}  // namespace

Route gatherv_route(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    const int recvcounts[], MPI_Datatype recvtype, int root,
                    std::vector<int>* byte_counts) {
  const int p = comm_size(comm);
  if (p == 0 || root < 0 || root >= p || !enabled(comm) ||
      skip_count_exchange(comm, CollectiveKind::kGatherv)) {
    return Route::kMpi;
  }
  const bool at_root = comm_rank(comm) == root;
  const bool in_place = at_root && sendbuf == MPI_IN_PLACE;
  const std::size_t send_bytes = in_place ? 1 : movable_bytes(sendtype);
  const std::size_t recv_bytes = at_root ? movable_bytes(recvtype) : 1;
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
  if (!servable_counts(all, byte_counts)) return Route::kMpi;
  return route(comm, spec_of_counts(CollectiveKind::kGatherv, p,
                                    std::vector<Count>(all.begin(), all.end()), root));
}

Route scatterv_route(MPI_Comm comm, const int sendcounts[], MPI_Datatype sendtype,
                     const void* recvbuf, MPI_Datatype recvtype, int root,
                     std::vector<int>* byte_counts) {
  const int p = comm_size(comm);
  if (p == 0 || root < 0 || root >= p || !enabled(comm) ||
      skip_count_exchange(comm, CollectiveKind::kScatterv)) {
    return Route::kMpi;
  }
  const bool at_root = comm_rank(comm) == root;
  // The root tells every rank the byte counts (or -1 when it cannot go through optcoll).
  std::vector<std::int64_t> all(static_cast<std::size_t>(p), -1);
  if (at_root) {
    const std::size_t bytes = movable_bytes(sendtype);
    if (bytes > 0 && sendcounts != nullptr) {
      for (int r = 0; r < p; ++r) {
        all[static_cast<std::size_t>(r)] =
            std::int64_t{sendcounts[r]} * static_cast<std::int64_t>(bytes);
      }
    }
  }
  PMPI_Bcast(all.data(), p, MPI_INT64_T, root, comm);
  // Every receiver's datatype must be movable too: one more small agreement.
  int movable = (at_root && recvbuf == MPI_IN_PLACE) || movable_bytes(recvtype) > 0;
  PMPI_Allreduce(MPI_IN_PLACE, &movable, 1, MPI_INT, MPI_MIN, comm);
  if (movable == 0 || !servable_counts(all, byte_counts)) return Route::kMpi;
  return route(comm, spec_of_counts(CollectiveKind::kScatterv, p,
                                    std::vector<Count>(all.begin(), all.end()), root));
}

}  // namespace optcoll::pmpi
