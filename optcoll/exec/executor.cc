// SPDX-License-Identifier: Apache-2.0
// File: the generic schedule interpreter. It checks the call, binds the schedule's buffers to
// memory, and then runs this rank's DAG: a count of unfinished dependencies per op, a queue
// of ready ops (local ones run inline, messages go to the Transport), and wait_some() to
// learn which messages completed. Failures are raised once, at the boundary, with the list
// of what this rank was waiting for.
#include "optcoll/exec/executor.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "optcoll/exec/wait_error.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"

namespace optcoll {
namespace {

// Pending ops named in an error message; the rest are counted.
constexpr std::size_t kMaxDescribedOps = 64;

// count * elem_bytes, or an error when it does not fit in size_t.
std::size_t checked_bytes(Count count, std::size_t elem_bytes, std::string_view what) {
  const auto n = static_cast<std::size_t>(count);
  if (count < 0 || (elem_bytes != 0 && n > std::numeric_limits<std::size_t>::max() / elem_bytes)) {
    throw_invalid("{}: {} elements of {} bytes do not fit in memory", what, count, elem_bytes);
  }
  return n * elem_bytes;
}

void check_buffer(std::size_t actual_bytes, Count expected_count, const Datatype& type, Rank me,
                  std::string_view buffer) {
  const std::size_t expected = checked_bytes(expected_count, type.bytes, buffer);
  if (actual_bytes != expected) {
    throw_invalid("rank {}: {} buffer holds {} bytes, expected {} ({} x {}-byte {})", me, buffer,
                  actual_bytes, expected, expected_count, type.bytes, type.name);
  }
}

// The checks of one run that depend on the transport, the datatype and the operator (the
// rest was checked when the Execution was made; the buffers by Execution::check_run).
void check_call(const Schedule& schedule, Rank rank, const Transport& transport,
                const Datatype& type, const ReduceOp& op) {
  const Rank me = transport.rank();
  if (schedule.spec.nranks != transport.size()) {
    throw_invalid("schedule '{}' is for {} ranks but the transport has {}", schedule.algorithm,
                  schedule.spec.nranks, transport.size());
  }
  if (me != rank) {
    throw_invalid("an execution prepared for rank {} run by transport rank {}", rank, me);
  }
  if (type.bytes == 0) throw_invalid("datatype '{}' has no size", type.name);
  if (op.operand != BuiltinType::kUser && op.operand != type.builtin) {
    throw_invalid("operator '{}' was made for another element type than '{}'", op.name, type.name);
  }
  if (is_reduction(schedule.spec.kind)) {
    if (!op.combine) throw_invalid("operator '{}' has no combine function", op.name);
    if (schedule.spec.commutative && !op.commutative) {
      throw_invalid(
          "schedule '{}' assumes a commutative operator, but '{}' is not commutative "
          "(build it with spec.commutative = false)",
          schedule.algorithm, op.name);
    }
  }
}

// No in-place mode (docs/design.md, "Collective kinds and their semantics"): an input that
// overlaps the output would be overwritten before it is sent, silently (allgather/linear with
// the input at the output's start).
void check_disjoint(BufferBinding buffers, Rank me) {
  const std::less<const std::byte*> before;
  const std::byte* in = buffers.input.data();
  const std::byte* out = buffers.output.data();
  if (!buffers.input.empty() && !buffers.output.empty() &&
      before(in, out + buffers.output.size()) && before(out, in + buffers.input.size())) {
    throw_invalid(
        "rank {}: the input and output buffers overlap (there is no in-place mode: "
        "pass separate buffers)",
        me);
  }
}

}  // namespace

// Runs one rank's program once, on the Execution's prepared graph and working memory. Not
// copyable: the ReduceInto callbacks handed to the transport point at it. While its thread
// waits, the transport may let other threads advance() it (Transport::attach).
class Interpreter final : public Progress {
 public:
  Interpreter(Execution& execution, Transport& transport, BufferBinding buffers,
              const Datatype& type, const ReduceOp& op, const ExecOptions& options)
      : x_(execution),
        schedule_(execution.schedule_),
        program_(schedule_.ranks[static_cast<std::size_t>(execution.rank_)]),
        transport_(transport),
        me_(execution.rank_),
        op_(op),
        options_(options),
        elem_bytes_(type.bytes),
        read_base_{buffers.input.data(), buffers.output.data(), nullptr},
        write_base_{nullptr, buffers.output.data(), nullptr} {
    const std::size_t scratch = static_cast<std::size_t>(program_.scratch_count) * type.bytes;
    if (scratch > x_.scratch_bytes_) {
      x_.scratch_.reset();
      x_.scratch_ = std::make_unique<std::byte[]>(scratch);  // value-initialized: zeroed
      x_.scratch_bytes_ = scratch;
    }
    read_base_[static_cast<std::size_t>(Buf::kScratch)] = x_.scratch_.get();
    write_base_[static_cast<std::size_t>(Buf::kScratch)] = x_.scratch_.get();
    reset();
  }

