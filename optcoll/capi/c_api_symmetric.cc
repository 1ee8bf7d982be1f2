// SPDX-License-Identifier: Apache-2.0
// File: the unrooted C API calls (OPTCOLL_Allreduce, _Allgather(v), _Reduce_scatter(_block),
// _Alltoall(v), _Scan, _Exscan, _Barrier) and the settings. MPI_IN_PLACE is served by copying the
// in-place data into a private input first (optcoll's input and output never alias). An
// alltoallv exchanges its count matrix unless its algorithm needs only each rank's own row
// and column (a forced linear or pairwise, any nonblocking call: optcoll/plan/counts_free.h).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "optcoll.h"
#include "optcoll/capi/c_api_bodies.h"
#include "optcoll/capi/call.h"
#include "optcoll/plan/counts_free.h"

using namespace optcoll;        // NOLINT(google-build-using-namespace)
using namespace optcoll::capi;  // NOLINT(google-build-using-namespace)

namespace {

// Runs a reduction whose input is `sendbuf`, or (MPI_IN_PLACE) the first `in_elements`
// elements of recvbuf.
void reduction(Call& call, const CollectiveSpec& spec, const void* sendbuf, void* recvbuf,
               Count in_elements, MPI_Datatype datatype, MPI_Op op) {
  Datatype user_type;
  const Datatype& type = element_type(datatype, user_type);
  ReduceOp user_op;
  const ReduceOp& reduce = reduce_op(op, datatype, type, user_op);
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {
    sendbuf = in_place_input(call, recvbuf, 0, in_elements * static_cast<Count>(type.bytes), own);
  }
  run_spec(call, spec, type, reduce, sendbuf, recvbuf);
}

std::string alltoallv_mismatch(Rank from, Count sent, Rank to, Count expected) {
  return fmt::format(
      "rank {} sends {} bytes to rank {} but recvcounts[{}] says {} "
      "(recvbuf left unchanged)",
      from, sent, to, from, expected);
}

// The algorithm an alltoallv without the count exchange runs: the one the settings force
// (which then needs only this rank's row and column, unless the call is nonblocking: refused),
// else alltoallv/linear.
std::string_view alltoallv_without_exchange(Call& call) {
  const Communicator::CountExchange& exchange =
      call.comm->count_exchange(CollectiveKind::kAlltoallv);
  const std::optional<std::string_view>& forced = exchange.forced;
  if (forced && !runs_from_own_counts(*forced)) {
    throw_call(MPI_ERR_OTHER,
               "OPTCOLL_Ialltoallv cannot run {} (OPTCOLL_Set_algorithm): it needs every rank's "
               "counts, and MPI gives each rank only its own; a nonblocking call runs "
               "alltoallv/linear or alltoallv/pairwise, or use OPTCOLL_Alltoallv_init "
               "(persistent: the counts are exchanged once, at init)",
               *forced);
  }
  return exchange.without_exchange;
}

// An alltoallv run from this rank's own row (send_counts) and column (recv_counts) alone
// (optcoll/plan/counts_free.h): each message's size is given on both sides, so a sender
// whose count disagrees with its receiver's fails that receive (a transport error naming
// both sizes). A mismatch of the rank's block to itself fails here alone, after the call.
void alltoallv_from_own_counts(Call& call, const std::vector<Count>& send_counts,
                               const std::vector<Count>& recv_counts, const void* sendbuf,
                               void* recvbuf, const int* rdispls, std::size_t recv_bytes) {
  const std::string_view algorithm = alltoallv_without_exchange(call);
  const auto me = static_cast<std::size_t>(call.rank);
  if (send_counts[me] != recv_counts[me]) {
    std::vector<Count> arriving = recv_counts;
    arriving[me] = send_counts[me];
    CollectiveSpec spec;
    assign_alltoallv_counts_free_spec(spec, call.rank, send_counts, arriving);
    fail_count_mismatch(
        call, alltoallv_mismatch(call.rank, send_counts[me], call.rank, recv_counts[me]), [&] {
          std::vector<std::byte> staging(static_cast<std::size_t>(total_of(arriving)));
          run_spec(call, spec, byte_type(), no_reduction(), sendbuf, staging.data(), algorithm);
        });
  }
  // (Into the context's scratch: back-to-back calls allocate nothing.)
  CollectiveSpec& spec = call.context->scratch().spec;
  assign_alltoallv_counts_free_spec(spec, call.rank, send_counts, recv_counts);
  run_into_displs(call, spec, sendbuf, recvbuf, recv_counts, rdispls, recv_bytes, algorithm);
}

}  // namespace

namespace optcoll::capi {

void allreduce_body(Call& call, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm /*comm*/) {
  check_count(count, "count");
  reduction(call, detail::regular(CollectiveKind::kAllreduce, count), sendbuf, recvbuf, count,
            datatype, op);
}

void reduce_scatter_block_body(Call& call, const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm /*comm*/) {
  check_count(recvcount, "recvcount");
  reduction(call, detail::regular(CollectiveKind::kReduceScatterBlock, recvcount), sendbuf, recvbuf,
            Count{recvcount} * call.size, datatype, op);
}

void reduce_scatter_body(Call& call, const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm /*comm*/) {
  check_counts(recvcounts, call.size, "recvcounts");
  const std::vector<Count> counts = scaled(recvcounts, call.size, 1);
  const Count total = total_of(counts);
  reduction(call, detail::irregular(CollectiveKind::kReduceScatter, counts), sendbuf, recvbuf,
            total, datatype, op);
}

void allgather_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm /*comm*/) {
  const Count block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {
    sendbuf = in_place_input(call, recvbuf, block * call.rank, block, own);
  } else {
    const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
    if (mine != block) {
      throw_call(MPI_ERR_COUNT, "rank {} sends {} bytes but receives {} per rank", call.rank, mine,
                 block);
    }
  }
  run_spec(call, detail::regular(CollectiveKind::kAllgather, block), byte_type(), no_reduction(),
           sendbuf, recvbuf);
}

