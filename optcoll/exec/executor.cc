// SPDX-License-Identifier: Apache-2.0
// File: the generic schedule interpreter. It checks the call, binds the schedule's buffers to
// memory, and then runs this rank's DAG: a count of unfinished dependencies per op, a queue
// of ready ops (local ones run inline, messages go to the Transport), and wait_some() to
// learn which messages completed. Failures are raised once, at the boundary, with the list
// of what this rank was waiting for.
#include "optcoll/exec/executor.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"

namespace optcoll {
namespace {

using Clock = std::chrono::steady_clock;

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

// Everything about the call that does not depend on progress, checked before any message.
void check_call(const Schedule& schedule, const Transport& transport, BufferBinding buffers,
                const Datatype& type, const ReduceOp& op, bool known_well_formed) {
  if (!known_well_formed) require_well_formed(schedule);
  const Rank me = transport.rank();
  if (schedule.spec.nranks != transport.size()) {
    throw_invalid("schedule '{}' is for {} ranks but the transport has {}", schedule.algorithm,
                  schedule.spec.nranks, transport.size());
  }
  OPTCOLL_CHECK(me >= 0 && me < transport.size(), "transport rank {} out of range for size {}", me,
                transport.size());
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
  const Layout layout(schedule.spec);
  check_buffer(buffers.input.size(), layout.input_count(me), type, me, "input");
  check_buffer(buffers.output.size(), layout.output_count(me), type, me, "output");
  // No in-place mode (docs/design.md): an input that overlaps the output would be overwritten
  // before it is sent, silently (allgather/linear with the input at the output's start).
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
  const RankProgram& program = schedule.ranks[static_cast<std::size_t>(me)];
  checked_bytes(program.scratch_count, type.bytes, "scratch");
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const Action& action = program.ops[i].action;
    const Slice* written = nullptr;
    if (const auto* recv = std::get_if<Recv>(&action)) written = &recv->dst;
    if (const auto* recv_reduce = std::get_if<RecvReduce>(&action)) written = &recv_reduce->dst;
    if (const auto* copy = std::get_if<Copy>(&action)) written = &copy->dst;
    if (const auto* reduce = std::get_if<Reduce>(&action)) written = &reduce->dst;
    if (written != nullptr && written->buf == Buf::kInput) {
      throw_invalid("{}: writes into the (read-only) input buffer",
                    describe_op(schedule, me, static_cast<OpId>(i)));
    }
  }
}

// Runs one rank's program. Not copyable: the ReduceInto callbacks handed to the transport
// point at it.
class Interpreter {
 public:
  Interpreter(const Schedule& schedule, Transport& transport, BufferBinding buffers,
              const Datatype& type, const ReduceOp& op, const ExecOptions& options)
      : schedule_(schedule),
        program_(schedule.ranks[static_cast<std::size_t>(transport.rank())]),
        transport_(transport),
        me_(transport.rank()),
        op_(op),
        options_(options),
        elem_bytes_(type.bytes),
        input_(buffers.input),
        output_(buffers.output),
        scratch_(std::make_unique<std::byte[]>(  // value-initialized: zeroed
            static_cast<std::size_t>(program_.scratch_count) * type.bytes)) {}

  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Withdraws the requests still in flight after a failure, so that no backend writes into
  // the scratch (or reads the caller's buffers) once this frame unwinds.
  ~Interpreter() {
    if (in_flight_.empty()) return;
    std::vector<RequestId> ids;
    ids.reserve(in_flight_.size());
    for (const auto& entry : in_flight_) ids.push_back(entry.first);
    try {
      transport_.cancel(ids);
    } catch (...) {  // NOLINT(bugprone-empty-catch): already failing; the first error wins
    }
  }

  void run() {
    bool finished = false;
    try {
      finished = progress();
    } catch (const TransportError& e) {
      throw TransportError(
          fmt::format("{}; rank {} was waiting on: {}", e.what(), me_, pending_description()));
    }
    if (!finished) {
      const auto waited =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_progress_);
      const std::string reason =
          fmt::format("rank {} timed out: no progress for {} ms; waiting on: {}", me_,
                      waited.count(), pending_description());
      transport_.abort(reason);
      throw TransportError(reason);
    }
  }