  // Makes a finished interpreter run again, with the same buffers, datatype and operator
  // (a persistent request's next start; the options may have changed: a new epoch).
  void restart() {
    OPTCOLL_CHECK(finished() && in_flight_count_ == 0, "rank {}: restart of an unfinished run",
                  me_);
    done_ = 0;
    sorted_ = true;
    released_ = false;
    failure_ = nullptr;
    progress_count_ = 0;
    reset();
  }

  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Withdraws the requests still in flight after a failure, so that no backend writes into
  // the scratch (or reads the caller's buffers) once this run unwinds; then detaches.
  ~Interpreter() {
    if (in_flight_count_ > 0) {
      try {
        transport_.cancel(in_flight_requests());
      } catch (...) {  // NOLINT(bugprone-empty-catch): already failing; the first error wins
      }
    }
    if (attached_) transport_.detach();
    release();
  }

  // Nonblocking use (ExecutionRun): issues what is ready without waiting.
  void begin() { absorb({}); }

  // Takes in the completions in `completed` (other requests' ids are ignored), then issues
  // what became ready; returns whether anything changed.
  bool absorb(std::span<const RequestId> completed) {
    const bool took = take_completed(completed);
    const bool issued = issue_ready();
    OPTCOLL_CHECK(finished() || in_flight_count_ > 0, "rank {}: {} ops can never become ready", me_,
                  program_.ops.size() - done_);
    if (finished()) release();  // the Execution may run again while this object lives on
    return took || issued;
  }

  bool finished() const { return done_ == program_.ops.size(); }
  const Execution& execution() const { return x_; }
  bool waiting() const { return in_flight_count_ > 0; }

  // What a failed or timed-out wait says about this rank: `cause` and the messages in flight.
  WaitError wait_error(const std::string& cause, bool timed_out) const {
    return WaitError(
        fmt::format("{}; rank {} was waiting on: {}", cause, me_, pending_description()), me_,
        pending_peers(), timed_out);
  }
  WaitError timeout_error() const {
    return WaitError(fmt::format("rank {} timed out: no progress for {} ms; waiting on: {}", me_,
                                 options_.timeout.count(), pending_description()),
                     me_, pending_peers(), /*timed_out=*/true);
  }

  void run() {
    if (!x_.has_communication_) {  // local ops only: nothing to wait for, nobody to help
      issue_ready();
      OPTCOLL_CHECK(done_ == program_.ops.size(), "rank {}: {} ops can never become ready", me_,
                    program_.ops.size() - done_);
      return;
    }
    transport_.attach(*this);
    attached_ = true;
    bool finished = false;
    try {
      finished = progress();
    } catch (const TransportError& e) {
      throw wait_error(e.what(), /*timed_out=*/false);
    }
    if (!finished) {
      WaitError error = timeout_error();
      transport_.abort(error.what());
      throw error;
    }
  }

 private:
  // Runs the DAG to completion (true) or until nothing completes for options_.timeout. No
  // clock is read: a wait that brings nothing has waited its whole timeout (a transport
  // returns early only with completions, or when a helper advanced this execution during
  // the wait, which counts as progress).
  bool progress() {
    const auto n = program_.ops.size();
    while (true) {
      issue_ready();
      if (done_ == n) return true;
      OPTCOLL_CHECK(in_flight_count_ > 0, "rank {}: {} ops can never become ready", me_, n - done_);
      const std::uint64_t before = progress_count_;
      x_.completed_.clear();
      // Other threads may advance() this execution while the transport waits.
      transport_.wait_some(options_.timeout, x_.completed_);
      if (failure_) std::rethrow_exception(failure_);
      if (take_completed(x_.completed_)) ++progress_count_;
      if (progress_count_ == before) return false;
    }
  }