void allgatherv_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm /*comm*/) {
  check_counts(recvcounts, call.size, "recvcounts");
  const std::size_t recv_bytes = contiguous_bytes(recvtype, "recvtype");
  const std::vector<Count> byte_counts = scaled(recvcounts, call.size, recv_bytes);
  std::vector<std::byte> own;
  const void* mine =
      checked_contribution(call, true, sendbuf, sendcount, sendtype, recvbuf, displs, recv_bytes,
                           byte_counts[static_cast<std::size_t>(call.rank)], own);
  run_into_displs(call, detail::irregular(CollectiveKind::kAllgatherv, byte_counts), mine, recvbuf,
                  byte_counts, displs, recv_bytes);
}

void alltoall_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm /*comm*/) {
  const Count block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {
    sendbuf = in_place_input(call, recvbuf, 0, block * call.size, own);
  } else {
    const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
    if (mine != block) {
      throw_call(MPI_ERR_COUNT, "rank {} sends {} bytes per rank but receives {}", call.rank, mine,
                 block);
    }
  }
  run_spec(call, detail::regular(CollectiveKind::kAlltoall, block), byte_type(), no_reduction(),
           sendbuf, recvbuf);
}

void alltoallv_body(Call& call, const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm /*comm*/) {
  const Rank p = call.size;
  check_counts(recvcounts, p, "recvcounts");
  const std::size_t recv_bytes = contiguous_bytes(recvtype, "recvtype");
  const std::vector<Count> recv_counts = scaled(recvcounts, p, recv_bytes);
  std::vector<Count> send_counts;
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {  // sends what recvbuf holds, laid out like the receives
    send_counts = recv_counts;
    if (rdispls == nullptr) throw_call(MPI_ERR_ARG, "rdispls is NULL");
    sendbuf = packed_input(call, recvbuf, recv_counts, rdispls, recv_bytes, own);
  } else {
    check_counts(sendcounts, p, "sendcounts");
    const std::size_t send_bytes = contiguous_bytes(sendtype, "sendtype");
    send_counts = scaled(sendcounts, p, send_bytes);
    if (!packed(sdispls, send_counts, send_bytes)) {
      sendbuf = packed_input(call, sendbuf, send_counts, sdispls, send_bytes, own);
    }
  }
  if (counts_free(call, CollectiveKind::kAlltoallv)) {
    alltoallv_from_own_counts(call, send_counts, recv_counts, sendbuf, recvbuf, rdispls,
                              recv_bytes);
    return;
  }
  // MPI gives each rank its own row: every rank learns the whole matrix first, straight into
  // the spec's counts (at p = 4,096 each copy of the matrix is 134 MB).
  CollectiveSpec spec = detail::irregular(CollectiveKind::kAlltoallv, {});
  std::vector<Count>& matrix = spec.counts;
  matrix.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(p));
  call.comm->allgather<Count>(send_counts, matrix);
  const auto me = static_cast<std::size_t>(call.rank);
  std::vector<Count> arriving(static_cast<std::size_t>(p));
  std::string mismatch;
  for (std::size_t from = 0; from < static_cast<std::size_t>(p); ++from) {
    arriving[from] = matrix[from * static_cast<std::size_t>(p) + me];
    if (mismatch.empty() && arriving[from] != recv_counts[from]) {
      mismatch =
          alltoallv_mismatch(static_cast<Rank>(from), arriving[from], call.rank, recv_counts[from]);
    }
  }
  if (mismatch.empty()) {
    run_into_displs(call, spec, sendbuf, recvbuf, recv_counts, rdispls, recv_bytes);
    return;
  }
  // The data arrives as sent: take it aside, then fail here alone.
  fail_count_mismatch(call, mismatch, [&] {
    std::vector<std::byte> staging(static_cast<std::size_t>(total_of(arriving)));
    run_spec(call, spec, byte_type(), no_reduction(), sendbuf, staging.data());
  });
}

void scan_body(Call& call, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm /*comm*/) {
  check_count(count, "count");
  reduction(call, detail::regular(CollectiveKind::kScan, count), sendbuf, recvbuf, count, datatype,
            op);
}

void exscan_body(Call& call, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm /*comm*/) {
  check_count(count, "count");
  reduction(call, detail::regular(CollectiveKind::kExscan, count), sendbuf, recvbuf, count,
            datatype, op);
}

void barrier_body(Call& call, MPI_Comm /*comm*/) {
  if (call.deferred == nullptr) {
    call.comm->barrier();
    return;
  }
  run_spec(call, detail::regular(CollectiveKind::kBarrier, 0), byte_type(), no_reduction(), nullptr,
           nullptr);
}

}  // namespace optcoll::capi

extern "C" {

int OPTCOLL_Set_model(const char* model_json_path) {
  try {
    set_model_file(model_json_path);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

int OPTCOLL_Set_algorithm(const char* collective, const char* algorithm) {
  try {
    if (collective == nullptr || algorithm == nullptr) {
      throw_call(MPI_ERR_ARG, "OPTCOLL_Set_algorithm needs a collective and an algorithm");
    }
    set_algorithm(collective, algorithm);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

int OPTCOLL_Set_timeout(int milliseconds) {
  try {
    set_timeout_ms(milliseconds);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

const char* OPTCOLL_Last_error(void) { return last_error(); }

}  // extern "C"
