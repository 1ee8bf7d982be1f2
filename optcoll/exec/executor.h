// SPDX-License-Identifier: Apache-2.0
// File: the generic schedule interpreter, shared by every backend. It binds the schedule's
// buffers to the caller's memory, allocates scratch, issues every op whose dependencies
// are complete (Copy/Reduce inline, messages through the Transport), and waits.
//
// Three ways to run a schedule: execute() once; an Execution made once per (schedule, rank)
// and run many times (a persistent plan: the Communicator keeps one per call it has seen);
// or an ExecutionRun, a run of an Execution that the caller advances itself, so that
// several collectives can be in flight on one transport (nonblocking collectives:
// optcoll/exec/in_flight.h drives them).
// An Execution does up front everything that does not depend on the buffers (the structural
// checks, the dependency graph in the form the interpreter walks, the copies folded into
// reductions) and keeps its scratch and working memory between runs, so a run costs what the
// schedule's ops cost and little more.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/transport.h"
#include "optcoll/exec/wait_error.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

class Interpreter;  // executor.cc

struct ExecOptions {
  // Give up (throw TransportError naming every pending op) when nothing completes for this
  // long. Also bounds how long a failed peer can leave this rank waiting.
  std::chrono::milliseconds timeout{30000};
  std::uint32_t epoch = 0;  // distinguishes consecutive collectives on one transport
  // The caller has already checked require_well_formed(schedule) (a cached plan, say): skip
  // that pass over every rank's ops, which at p = 64 costs as much as a small collective.
  // The per-rank checks (sizes, buffers, operator) always run.
  bool known_well_formed = false;
};

struct BufferBinding {
  std::span<const std::byte> input;
  std::span<std::byte> output;
};

// One rank's program of a schedule, prepared to run any number of times. The schedule must
// outlive it. One Execution serves one rank and one run at a time.
class Execution {
 public:
  // Checks that the schedule is well formed (unless known_well_formed) and that the rank's
  // program never writes its input buffer (Error(kInvalidArgument) otherwise).
  Execution(const Schedule& schedule, Rank rank, bool known_well_formed = false);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  const Schedule& schedule() const { return schedule_; }
  Rank rank() const { return rank_; }
  Count input_count() const { return input_count_; }    // elements this rank's input holds
  Count output_count() const { return output_count_; }  // ... and its output

  // Runs the program on `transport` (whose rank and size must be this program's). Checks
  // that the buffers hold exactly input_count() / output_count() elements of `type`, do not
  // overlap, and that `op` suits the schedule (Error(kInvalidArgument) otherwise). Transport
  // failures and timeouts throw TransportError naming the pending ops. The scratch buffer
  // is zeroed when it is first allocated and keeps its contents between runs.
  void run(Transport& transport, BufferBinding buffers, const Datatype& type, const ReduceOp& op,
           const ExecOptions& options);
  // Whether a run (run() or an ExecutionRun) is in progress.
  bool running() const { return running_; }

 private:
  friend class Interpreter;
  friend class ExecutionRun;

  // Error(kInvalidArgument) while a run is in progress.
  void check_not_running() const;
  // Checks a run as run() documents it (Error(kInvalidArgument)).
  void check_run(const Transport& transport, BufferBinding buffers, const Datatype& type,
                 const ReduceOp& op);