  // Progress: what another thread runs on this rank's behalf (Transport::attach).
  bool advance() noexcept override {
    if (failure_) return false;
    try {
      bool changed = false;
      while (true) {
        changed = issue_ready() || changed;
        if (done_ == program_.ops.size()) break;
        x_.completed_.clear();
        transport_.wait_some(std::chrono::milliseconds{0}, x_.completed_);
        if (!take_completed(x_.completed_)) break;
        changed = true;
      }
      if (changed) ++progress_count_;
      return changed;
    } catch (...) {
      failure_ = std::current_exception();  // for this rank's own thread to raise
      return true;
    }
  }

  // Issues every ready op (which may make more ready); returns whether there was any.
  // Messages go first, then local copies and reductions: a transfer that the peer (or the
  // network) can carry on with while this rank computes overlaps with the computation.
  // Sends go before receives: a peer may be waiting for them, and posting a receive first
  // would delay the send by the receive's own cost (at p = 2 that is on every small call's
  // critical path).
  bool issue_ready() {
    if (x_.masked_) return issue_ready_masked();
    auto& ready = x_.ready_;
    if (ready.empty()) return false;
    auto& batch = x_.batch_;
    while (!ready.empty()) {
      batch.swap(ready);  // local ops append what they make ready to `ready`
      const auto& steps = x_.steps_;
      for (const OpId id : batch) {
        if (is_send(steps[static_cast<std::size_t>(id)].kind)) issue(id);
      }
      for (const OpId id : batch) {
        const Execution::Step& step = steps[static_cast<std::size_t>(id)];
        if (step.communicates && !is_send(step.kind)) issue(id);
      }
      for (const OpId id : batch) {
        if (!steps[static_cast<std::size_t>(id)].communicates) issue(id);
      }
      batch.clear();
    }
    return true;
  }

  // issue_ready() for a masked program: the same order (sends, receives, local ops), the
  // ready ops found from the masks among the candidates only. An op becomes ready when its
  // last dependency completes, which makes it a candidate (complete()); a candidate still
  // waiting for another dependency is dropped until that one completes.
  bool issue_ready_masked() {
    bool issued = false;
    while (true) {
      std::uint64_t ready = 0;
      for (std::uint64_t left = candidates_ & unissued_; left != 0; left &= left - 1) {
        const auto i = static_cast<std::size_t>(std::countr_zero(left));
        if ((x_.dependency_masks_[i] & ~done_ops_) == 0) ready |= std::uint64_t{1} << i;
      }
      candidates_ = 0;
      if (ready == 0) return issued;
      issued = true;
      unissued_ &= ~ready;
      issue_each(ready & x_.sends_);
      issue_each(ready & x_.receives_);
      if ((ready & x_.locals_) == 0) return true;  // only a local op can make more ready now
      issue_each(ready & x_.locals_);
    }
  }

  void issue_each(std::uint64_t ops) {
    for (; ops != 0; ops &= ops - 1) issue(static_cast<OpId>(std::countr_zero(ops)));
  }

  // Completes the ops of the requests in `completed`; returns whether there was any.
  bool take_completed(std::span<const RequestId> completed) {
    bool advanced = false;
    for (const RequestId id : completed) {
      const OpId op = take_in_flight(id);
      if (op == kNoOp) continue;  // another run's, or from an earlier, abandoned one
      complete(op);
      advanced = true;
    }
    return advanced;
  }

  void add_in_flight(RequestId request, OpId op) {
    if (x_.masked_) {
      x_.request_of_[static_cast<std::size_t>(op)] = request;
      waiting_ops_ |= std::uint64_t{1} << op;
      ++in_flight_count_;
      return;
    }
    auto& in_flight = x_.in_flight_;
    if (!in_flight.empty() && request <= in_flight.back().request) sorted_ = false;
    in_flight.push_back({request, op});
    ++in_flight_count_;
  }

