// SPDX-License-Identifier: Apache-2.0
// File: the narrow interface every backend implements (threads, MPI, ...). The executor
// (executor.h) is written once against it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "optcoll/model/placement.h"
#include "optcoll/model/types.h"

namespace optcoll {

// Identifies one message: the collective call it belongs to (epoch, so back-to-back calls
// never match each other's messages) and its seq on the ordered pair (from, to).
struct MsgKey {
  std::uint32_t epoch = 0;
  std::int32_t seq = 0;
  bool operator==(const MsgKey&) const = default;
};

using RequestId = std::uint64_t;

// An execution in progress, which other threads may advance on its rank's behalf while the
// rank's own thread waits (Transport::attach). advance() issues what is ready and takes in
// what has completed, without ever waiting; it returns whether anything changed. It never
// throws: a failure is kept for the rank's own thread, which raises it.
class Progress {
 public:
  virtual bool advance() noexcept = 0;

 protected:
  ~Progress() = default;
};

class ReduceInto;
namespace detail {
// A callable on the whole message (not a ReduceInto: copies stay copies).
template <typename F>
concept WholeCombine = !std::is_same_v<std::remove_cvref_t<F>, ReduceInto> &&
                       std::is_invocable_v<F&, std::span<const std::byte>>;
}  // namespace detail

// Combines incoming bytes into the receive buffer (the executor supplies it for a RecvReduce:
// it knows the datatype, the operator and the operand order). Called with the whole message;
// one made by_parts() may also be called on parts of it, each at its byte offset in the
// message (a multiple of granule(): whole elements), in any order and from several threads at
// once on disjoint parts (the thread backend's shared copies split a large one between the
// two ranks of the pair).
class ReduceInto {
 public:
  using Whole = std::function<void(std::span<const std::byte> incoming)>;
  using Part = std::function<void(std::span<const std::byte> part, std::size_t offset)>;

  ReduceInto() = default;
  // A combine step of the whole message only.
  template <detail::WholeCombine F>
  ReduceInto(F whole)  // NOLINT(google-explicit-constructor): a lambda is a ReduceInto
      : whole_(std::move(whole)) {}
  static ReduceInto by_parts(Part part, std::size_t granule) {
    ReduceInto reduce;
    reduce.part_ = std::move(part);
    reduce.granule_ = granule;
    return reduce;
  }

  explicit operator bool() const { return whole_ || part_; }
  // Combines the whole message.
  void operator()(std::span<const std::byte> incoming) const {
    if (part_) {
      part_(incoming, 0);
    } else {
      whole_(incoming);
    }
  }
  // Parts: whether they may be combined separately, in what unit, and one of them.
  bool by_parts() const { return static_cast<bool>(part_); }
  std::size_t granule() const { return granule_; }
  void combine_part(std::span<const std::byte> part, std::size_t offset) const {
    part_(part, offset);
  }

