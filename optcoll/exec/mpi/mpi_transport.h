// SPDX-License-Identifier: Apache-2.0
// File: the MPI backend's transport: every schedule op that moves data becomes one
// non-blocking MPI point-to-point call on a communicator of its own (a duplicate of the
// caller's), so optcoll's messages never match the application's.
//
// Matching: MPI matches by (source, tag, communicator) and never lets a message overtake an
// earlier one with the same triple. The tag is the message's seq (its position among the
// messages of its ordered pair in one collective). Consecutive collectives need no epoch
// in the tag: a rank sends its seq-s message of call e before that of call e + 1, so a
// receive of call e always matches call e's message first.
//
// Progress: wait_some() polls MPI_Testsome over the outstanding requests (MPI progresses
// inside it), spinning with sched_yield for 500 us and then sleeping in growing steps
// (50 us to 1 ms), so that oversubscribed ranks leave the CPU to the peers they wait for.
//
// Calls: a caller that numbers its collective calls (begin_call(1), begin_call(2), ...,
// the same numbers on every rank, as the C API does) gets failures scoped to one call:
// tags carry the call number (tag = (call mod E) * 2^16 + seq, E = (MPI_TAG_UB + 1) / 2^16,
// 32768 with Open MPI), so messages a failed call leaves behind never match a later call;
// abort notices carry it too, so a notice fails only the call it is about (a rank that had
// finished that call ignores it; one that has not reached it yet fails when it does); and
// the transport is usable again from the next call. Without begin_call the tag is the seq
// and a failure is final, as described below.
//
// Failures: a message of the wrong size is a TransportError naming the peer, the seq and
// both sizes (a larger one is caught by MPI as a truncation, a smaller one by its count).
// abort(reason) sends the reason to every other rank on a second duplicate communicator;
// a rank that receives it fails at once with "rank R failed: reason" instead of waiting for
// its timeout. After any failure the transport refuses further use (a failed collective can
// leave messages behind on its communicator); make a new one. Cancelling: receives are
// cancelled with MPI_Cancel; sends cannot be cancelled portably (Open MPI ignores it), so
// a pending send is released with MPI_Request_free and its buffer must outlive the
// transport's communicator (the executor's scratch and the caller's buffers normally do).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll/exec/transport.h"

namespace optcoll::mpi {

class MpiTransport final : public Transport {
 public:
  // Duplicates `comm` twice (data and abort notices); collective over `comm`.
  explicit MpiTransport(MPI_Comm comm);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  Rank rank() const override { return rank_; }
  Rank size() const override { return size_; }
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override;
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override;
  void abort(const std::string& reason) override;
  // False after a failure (timeout, abort, wrong message): the transport refuses further
  // use, until the next begin_call.
  bool usable() const { return failed_.empty(); }
  // Starts collective call number `call` (increasing, equal on every rank; see above).
  void begin_call(std::uint64_t call);

 protected:
  void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) override;
  void do_cancel(std::span<const RequestId> ids) override;

 private:
  struct Pending {
    RequestId id = 0;
    bool receive = false;
    Rank peer = 0;
    std::int32_t seq = 0;
    std::size_t bytes = 0;
  };

  int tag_for(Rank peer, MsgKey key) const;
  void check_usable() const;
  void poll_abort_notice();
  // One MPI_Testsome pass: appends completed ids to `done`, throws on a failed request.
  void test_once(std::vector<RequestId>& done);
  [[noreturn]] void fail(const std::string& message);

  MPI_Comm data_ = MPI_COMM_NULL;
  MPI_Comm control_ = MPI_COMM_NULL;
  Rank rank_ = 0;
  Rank size_ = 0;
  int tag_ub_ = 32767;
  RequestId next_id_ = 1;
  std::vector<MPI_Request> requests_;  // parallel to pending_
  std::vector<Pending> pending_;
  std::vector<int> test_indices_;  // MPI_Testsome's outputs, kept between polls
  std::vector<MPI_Status> test_statuses_;
  std::vector<char> notice_in_;
  MPI_Request notice_recv_ = MPI_REQUEST_NULL;
  std::uint64_t call_ = 0;          // the current call (0: calls not used)
  std::uint64_t aborted_call_ = 0;  // the call this rank told the others about (+1; 0: none)
  std::map<std::uint64_t, std::string> future_notices_;  // failures of calls not reached yet
  std::vector<std::unique_ptr<std::string>> notice_out_;  // kept while their sends are pending
  std::vector<MPI_Request> notice_sends_;
  std::string failed_;  // why this transport is no longer usable ("" while it is)
};

}  // namespace optcoll::mpi
