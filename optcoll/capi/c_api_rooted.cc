// SPDX-License-Identifier: Apache-2.0
// File: the rooted C API calls: OPTCOLL_Bcast, _Reduce, _Gather(v), _Scatter(v) and the
// known-counts fast paths. Each checks its arguments, maps MPI buffers and datatypes onto
// an optcoll spec (bytes for data movement, elements for reductions), and runs it on the
// communicator's context (call.h).
#include <span>
#include <string_view>
#include <vector>

#include "optcoll.h"
#include "optcoll/capi/c_api_bodies.h"
#include "optcoll/capi/call.h"
#include "optcoll/plan/counts_free.h"

using namespace optcoll;        // NOLINT(google-build-using-namespace)
using namespace optcoll::capi;  // NOLINT(google-build-using-namespace)

namespace {

CollectiveSpec regular(CollectiveKind kind, Count count, Rank root) {
  return detail::regular(kind, count, root);
}

// The gatherv of `spec` (the planned one: every count on every rank; or the exchange-free
// linear one, `algorithm`) into the root's recvbuf at `displs` (in units of `recv_bytes`);
// `in` is this rank's contribution, `byte_counts` the blocks the root receives.
void gatherv_bytes(Call& call, const CollectiveSpec& spec, const std::vector<Count>& byte_counts,
                   const void* in, int root, void* recvbuf, const int* displs,
                   std::size_t recv_bytes, std::string_view algorithm = {}) {
  if (call.rank != root) {
    run_spec(call, spec, byte_type(), no_reduction(), in, recvbuf, algorithm);
    return;
  }
  run_into_displs(call, spec, in, recvbuf, byte_counts, displs, recv_bytes, algorithm);
}

// The root of a gatherv whose recvcounts (`expected`) disagree with what rank `r` sends
// (`arriving[r]`): the others are already sending, so it takes their data aside, leaves
// recvbuf unchanged and fails alone.
[[noreturn]] void gatherv_count_mismatch(Call& call, const CollectiveSpec& spec,
                                         const std::vector<Count>& arriving,
                                         const std::vector<Count>& expected, Rank r, const void* in,
                                         std::string_view algorithm) {
  const auto i = static_cast<std::size_t>(r);
  fail_count_mismatch(
      call,
      fmt::format("rank {} sends {} bytes but the root's recvcounts[{}] says {} "
                  "(recvbuf left unchanged)",
                  r, arriving[i], r, expected[i]),
      [&] {
        std::vector<std::byte> staging(static_cast<std::size_t>(total_of(arriving)));
        run_spec(call, spec, byte_type(), no_reduction(), in, staging.data(), algorithm);
      });
}

// Sends the root's blocks (at `displs` in units of `send_bytes`; packed first if they do
// not lie packed) or receives this rank's, for the scatterv of `spec`.
void scatterv_bytes(Call& call, const CollectiveSpec& spec, const std::vector<Count>& byte_counts,
                    const void* sendbuf, const int* displs, std::size_t send_bytes, int root,
                    void* out, std::string_view algorithm = {}) {
  if (call.rank != root || packed(displs, byte_counts, send_bytes)) {
    run_spec(call, spec, byte_type(), no_reduction(), sendbuf, out, algorithm);
    return;
  }
  std::vector<std::byte> local;
  run_spec(call, spec, byte_type(), no_reduction(),
           packed_input(call, sendbuf, byte_counts, displs, send_bytes, local), out, algorithm);
}

// The root's own block for an in-place gather(v): a copy (optcoll's input and output never
// alias).
}  // namespace

namespace optcoll::capi {

void bcast_body(Call& call, void* buffer, int count, MPI_Datatype datatype, int root,
                MPI_Comm /*comm*/) {
  check_root(root, call.size);
  const Count bytes = bytes_of(count, "count", datatype, "datatype");
  run_spec(call, regular(CollectiveKind::kBcast, bytes, root), byte_type(), no_reduction(), nullptr,
           buffer);
}

void reduce_body(Call& call, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm /*comm*/) {
  check_count(count, "count");
  check_root(root, call.size);
  Datatype user_type;
  const Datatype& type = element_type(datatype, user_type);
  ReduceOp user_op;
  const ReduceOp& reduce = reduce_op(op, datatype, type, user_op);
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {
    if (call.rank != root) throw_call(MPI_ERR_BUFFER, "MPI_IN_PLACE as sendbuf off the root");
    sendbuf = in_place_input(call, recvbuf, 0, Count{count} * static_cast<Count>(type.bytes), own);
  }
  run_spec(call, regular(CollectiveKind::kReduce, count, root), type, reduce, sendbuf, recvbuf);
}

void gather_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm /*comm*/) {
  check_root(root, call.size);
  Count block = 0;
  std::vector<std::byte> own;
  if (call.rank == root) {
    block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
    if (in_place(sendbuf)) {
      sendbuf = in_place_input(call, recvbuf, block * root, block, own);
    } else {
      const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
      if (mine != block) {  // the others are sending: receive aside, then fail here alone
        fail_count_mismatch(call,
                            fmt::format("the root sends {} bytes but receives {} per rank "
                                        "(recvbuf left unchanged)",
                                        mine, block),
                            [&] {
                              std::vector<std::byte> in(static_cast<std::size_t>(block)),
                                  out(static_cast<std::size_t>(block * call.size));
                              run_spec(call, regular(CollectiveKind::kGather, block, root),
                                       byte_type(), no_reduction(), in.data(), out.data());
                            });
      }
    }
  } else {
    block = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
  }
  run_spec(call, regular(CollectiveKind::kGather, block, root), byte_type(), no_reduction(),
           sendbuf, recvbuf);
}

