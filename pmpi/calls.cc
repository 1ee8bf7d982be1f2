// SPDX-License-Identifier: Apache-2.0
// File: what the PMPI library's entry points share (calls.h).
#include "pmpi/calls.h"

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

}  // namespace optcoll::pmpi