  // The op of an in-flight request, which is no longer in flight; kNoOp if it is unknown.
  // Requests are found by binary search while the transport hands out increasing ids (both
  // backends do), by a scan otherwise; completed entries are dropped in batches.
  OpId take_in_flight(RequestId request) {
    if (x_.masked_) {
      for (std::uint64_t left = waiting_ops_; left != 0; left &= left - 1) {
        const int op = std::countr_zero(left);
        if (x_.request_of_[static_cast<std::size_t>(op)] != request) continue;
        waiting_ops_ &= ~(std::uint64_t{1} << op);
        --in_flight_count_;
        return static_cast<OpId>(op);
      }
      return kNoOp;
    }
    auto& in_flight = x_.in_flight_;
    auto it = in_flight.end();
    if (sorted_) {
      it = std::lower_bound(
          in_flight.begin(), in_flight.end(), request,
          [](const Execution::InFlight& e, RequestId id) { return e.request < id; });
      if (it != in_flight.end() && it->request != request) it = in_flight.end();
    } else {
      it = std::find_if(in_flight.begin(), in_flight.end(),
                        [request](const Execution::InFlight& e) { return e.request == request; });
    }
    if (it == in_flight.end() || it->op == kNoOp) return kNoOp;
    const OpId op = it->op;
    it->op = kNoOp;
    --in_flight_count_;
    if (in_flight.size() > 32 && in_flight_count_ < in_flight.size() / 2) {
      std::erase_if(in_flight, [](const Execution::InFlight& e) { return e.op == kNoOp; });
    }
    return op;
  }

  // The reduction `step`: dst = other (+) dst, or (with a folded copy) dst = other (+)
  // start; `other` on the left if step.other_on_left. Of elements [first, first + count)
  // of dst (and start) only, `other` being their part.
  void reduce_to(const Execution::Step& step, const std::byte* other) const {
    reduce_to(step, other, 0, step.dst.count);
  }
  void reduce_to(const Execution::Step& step, const std::byte* other, Count first,
                 Count count) const {
    const std::size_t skip = static_cast<std::size_t>(first) * elem_bytes_;
    std::byte* out = write_ptr(step.dst) + skip;
    if (!step.fused) {
      reduce_into(op_, other, out, count, step.other_on_left);
      return;
    }
    const std::byte* start = read_ptr(step.start) + skip;
    if (step.other_on_left) {
      op_.combine(other, start, out, count);
    } else {
      op_.combine(start, other, out, count);
    }
  }

  void complete(OpId id) {
    ++done_;
    if (x_.masked_) {
      done_ops_ |= std::uint64_t{1} << id;
      candidates_ |= x_.dependent_masks_[static_cast<std::size_t>(id)];
      return;
    }
    const auto i = static_cast<std::size_t>(id);
    for (std::size_t k = x_.dependent_begin_[i]; k < x_.dependent_begin_[i + 1]; ++k) {
      const OpId next = x_.dependents_[k];
      if (--x_.deps_left_[static_cast<std::size_t>(next)] == 0) x_.ready_.push_back(next);
    }
  }

  std::size_t bytes_of(const Slice& slice) const {
    return static_cast<std::size_t>(slice.count) * elem_bytes_;
  }

  const std::byte* read_ptr(const Slice& slice) const {
    return read_base_[static_cast<std::size_t>(slice.buf)] +
           static_cast<std::size_t>(slice.offset) * elem_bytes_;
  }

  // (No step writes the input: the Execution refused such a program.)
  std::byte* write_ptr(const Slice& slice) const {
    return write_base_[static_cast<std::size_t>(slice.buf)] +
           static_cast<std::size_t>(slice.offset) * elem_bytes_;
  }

  MsgKey key_of(const Execution::Step& step) const { return MsgKey{options_.epoch, step.seq}; }

  // Combines the part of an incoming message at byte `offset` (the whole message: offset 0
  // and all its bytes) into the destination of RecvReduce `id`. May run on another thread
  // (the sender's, in the thread backend), and on two at once for disjoint parts: it reads
  // only what never changes during the execution.
  void combine_incoming(OpId id, std::span<const std::byte> part, std::size_t offset) const {
    const Execution::Step& step = x_.steps_[static_cast<std::size_t>(id)];
    const std::size_t whole = bytes_of(step.dst);
    OPTCOLL_CHECK(offset <= whole && part.size() <= whole - offset && offset % elem_bytes_ == 0 &&
                      part.size() % elem_bytes_ == 0,
                  "rank {} op {}: {} incoming bytes at offset {} for a {}-byte reduction of "
                  "{}-byte elements",
                  me_, id, part.size(), offset, whole, elem_bytes_);
    reduce_to(step, part.data(), static_cast<Count>(offset / elem_bytes_),
              static_cast<Count>(part.size() / elem_bytes_));
  }