void scatter_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm /*comm*/) {
  check_root(root, call.size);
  Count block = 0;
  std::vector<std::byte> discard;
  if (call.rank == root) {
    block = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
    if (in_place(recvbuf)) {  // the root's block stays where it is
      recvbuf = scratch_output(call, block, discard);
    } else {
      const Count mine = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
      if (mine != block) {  // the others wait for their blocks: send them, then fail here alone
        fail_count_mismatch(call,
                            fmt::format("the root sends {} bytes per rank but receives {} "
                                        "(recvbuf left unchanged)",
                                        block, mine),
                            [&] {
                              std::vector<std::byte> out(static_cast<std::size_t>(block));
                              run_spec(call, regular(CollectiveKind::kScatter, block, root),
                                       byte_type(), no_reduction(), sendbuf, out.data());
                            });
      }
    }
  } else {
    block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
  }
  run_spec(call, regular(CollectiveKind::kScatter, block, root), byte_type(), no_reduction(),
           sendbuf, recvbuf);
}

void gatherv_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm /*comm*/) {
  check_root(root, call.size);
  const bool is_root = call.rank == root;
  std::size_t recv_bytes = 0;
  Count mine = 0;
  std::vector<std::byte> own;
  if (is_root) {
    check_counts(recvcounts, call.size, "recvcounts");
    recv_bytes = contiguous_bytes(recvtype, "recvtype");
  }
  if (is_root && in_place(sendbuf)) {
    if (displs == nullptr) throw_call(MPI_ERR_ARG, "displs is NULL");
    mine = Count{recvcounts[root]} * static_cast<Count>(recv_bytes);
    sendbuf = in_place_input(call, recvbuf, Count{displs[root]} * static_cast<Count>(recv_bytes),
                             mine, own);
  } else {
    mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
  }
  if (counts_free(call, CollectiveKind::kGatherv)) {
    // Linear (or a forced lpt_star) needs no count exchange (optcoll/plan/counts_free.h):
    // the root receives each block at the size its recvcounts give, so a sender whose count
    // disagrees fails the root's receive of it (a transport error naming both sizes).
    // (Into the context's scratch: back-to-back calls allocate nothing.)
    const std::string_view algorithm =
        call.comm->count_exchange(CollectiveKind::kGatherv).without_exchange;
    CommContext::Scratch& scratch = call.context->scratch();
    if (!is_root) {
      assign_counts_free_spec(scratch.spec, CollectiveKind::kGatherv, call.size, root, call.rank,
                              std::span(&mine, 1));
      run_spec(call, scratch.spec, byte_type(), no_reduction(), sendbuf, recvbuf, algorithm);
      return;
    }
    const std::vector<Count>& expected = scratch.expected;
    assign_scaled(scratch.expected, recvcounts, call.size, recv_bytes);
    if (mine != expected[static_cast<std::size_t>(root)]) {
      std::vector<Count> arriving = expected;
      arriving[static_cast<std::size_t>(root)] = mine;
      gatherv_count_mismatch(
          call, counts_free_spec(CollectiveKind::kGatherv, call.size, root, root, arriving),
          arriving, expected, root, sendbuf, algorithm);
    }
    assign_counts_free_spec(scratch.spec, CollectiveKind::kGatherv, call.size, root, root,
                            expected);
    gatherv_bytes(call, scratch.spec, expected, sendbuf, root, recvbuf, displs, recv_bytes,
                  algorithm);
    return;
  }
  // MPI gives the counts at the root only: every rank learns them first.
  const std::vector<Count> byte_counts = exchange_own(call, mine);
  const CollectiveSpec spec = detail::irregular(CollectiveKind::kGatherv, byte_counts, root);
  if (is_root) {
    const std::vector<Count> expected = scaled(recvcounts, call.size, recv_bytes);
    for (Rank r = 0; r < call.size; ++r) {
      if (expected[static_cast<std::size_t>(r)] != byte_counts[static_cast<std::size_t>(r)]) {
        gatherv_count_mismatch(call, spec, byte_counts, expected, r, sendbuf, {});
      }
    }
  }
  gatherv_bytes(call, spec, byte_counts, sendbuf, root, recvbuf, displs, recv_bytes);
}