  const Schedule& schedule_;
  const Rank rank_;
  Count input_count_ = 0;
  Count output_count_ = 0;
  // The dependency graph as the interpreter walks it (CSR: the dependents of op i are
  // dependents_[dependent_begin_[i] .. dependent_begin_[i + 1])), each op's number of
  // dependencies, and the ops that have none.
  std::vector<std::int32_t> dependencies_;
  std::vector<std::size_t> dependent_begin_;
  std::vector<OpId> dependents_;
  std::vector<OpId> initially_ready_;
  // Each op as a run issues it, resolved once here so that a call does no variant dispatch
  // and no lookup: its kind, peer and message sequence number, its slices, its operand
  // order, and for a reduction the Copy folded into it (`start`: dst = other (+) start).
  struct Step {
    enum class Kind : std::uint8_t {
      kSend,
      kRecv,
      kRecvReduce,
      kCopy,
      kReduce,
      kSendSlices,
      kRecvSlices
    };
    Kind kind = Kind::kCopy;
    bool communicates = false;   // Send, Recv, RecvReduce, SendSlices, RecvSlices
    bool skip = false;           // a local op with nothing to do: empty, or a folded Copy
    bool other_on_left = false;  // reductions: the incoming (or src) operand on the left
    bool fused = false;          // reductions: `start` holds the folded Copy's source
    Rank peer = 0;
    std::int32_t seq = 0;
    Slice src;    // Send, Copy, Reduce
    Slice dst;    // Recv, RecvReduce, Copy, Reduce
    Slice start;  // a reduction with a folded Copy
    // SendSlices / RecvSlices: the op's slice list, in the schedule (which outlives this).
    const std::vector<Slice>* slices = nullptr;
  };
  static Step step_of(const Schedule& schedule, Rank rank, OpId id);
  void link_dependents();
  void make_masks();
  void fold_copies();
  std::vector<Step> steps_;
  // Whether any op is a message. A program without messages (p = 1, or a rank with nothing
  // to send or receive) runs inline, without the transport.
  bool has_communication_ = false;
  // The buffer sizes in bytes for elements of checked_elem_bytes_ (0: none checked yet):
  // a run with the same element size compares sizes without multiplying again.
  std::size_t checked_elem_bytes_ = 0;
  std::size_t input_bytes_ = 0;
  std::size_t output_bytes_ = 0;
  // Kept between runs: the scratch buffer and the interpreter's working memory.
  std::unique_ptr<std::byte[]> scratch_;
  std::size_t scratch_bytes_ = 0;
  struct InFlight {
    RequestId request = 0;
    OpId op = kNoOp;  // kNoOp: completed (removed lazily)
  };
  // Programs of at most kMaskedOps ops are scheduled with bit masks (op i is bit i): each
  // op's dependencies and dependents, and which ops are sends, receives and local ops. A run then
  // keeps which ops it has issued and completed, and which may have become ready, in words, and
  // each op's request in request_of_, so a small collective's call walks no graph and fills no
  // queue; larger programs use the dependency counters and the ready queue below.
  static constexpr std::size_t kMaskedOps = 64;
  bool masked_ = false;
  std::vector<std::uint64_t> dependency_masks_;
  std::vector<std::uint64_t> dependent_masks_;  // op i: the ops that depend on it
  std::uint64_t all_ops_ = 0;
  std::uint64_t sends_ = 0;
  std::uint64_t receives_ = 0;  // Recv, RecvReduce and RecvSlices
  std::uint64_t locals_ = 0;
  std::vector<RequestId> request_of_;
  std::vector<std::int32_t> deps_left_;
  std::vector<OpId> ready_;
  std::vector<OpId> batch_;  // the ready ops being issued
  std::vector<InFlight> in_flight_;
  std::vector<RequestId> completed_;
  bool running_ = false;
};

// One run of an Execution that its caller advances: the constructor checks the call as
// Execution::run does and issues the ops that are ready at once; absorb() takes in
// completions the caller got from the transport's wait_some() and issues what they make
// ready. Several runs (of different Executions, with different epochs) may be in flight on
// one transport: each ignores the others' completions. The run owns a copy of the options;
// the Execution, the buffers, the datatype and the operator must outlive it. Destroying an
// unfinished run withdraws its requests (Transport::cancel).
class ExecutionRun {
 public:
  ExecutionRun(Execution& execution, Transport& transport, BufferBinding buffers,
               const Datatype& type, const ReduceOp& op, const ExecOptions& options);
  ~ExecutionRun();
  ExecutionRun(const ExecutionRun&) = delete;
  ExecutionRun& operator=(const ExecutionRun&) = delete;

  bool finished() const;
  // Runs the same Execution again with the same buffers, datatype and operator and new
  // `options` (a persistent request's next start; cheaper than a new run: nothing is
  // allocated). Only when finished.
  void restart(Execution& execution, const ExecOptions& options);
  // Whether it has messages in flight (an unfinished run always has).
  bool waiting() const;
  // Takes in `completed` (ids of other runs' requests are ignored) and issues what became
  // ready; returns whether anything changed. Throws WaitError (naming what this rank waits
  // for) when the transport fails an op.
  bool absorb(std::span<const RequestId> completed);
  // The WaitError for a wait of this run that `cause` ended, or that timed out.
  WaitError failure(const std::string& cause) const;
  WaitError timeout() const;
  const ExecOptions& options() const { return options_; }

 private:
  ExecOptions options_;  // the interpreter refers to it
  std::unique_ptr<Interpreter> interpreter_;
};

// Runs `schedule.ranks[transport.rank()]` once: Execution(schedule, transport.rank(),
// options.known_well_formed).run(...). Checks first that the schedule is well formed, that
// its rank count equals transport.size(), and that the buffers hold exactly input_count /
// output_count elements of `type` (Error(kInvalidArgument) otherwise). Transport failures
// and timeouts throw TransportError naming the pending ops.
void execute(const Schedule& schedule, Transport& transport, BufferBinding buffers,
             const Datatype& type, const ReduceOp& op, const ExecOptions& options = {});

}  // namespace optcoll