 private:
  // Runs the DAG to completion (true) or until nothing completes for options_.timeout.
  bool progress() {
    const auto n = program_.ops.size();
    build_dependents();
    find_fusions();
    for (std::size_t i = 0; i < n; ++i) {
      if (deps_left_[i] == 0) ready_.push_back(static_cast<OpId>(i));
    }
    last_progress_ = Clock::now();
    while (true) {
      for (std::size_t next = 0; next < ready_.size(); ++next) issue(ready_[next]);
      ready_.clear();
      if (done_ == n) return true;
      OPTCOLL_CHECK(!in_flight_.empty(), "rank {}: {} ops can never become ready", me_, n - done_);
      const auto deadline = last_progress_ + options_.timeout;
      const auto now = Clock::now();
      if (now >= deadline) return false;
      const auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
      const std::vector<RequestId> completed = transport_.wait_some(remaining);
      bool advanced = false;
      for (const RequestId id : completed) {
        const auto it = in_flight_.find(id);
        if (it == in_flight_.end()) continue;  // from an earlier, abandoned execution
        const OpId op = it->second;
        in_flight_.erase(it);
        complete(op);
        advanced = true;
      }
      if (advanced) last_progress_ = Clock::now();
    }
  }

  void build_dependents() {
    const auto n = program_.ops.size();
    deps_left_.resize(n);
    dependent_begin_.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& after = program_.ops[i].after;
      deps_left_[i] = static_cast<std::int32_t>(after.size());
      for (const OpId d : after) ++dependent_begin_[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) dependent_begin_[i + 1] += dependent_begin_[i];
    dependents_.resize(dependent_begin_[n]);
    std::vector<std::size_t> fill(dependent_begin_.begin(), dependent_begin_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      for (const OpId d : program_.ops[i].after) {
        dependents_[fill[static_cast<std::size_t>(d)]++] = static_cast<OpId>(i);
      }
    }
  }

  // Finds each Copy C whose only dependent is a reduction R into exactly C's destination
  // (the usual "start from my own contribution, then combine"): R then combines straight
  // from C's source (dst = incoming (+) src) and C does not run, which saves a pass over
  // the data. Nothing can observe the skipped copy: an op that read C's destination, or
  // wrote its source, would have to depend on C (read-after-write, write-after-read), and C
  // has no dependent but R.
  void find_fusions() {
    const auto n = program_.ops.size();
    fused_copy_.assign(n, kNoOp);
    elided_.assign(n, false);
    for (std::size_t c = 0; c < n; ++c) {
      const auto* copy = std::get_if<Copy>(&program_.ops[c].action);
      if (copy == nullptr || copy->dst.count == 0 || overlaps(copy->src, copy->dst)) continue;
      if (dependent_begin_[c + 1] - dependent_begin_[c] != 1) continue;
      const auto r = static_cast<std::size_t>(dependents_[dependent_begin_[c]]);
      const Action& action = program_.ops[r].action;
      const Slice* dst = nullptr;
      if (const auto* recv_reduce = std::get_if<RecvReduce>(&action)) dst = &recv_reduce->dst;
      if (const auto* reduce = std::get_if<Reduce>(&action)) {
        if (!overlaps(reduce->src, copy->dst)) dst = &reduce->dst;
      }
      if (dst == nullptr || *dst != copy->dst || fused_copy_[r] != kNoOp) continue;
      fused_copy_[r] = static_cast<OpId>(c);
      elided_[c] = true;
    }
  }

  static bool overlaps(const Slice& a, const Slice& b) {
    return a.buf == b.buf && a.offset < b.end() && b.offset < a.end();
  }

  // dst = other (+) dst, or (with a fused copy) dst = other (+) the copy's source; `other`
  // on the left if other_on_left.
  void reduce_to(OpId id, const std::byte* other, const Slice& dst, bool other_on_left) const {
    const OpId fused = fused_copy_[static_cast<std::size_t>(id)];
    std::byte* out = write_ptr(dst);
    if (fused == kNoOp) {
      reduce_into(op_, other, out, dst.count, other_on_left);
      return;
    }
    const auto& copy = std::get<Copy>(program_.ops[static_cast<std::size_t>(fused)].action);
    const std::byte* start = read_ptr(copy.src);
    if (other_on_left) {
      op_.combine(other, start, out, dst.count);
    } else {
      op_.combine(start, other, out, dst.count);
    }
  }

  void complete(OpId id) {
    ++done_;
    const auto i = static_cast<std::size_t>(id);
    for (std::size_t k = dependent_begin_[i]; k < dependent_begin_[i + 1]; ++k) {
      const OpId next = dependents_[k];
      if (--deps_left_[static_cast<std::size_t>(next)] == 0) ready_.push_back(next);
    }
  }

  std::size_t bytes_of(const Slice& slice) const {
    return static_cast<std::size_t>(slice.count) * elem_bytes_;
  }

  const std::byte* read_ptr(const Slice& slice) const {
    const std::size_t offset = static_cast<std::size_t>(slice.offset) * elem_bytes_;
    switch (slice.buf) {
      case Buf::kInput:
        return input_.data() + offset;
      case Buf::kOutput:
        return output_.data() + offset;
      case Buf::kScratch:
        return scratch_.get() + offset;
    }
    return nullptr;
  }