  void issue(OpId id) {
    using Kind = Execution::Step::Kind;
    const Execution::Step& step = x_.steps_[static_cast<std::size_t>(id)];
    switch (step.kind) {
      case Kind::kSend:
        add_in_flight(
            transport_.isend(step.peer, key_of(step), {read_ptr(step.src), bytes_of(step.src)}),
            id);
        return;
      case Kind::kRecv:
        add_in_flight(
            transport_.irecv(step.peer, key_of(step), {write_ptr(step.dst), bytes_of(step.dst)}),
            id);
        return;
      case Kind::kRecvReduce:
        add_in_flight(transport_.irecv_reduce(
                          step.peer, key_of(step), bytes_of(step.dst),
                          ReduceInto::by_parts(
                              [this, id](std::span<const std::byte> part, std::size_t offset) {
                                combine_incoming(id, part, offset);
                              },
                              elem_bytes_)),
                      id);
        return;
      case Kind::kSendSlices:
        add_in_flight(send_slices(step), id);
        return;
      case Kind::kRecvSlices:
        add_in_flight(recv_slices(step), id);
        return;
      case Kind::kCopy:
        // memmove: a hand-written schedule may copy within one buffer.
        if (!step.skip) std::memmove(write_ptr(step.dst), read_ptr(step.src), bytes_of(step.src));
        break;
      case Kind::kReduce:
        if (!step.skip) reduce_to(step, read_ptr(step.src));
        break;
    }
    complete(id);
  }

  // Whether a step is a message this rank sends (Send, SendSlices): sends are issued first.
  static bool is_send(Execution::Step::Kind kind) {
    return kind == Execution::Step::Kind::kSend || kind == Execution::Step::Kind::kSendSlices;
  }

  // A SendSlices: one vectored message from the slices' memory, in order.
  RequestId send_slices(const Execution::Step& step) {
    send_parts_.clear();
    for (const Slice& slice : *step.slices)
      send_parts_.emplace_back(read_ptr(slice), bytes_of(slice));
    return transport_.isendv(step.peer, key_of(step), send_parts_);
  }

  // A RecvSlices: one vectored message split over the slices' memory, in order.
  RequestId recv_slices(const Execution::Step& step) {
    recv_parts_.clear();
    for (const Slice& slice : *step.slices)
      recv_parts_.emplace_back(write_ptr(slice), bytes_of(slice));
    return transport_.irecvv(step.peer, key_of(step), recv_parts_);
  }