void gatherv_known_body(Call& call, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm /*comm*/) {
  check_root(root, call.size);
  check_counts(recvcounts, call.size, "recvcounts");
  const std::size_t recv_bytes = contiguous_bytes(recvtype, "recvtype");
  const std::vector<Count> byte_counts = scaled(recvcounts, call.size, recv_bytes);
  std::vector<std::byte> own;
  const void* mine =
      checked_contribution(call, call.rank == root, sendbuf, sendcount, sendtype, recvbuf, displs,
                           recv_bytes, byte_counts[static_cast<std::size_t>(call.rank)], own);
  gatherv_bytes(call, detail::irregular(CollectiveKind::kGatherv, byte_counts, root), byte_counts,
                mine, root, recvbuf, displs, recv_bytes);
}

void scatterv_body(Call& call, const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm /*comm*/) {
  check_root(root, call.size);
  const bool is_root = call.rank == root;
  const auto me = static_cast<std::size_t>(call.rank);
  // The spec and the counts go into the context's scratch: back-to-back calls allocate nothing.
  CommContext::Scratch& scratch = call.context->scratch();
  CollectiveSpec& spec = scratch.spec;
  if (!is_root && counts_free(call, CollectiveKind::kScatterv)) {
    // Linear (or a forced lpt_star) needs no count exchange (optcoll/plan/counts_free.h):
    // this rank receives its block at the size its recvcount gives, so a root that sends
    // another size fails the receive (a transport error naming both sizes).
    const Count mine = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
    assign_counts_free_spec(spec, CollectiveKind::kScatterv, call.size, root, call.rank,
                            std::span(&mine, 1));
    run_spec(call, spec, byte_type(), no_reduction(), sendbuf, recvbuf,
             call.comm->count_exchange(CollectiveKind::kScatterv).without_exchange);
    return;
  }
  std::size_t send_bytes = 0;
  std::vector<Count>& byte_counts = scratch.counts;
  byte_counts.assign(static_cast<std::size_t>(call.size), 0);
  if (is_root) {
    check_counts(sendcounts, call.size, "sendcounts");
    send_bytes = contiguous_bytes(sendtype, "sendtype");
    assign_scaled(byte_counts, sendcounts, call.size, send_bytes);
  }
  std::string_view algorithm;
  if (counts_free(call, CollectiveKind::kScatterv)) {  // the root, without exchange
    assign_counts_free_spec(spec, CollectiveKind::kScatterv, call.size, root, root, byte_counts);
    algorithm = call.comm->count_exchange(CollectiveKind::kScatterv).without_exchange;
  } else {
    // MPI gives the counts at the root only: it tells every rank first.
    call.comm->bcast<std::int64_t>(byte_counts, root);
    spec = detail::irregular(CollectiveKind::kScatterv, byte_counts, root);
  }
  std::vector<std::byte> discard;
  Count mine = byte_counts[me];
  if (!(is_root && in_place(recvbuf))) {
    mine = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
  }
  if (mine != byte_counts[me]) {  // the data go aside; this rank alone fails
    fail_count_mismatch(call,
                        fmt::format("rank {} receives {} bytes but the root sends it {} "
                                    "(recvbuf left unchanged)",
                                    call.rank, mine, byte_counts[me]),
                        [&] {
                          scatterv_bytes(call, spec, byte_counts, sendbuf, displs, send_bytes, root,
                                         scratch_output(call, byte_counts[me], discard), algorithm);
                        });
  }
  scatterv_bytes(
      call, spec, byte_counts, sendbuf, displs, send_bytes, root,
      is_root && in_place(recvbuf) ? scratch_output(call, byte_counts[me], discard) : recvbuf,
      algorithm);
}

void scatterv_known_body(Call& call, const void* sendbuf, const int sendcounts[],
                         const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm /*comm*/) {
  check_root(root, call.size);
  check_counts(sendcounts, call.size, "sendcounts");
  const std::size_t send_bytes = contiguous_bytes(sendtype, "sendtype");
  const std::vector<Count> byte_counts = scaled(sendcounts, call.size, send_bytes);
  const auto me = static_cast<std::size_t>(call.rank);
  std::vector<std::byte> discard;
  if (call.rank == root && in_place(recvbuf)) {
    recvbuf = scratch_output(call, byte_counts[me], discard);
  } else {
    const Count mine = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
    if (mine != byte_counts[me]) {
      throw_call(MPI_ERR_COUNT, "rank {} receives {} bytes but sendcounts[{}] says {}", call.rank,
                 mine, call.rank, byte_counts[me]);
    }
  }
  scatterv_bytes(call, detail::irregular(CollectiveKind::kScatterv, byte_counts, root), byte_counts,
                 sendbuf, displs, send_bytes, root, recvbuf);
}

}  // namespace optcoll::capi