 private:
  Whole whole_;
  Part part_;
  std::size_t granule_ = 0;
};

// Spans must stay valid until the request completes (or is cancelled). Implementations
// throw TransportError for a failure they detect (size mismatch, peer failed, ...).
//
// A backend implements rank(), size(), isend(), irecv(), do_wait_some() and do_cancel(),
// and may override irecv_reduce(), isendv(), irecvv() and abort(). wait_some() and cancel() are
// non-virtual so that the default irecv_reduce() can finish its staged reductions in one place.
//
// One Transport object belongs to one rank and is used by one thread at a time.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Rank rank() const = 0;
  virtual Rank size() const = 0;
  // The backend, as tuning tables name it ("threads", "mpi"); empty for others (tests').
  virtual std::string_view backend() const { return {}; }
  // Which node each rank runs on, where the transport knows (MPI: MPI_Comm_split_type
  // SHARED at construction); nullopt otherwise (threads: one process).
  virtual std::optional<Placement> placement() const { return std::nullopt; }
  // Messages of at least this many bytes between two ranks of one node go through the
  // backend's own same-node channel (MPI: the shared-memory arena, from
  // MpiTransport::Options::shm_min_bytes); nullopt where it has none.
  virtual std::optional<std::size_t> same_node_channel_min_bytes() const { return std::nullopt; }
  virtual RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) = 0;
  virtual RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) = 0;
  // Receives `bytes` bytes and hands them to `reduce`. The default receives into a
  // temporary buffer (owned by the transport until completion) and calls `reduce` inside
  // the wait_some() that reports the completion; a backend that can read the sender's
  // memory (threads) overrides it to combine in place with no extra copy.
  virtual RequestId irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce);
  // A vectored message (a schedule's SendSlices / RecvSlices): one message whose bytes lie in
  // several spans on this side, in order. isendv sends the concatenation of `parts`; irecvv
  // splits the incoming message over `parts` (its size must equal their total). On the wire
  // it is one message of the total size, matched by any isend / irecv / irecv_reduce /
  // vectored call of that size on the other side. `parts` itself need only live during the
  // call; the memory it lists must stay valid until the request completes. Parts may be
  // empty. The defaults stage through one buffer (isendv: gathered, then isend; irecvv:
  // received as irecv_reduce does, then scattered), so they cost one extra copy; a backend
  // overrides them to move the bytes between the parts and the wire directly (threads: the
  // copy goes straight between the two ranks' memory; MPI: a derived datatype).
  virtual RequestId isendv(Rank to, MsgKey key, std::span<const std::span<const std::byte>> parts);
  virtual RequestId irecvv(Rank from, MsgKey key, std::span<const std::span<std::byte>> parts);
  // Blocks until at least one request completes or `timeout` expires (then appends
  // nothing). Appends to `done` the ids of the requests completed since the last call.
  // Throws TransportError when a request failed or the backend gave up (e.g. another rank
  // aborted the world).
  void wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done);
  // The same, returning the ids.
  std::vector<RequestId> wait_some(std::chrono::milliseconds timeout);
  // Withdraws requests that have not been reported complete: when cancel() returns, the
  // transport no longer reads or writes their spans (a request that was already being
  // matched finishes first). Their completions may still be reported by a later wait_some()
  // and are to be ignored. The executor calls it before unwinding after a failure.
  void cancel(std::span<const RequestId> ids);
  // Called by the executor with the description of what it is waiting for when it gives up,
  // so that a backend can tell the other ranks (the thread world aborts them).
  virtual void abort(const std::string& reason) { (void)reason; }
  // Cooperative progress. The executor attaches its execution before its first op and
  // detaches it after its last (or after cancelling, when it fails). A backend whose ranks
  // share one address space and may outnumber the CPUs (threads) may then let a waiting
  // rank advance other ranks' attached executions, so that a collective completes without
  // a scheduling round per message. Between attach and detach the executor's state belongs
  // to whoever holds the rank's execution: its own thread, except while it waits in
  // wait_some() with a positive timeout. The defaults do nothing.
  virtual void attach(Progress& progress) { (void)progress; }
  virtual void detach() {}
  // From the next message on, the caller may have several collectives in flight at once
  // (nonblocking collectives): messages must match on their epoch, not only on their seq.
  // Every rank calls it at the same point of its sequence of collectives. A backend that
  // always matches on the whole key (threads) does nothing.
  virtual void expect_overlapping_calls() {}
  // Why another thread may not advance this transport's requests while the rank's own
  // thread does other work (a progress thread: CommOptions::progress_thread; the two never
  // use the transport at the same time), or "" when it may.
  virtual std::string why_no_progress_thread() const { return {}; }

 protected:
  // The backend halves of wait_some() and cancel() (same contracts).
  virtual void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) = 0;
  virtual void do_cancel(std::span<const RequestId> ids) = 0;

 private:
  // A RecvReduce of the default irecv_reduce() (or RecvSlices of the default irecvv()): the
  // temporary buffer and the combine step. The default isendv() keeps its gathered copy here
  // too, with no combine step: the buffer is released when the send completes.
  // Kept in request order (backends hand out increasing ids; otherwise found by a scan);
  // finished entries are dropped in batches, and their buffers are reused, so a
  // small reduction costs no allocation once the first call has run.
  struct StagingBuffer {
    std::unique_ptr<std::byte[]> data;  // not initialized: the message overwrites it
    std::size_t capacity = 0;
  };
  struct StagedReduce {
    RequestId id = 0;
    bool live = true;  // false: finished (its id stays, for the search)
    StagingBuffer buffer;
    std::size_t bytes = 0;
    ReduceInto reduce;  // null: a staged send
  };
  // A staging buffer of at least `bytes` (a spare one if one is large enough).
  StagingBuffer take_staging_buffer(std::size_t bytes);
  // Records a staged request (its id set).
  RequestId add_staged(StagedReduce staged);
  // The staged entry of request `id`, or null.
  StagedReduce* find_staged(RequestId id);
  void drop_finished_staged();
  std::vector<StagedReduce> staged_;
  std::size_t staged_live_ = 0;
  bool staged_sorted_ = true;
  std::vector<StagingBuffer> spare_buffers_;
};

}  // namespace optcoll