  // The ops in flight, in program order, and how many have not started.
  // The peers of the messages in flight, sorted, each once.
  std::vector<Rank> pending_peers() const {
    std::vector<Rank> peers;
    for (const OpId op : in_flight_ops()) {
      const Rank peer = peer_of(program_.ops[static_cast<std::size_t>(op)].action);
      if (peer != kNoRank) peers.push_back(peer);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    return peers;
  }

  std::string pending_description() const {
    const std::vector<OpId> ids = in_flight_ops();
    std::string text;
    for (std::size_t i = 0; i < ids.size() && i < kMaxDescribedOps; ++i) {
      if (i > 0) text += "; ";
      text += describe_op(schedule_, me_, ids[i]);
    }
    if (ids.size() > kMaxDescribedOps) {
      text += fmt::format("; and {} more messages", ids.size() - kMaxDescribedOps);
    }
    if (ids.empty()) text += "no message in flight";
    const std::size_t not_started = program_.ops.size() - done_ - ids.size();
    if (not_started > 0) {
      text += fmt::format(" ({} op{} not started)", not_started, not_started == 1 ? "" : "s");
    }
    return text;
  }

  // The ops whose messages are in flight, in program order.
  std::vector<OpId> in_flight_ops() const {
    std::vector<OpId> ops;
    ops.reserve(in_flight_count_);
    if (x_.masked_) {
      for (std::uint64_t left = waiting_ops_; left != 0; left &= left - 1) {
        ops.push_back(static_cast<OpId>(std::countr_zero(left)));
      }
      return ops;
    }
    for (const auto& entry : x_.in_flight_) {
      if (entry.op != kNoOp) ops.push_back(entry.op);
    }
    std::sort(ops.begin(), ops.end());
    return ops;
  }

  // The requests in flight.
  std::vector<RequestId> in_flight_requests() const {
    std::vector<RequestId> requests;
    requests.reserve(in_flight_count_);
    if (x_.masked_) {
      for (const OpId op : in_flight_ops()) {
        requests.push_back(x_.request_of_[static_cast<std::size_t>(op)]);
      }
      return requests;
    }
    for (const auto& entry : x_.in_flight_) {
      if (entry.op != kNoOp) requests.push_back(entry.request);
    }
    return requests;
  }

  // Takes the Execution and starts its working memory afresh.
  void reset() {
    x_.running_ = true;
    x_.completed_.clear();
    if (x_.masked_) {
      unissued_ = x_.all_ops_;
      candidates_ = x_.all_ops_;  // the first look finds the ops without dependencies
      done_ops_ = 0;
      waiting_ops_ = 0;
      return;
    }
    x_.deps_left_.assign(x_.dependencies_.begin(), x_.dependencies_.end());
    x_.ready_.assign(x_.initially_ready_.begin(), x_.initially_ready_.end());
    x_.batch_.clear();  // a failed run may have left part of a batch
    x_.in_flight_.clear();
  }

  // Gives the Execution back (once): it may run again.
  void release() {
    if (!released_) x_.running_ = false;
    released_ = true;
  }

  Execution& x_;  // the prepared graph and the working memory
  const Schedule& schedule_;
  const RankProgram& program_;
  Transport& transport_;
  const Rank me_;
  const ReduceOp& op_;
  const ExecOptions& options_;
  const std::size_t elem_bytes_;
  // Where each buffer (indexed by Buf) starts, to read and to write (the input only to read).
  std::array<const std::byte*, 3> read_base_;
  std::array<std::byte*, 3> write_base_;
  // The parts of a SendSlices / RecvSlices being issued (the transport copies the list).
  std::vector<std::span<const std::byte>> send_parts_;
  std::vector<std::span<std::byte>> recv_parts_;

  std::size_t done_ = 0;
  std::size_t in_flight_count_ = 0;  // messages in flight
  std::uint64_t unissued_ = 0;       // masked: the ops not issued yet
  std::uint64_t candidates_ = 0;     // masked: the ops that may have become ready since
                                     // the last look (their dependencies completed)
  std::uint64_t done_ops_ = 0;       // masked: the ops completed
  std::uint64_t waiting_ops_ = 0;    // masked: the ops whose messages are in flight
  bool sorted_ = true;               // x_.in_flight_ is in increasing request order
  bool attached_ = false;
  bool released_ = false;             // x_.running_ is no longer this run's
  std::exception_ptr failure_;        // raised by advance() on another thread, for this one
  std::uint64_t progress_count_ = 0;  // bumped whenever a wait or a helper made progress
};

// An op as a run issues it; refuses one that writes the input buffer.
Execution::Step Execution::step_of(const Schedule& schedule, Rank rank, OpId id) {
  using Kind = Step::Kind;
  const Op& op = schedule.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(id)];
  Step step;
  step.seq = op.seq;
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, Send>) {
          step.kind = Kind::kSend;
          step.peer = a.peer;
          step.src = a.src;
        } else if constexpr (std::is_same_v<A, Recv>) {
          step.kind = Kind::kRecv;
          step.peer = a.peer;
          step.dst = a.dst;
        } else if constexpr (std::is_same_v<A, RecvReduce>) {
          step.kind = Kind::kRecvReduce;
          step.peer = a.peer;
          step.dst = a.dst;
          step.other_on_left = a.incoming == Side::kLeft;
        } else if constexpr (std::is_same_v<A, SendSlices>) {
          step.kind = Kind::kSendSlices;
          step.peer = a.peer;
          step.slices = &a.src;
        } else if constexpr (std::is_same_v<A, RecvSlices>) {
          step.kind = Kind::kRecvSlices;
          step.peer = a.peer;
          step.slices = &a.dst;
        } else if constexpr (std::is_same_v<A, Copy>) {
          step.kind = Kind::kCopy;
          step.src = a.src;
          step.dst = a.dst;
          step.skip = a.src.count == 0;
        } else {
          static_assert(std::is_same_v<A, Reduce>);
          step.kind = Kind::kReduce;
          step.src = a.src;
          step.dst = a.dst;
          step.other_on_left = a.src_side == Side::kLeft;
          step.skip = a.src.count == 0;
        }
      },
      op.action);
  step.communicates = is_communication(op.action);
  bool writes_input = step.kind != Kind::kSend && step.kind != Kind::kSendSlices &&
                      step.kind != Kind::kRecvSlices && step.dst.buf == Buf::kInput;
  if (step.kind == Kind::kRecvSlices) {
    writes_input = std::any_of(step.slices->begin(), step.slices->end(),
                               [](const Slice& slice) { return slice.buf == Buf::kInput; });
  }
  if (writes_input) {
    throw_invalid("{}: writes into the (read-only) input buffer", describe_op(schedule, rank, id));
  }
  return step;
}