  std::byte* write_ptr(const Slice& slice) const {
    const std::size_t offset = static_cast<std::size_t>(slice.offset) * elem_bytes_;
    switch (slice.buf) {
      case Buf::kInput:
        break;  // refused by check_call
      case Buf::kOutput:
        return output_.data() + offset;
      case Buf::kScratch:
        return scratch_.get() + offset;
    }
    OPTCOLL_CHECK(false, "rank {}: write into the input buffer", me_);
  }

  MsgKey key_of(const Op& op) const { return MsgKey{options_.epoch, op.seq}; }

  // Combines an incoming message into the destination of RecvReduce `id`. May run on
  // another thread (the sender's, in the thread backend): it reads only what never changes
  // during the execution.
  void combine_incoming(OpId id, std::span<const std::byte> incoming) const {
    const auto& recv = std::get<RecvReduce>(program_.ops[static_cast<std::size_t>(id)].action);
    OPTCOLL_CHECK(incoming.size() == bytes_of(recv.dst),
                  "rank {} op {}: {} incoming bytes for a {}-byte reduction", me_, id,
                  incoming.size(), bytes_of(recv.dst));
    reduce_to(id, incoming.data(), recv.dst, recv.incoming == Side::kLeft);
  }

  void issue(OpId id) {
    const Op& op = program_.ops[static_cast<std::size_t>(id)];
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<A, Send>) {
            const RequestId request =
                transport_.isend(a.peer, key_of(op), {read_ptr(a.src), bytes_of(a.src)});
            in_flight_.emplace(request, id);
          } else if constexpr (std::is_same_v<A, Recv>) {
            const RequestId request =
                transport_.irecv(a.peer, key_of(op), {write_ptr(a.dst), bytes_of(a.dst)});
            in_flight_.emplace(request, id);
          } else if constexpr (std::is_same_v<A, RecvReduce>) {
            const RequestId request =
                transport_.irecv_reduce(a.peer, key_of(op), bytes_of(a.dst),
                                        [this, id](std::span<const std::byte> incoming) {
                                          combine_incoming(id, incoming);
                                        });
            in_flight_.emplace(request, id);
          } else if constexpr (std::is_same_v<A, Copy>) {
            if (a.src.count > 0 && !elided_[static_cast<std::size_t>(id)]) {
              // memmove: a hand-written schedule may copy within one buffer.
              std::memmove(write_ptr(a.dst), read_ptr(a.src), bytes_of(a.src));
            }
            complete(id);
          } else {
            static_assert(std::is_same_v<A, Reduce>);
            if (a.src.count > 0) reduce_to(id, read_ptr(a.src), a.dst, a.src_side == Side::kLeft);
            complete(id);
          }
        },
        op.action);
  }

  // The ops in flight, in program order, and how many have not started.
  std::string pending_description() const {
    std::vector<OpId> ids;
    ids.reserve(in_flight_.size());
    for (const auto& entry : in_flight_) ids.push_back(entry.second);
    std::sort(ids.begin(), ids.end());
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

  const Schedule& schedule_;
  const RankProgram& program_;
  Transport& transport_;
  const Rank me_;
  const ReduceOp& op_;
  const ExecOptions& options_;
  const std::size_t elem_bytes_;
  const std::span<const std::byte> input_;
  const std::span<std::byte> output_;
  const std::unique_ptr<std::byte[]> scratch_;  // zeroed

  std::vector<std::int32_t> deps_left_;
  std::vector<std::size_t> dependent_begin_;  // CSR: dependents of op i
  std::vector<OpId> dependents_;
  std::vector<OpId> fused_copy_;  // per reduction: the Copy folded into it, or kNoOp
  std::vector<bool> elided_;      // per Copy: folded into its reduction, not run
  std::vector<OpId> ready_;
  std::unordered_map<RequestId, OpId> in_flight_;
  std::size_t done_ = 0;
  Clock::time_point last_progress_;
};

}  // namespace

void execute(const Schedule& schedule, Transport& transport, BufferBinding buffers,
             const Datatype& type, const ReduceOp& op, const ExecOptions& options) {
  if (options.timeout.count() <= 0) {  // with none, the first wait would fail after sends
    throw_invalid("rank {}: the execution timeout must be positive, got {} ms", transport.rank(),
                  options.timeout.count());
  }
  check_call(schedule, transport, buffers, type, op, options.known_well_formed);
  Interpreter interpreter(schedule, transport, buffers, type, op, options);
  interpreter.run();
}

}  // namespace optcoll