Execution::Execution(const Schedule& schedule, Rank rank, bool known_well_formed)
    : schedule_(schedule), rank_(rank) {
  if (!known_well_formed) require_well_formed(schedule);
  if (rank < 0 || rank >= schedule.spec.nranks) {
    throw_invalid("rank {} is out of range for schedule '{}' of {} ranks", rank, schedule.algorithm,
                  schedule.spec.nranks);
  }
  const Layout layout = Layout::borrowing(schedule.spec);
  input_count_ = layout.input_count(rank);
  output_count_ = layout.output_count(rank);
  const auto n = schedule.ranks[static_cast<std::size_t>(rank)].ops.size();
  steps_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    steps_.push_back(step_of(schedule, rank, static_cast<OpId>(i)));
    has_communication_ = has_communication_ || steps_.back().communicates;
  }
  link_dependents();
  fold_copies();
  make_masks();
}

void Execution::make_masks() {
  const RankProgram& program = schedule_.ranks[static_cast<std::size_t>(rank_)];
  if (program.ops.size() > kMaskedOps) return;
  masked_ = true;
  dependency_masks_.assign(program.ops.size(), 0);
  dependent_masks_.assign(program.ops.size(), 0);
  request_of_.assign(program.ops.size(), 0);
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    for (const OpId d : program.ops[i].after) {
      dependency_masks_[i] |= std::uint64_t{1} << d;
      dependent_masks_[static_cast<std::size_t>(d)] |= bit;
    }
    all_ops_ |= bit;
    if (steps_[i].kind == Step::Kind::kSend || steps_[i].kind == Step::Kind::kSendSlices) {
      sends_ |= bit;
    } else if (steps_[i].communicates) {
      receives_ |= bit;
    } else {
      locals_ |= bit;
    }
  }
}

// The dependents of each op (CSR) and the number of dependencies each op waits for.
void Execution::link_dependents() {
  const RankProgram& program = schedule_.ranks[static_cast<std::size_t>(rank_)];
  const auto n = program.ops.size();
  dependencies_.resize(n);
  dependent_begin_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& after = program.ops[i].after;
    dependencies_[i] = static_cast<std::int32_t>(after.size());
    if (after.empty()) initially_ready_.push_back(static_cast<OpId>(i));
    for (const OpId d : after) ++dependent_begin_[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) dependent_begin_[i + 1] += dependent_begin_[i];
  dependents_.resize(dependent_begin_[n]);
  std::vector<std::size_t> fill(dependent_begin_.begin(), dependent_begin_.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (const OpId d : program.ops[i].after) {
      dependents_[fill[static_cast<std::size_t>(d)]++] = static_cast<OpId>(i);
    }
  }
}

// Each Copy C whose only dependent is a reduction R into exactly C's destination (the usual
// "start from my own contribution, then combine") is folded into R: R combines straight from
// C's source (dst = incoming (+) src) and C does not run, which saves a pass over the data.
// Nothing can observe the skipped copy: an op that read C's destination, or wrote its
// source, would have to depend on C (read-after-write, write-after-read), and C has no
// dependent but R.
void Execution::fold_copies() {
  const RankProgram& program = schedule_.ranks[static_cast<std::size_t>(rank_)];
  for (std::size_t c = 0; c < steps_.size(); ++c) {
    const auto* copy = std::get_if<Copy>(&program.ops[c].action);
    if (copy == nullptr || dependent_begin_[c + 1] - dependent_begin_[c] != 1) continue;
    const auto r = static_cast<std::size_t>(dependents_[dependent_begin_[c]]);
    Step& reduction = steps_[r];
    if (reduction.fused || !copy_folds_into(*copy, program.ops[r].action)) continue;
    reduction.fused = true;
    reduction.start = steps_[c].src;
    steps_[c].skip = true;
  }
}

void Execution::check_run(const Transport& transport, BufferBinding buffers, const Datatype& type,
                          const ReduceOp& op) {
  check_call(schedule_, rank_, transport, type, op);
  if (type.bytes != checked_elem_bytes_) {
    input_bytes_ = checked_bytes(input_count_, type.bytes, "input");
    output_bytes_ = checked_bytes(output_count_, type.bytes, "output");
    checked_bytes(schedule_.ranks[static_cast<std::size_t>(rank_)].scratch_count, type.bytes,
                  "scratch");
    checked_elem_bytes_ = type.bytes;
  }
  const Rank me = transport.rank();
  if (buffers.input.size() != input_bytes_) {
    check_buffer(buffers.input.size(), input_count_, type, me, "input");
  }
  if (buffers.output.size() != output_bytes_) {
    check_buffer(buffers.output.size(), output_count_, type, me, "output");
  }
  check_disjoint(buffers, me);
}

Execution::~Execution() = default;

void Execution::run(Transport& transport, BufferBinding buffers, const Datatype& type,
                    const ReduceOp& op, const ExecOptions& options) {
  if (options.timeout.count() <= 0) {  // with none, the first wait would fail after sends
    throw_invalid("rank {}: the execution timeout must be positive, got {} ms", transport.rank(),
                  options.timeout.count());
  }
  check_not_running();
  check_run(transport, buffers, type, op);
  Interpreter interpreter(*this, transport, buffers, type, op, options);
  interpreter.run();
}

void Execution::check_not_running() const {
  if (running_) {
    throw_invalid(
        "rank {}: the execution of schedule '{}' is already running (one run at a time: "
        "complete the collective in flight first)",
        rank_, schedule_.algorithm);
  }
}

ExecutionRun::ExecutionRun(Execution& execution, Transport& transport, BufferBinding buffers,
                           const Datatype& type, const ReduceOp& op, const ExecOptions& options)
    : options_(options) {
  if (options_.timeout.count() <= 0) {
    throw_invalid("rank {}: the execution timeout must be positive, got {} ms", transport.rank(),
                  options_.timeout.count());
  }
  execution.check_not_running();
  execution.check_run(transport, buffers, type, op);
  interpreter_ = std::make_unique<Interpreter>(execution, transport, buffers, type, op, options_);
  try {
    interpreter_->begin();
  } catch (const TransportError& e) {
    throw interpreter_->wait_error(e.what(), /*timed_out=*/false);
  }
}

ExecutionRun::~ExecutionRun() = default;

bool ExecutionRun::finished() const { return interpreter_->finished(); }
bool ExecutionRun::waiting() const { return interpreter_->waiting(); }

bool ExecutionRun::absorb(std::span<const RequestId> completed) {
  try {
    return interpreter_->absorb(completed);
  } catch (const WaitError&) {
    throw;
  } catch (const TransportError& e) {
    throw interpreter_->wait_error(e.what(), /*timed_out=*/false);
  }
}

void ExecutionRun::restart(Execution& execution, const ExecOptions& options) {
  OPTCOLL_CHECK(&interpreter_->execution() == &execution, "restart on another execution");
  execution.check_not_running();
  options_ = options;
  interpreter_->restart();
  try {
    interpreter_->begin();
  } catch (const TransportError& e) {
    throw interpreter_->wait_error(e.what(), /*timed_out=*/false);
  }
}

WaitError ExecutionRun::failure(const std::string& cause) const {
  return interpreter_->wait_error(cause, /*timed_out=*/false);
}
WaitError ExecutionRun::timeout() const { return interpreter_->timeout_error(); }

void execute(const Schedule& schedule, Transport& transport, BufferBinding buffers,
             const Datatype& type, const ReduceOp& op, const ExecOptions& options) {
  if (options.timeout.count() <= 0) {
    throw_invalid("rank {}: the execution timeout must be positive, got {} ms", transport.rank(),
                  options.timeout.count());
  }
  if (!options.known_well_formed) require_well_formed(schedule);
  if (schedule.spec.nranks != transport.size()) {
    throw_invalid("schedule '{}' is for {} ranks but the transport has {}", schedule.algorithm,
                  schedule.spec.nranks, transport.size());
  }
  Execution execution(schedule, transport.rank(), /*known_well_formed=*/true);
  execution.run(transport, buffers, type, op, options);
}

}  // namespace optcoll
