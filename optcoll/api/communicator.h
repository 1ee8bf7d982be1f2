// SPDX-License-Identifier: Apache-2.0
// File: the C++ API (docs/design.md, Architecture in brief): typed collective calls on a
// Communicator that plan (once per distinct call: plans are cached and reused), then execute on a
// Transport. Plans are persistent: each Communicator keeps, for the calls it made most recently,
// the plan prepared for its rank (an Execution, executor.h), so a repeated call skips planning,
// checking and preparing and goes straight to its messages.
//
//   optcoll::run_threads(8, [](optcoll::Communicator& comm) {
//     std::vector<double> in(1000, comm.rank()), out(1000);
//     comm.allreduce<double>(in, out, "sum");            // out[i] = 0 + 1 + ... + 7
//     optcoll::Request r = comm.iallreduce<double>(in, out, "sum");  // nonblocking
//     compute();
//     r.wait();
//     optcoll::Request p = comm.allreduce_init<double>(in, out, "sum");  // persistent
//     for (int step = 0; step < 100; ++step) { p.start(); compute(); p.wait(); }
//   });
//
// Nonblocking and persistent collectives (MPI-3 / MPI-4 semantics): `i<name>` starts the
// collective and returns a Request; `<name>_init` plans, prepares and checks it once (a
// collective call: every rank makes it, in the same order as its other collectives) and
// returns an inactive persistent Request that start() runs, any number of times. Every rank
// starts its collectives, blocking or not, in the same order. Several may be in flight on
// one communicator; they progress inside the communicator's calls (test, wait, and every
// collective started or run), not while the caller computes between them
// (optcoll/exec/in_flight.h). The buffers of a request in flight belong to it until it
// completes. A Request must not outlive its Communicator; a Request dropped while in flight
// completes at the communicator's next calls, or when the communicator is destroyed.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "optcoll/exec/executor.h"
#include "optcoll/exec/in_flight.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/transport.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"
#include "optcoll/plan/tuning.h"

namespace optcoll {

struct CommOptions {
  // What "auto" selection minimizes; unset: default_model(transport), the transport's.
  std::optional<CostModel> model;
  // Per collective name ("allreduce"), an algorithm to use instead of "auto".
  std::map<std::string, std::string, std::less<>> algorithms;
  std::chrono::milliseconds timeout{30000};
  // Reductions combine in the one fixed association (the left fold in rank order), so that
  // floating-point results are bit-identical whatever the algorithm, run or backend.
  bool reproducible = false;
  // A tuning table (optcoll tune, optcoll/plan/tuning.h): "auto" takes its measured choice
  // where it has one for the call (its p, this transport's backend, its sizes), the model's
  // elsewhere (plan_tuned). Plan::decided_by says which.
  std::shared_ptr<const TuningTable> tuning;
  // Nonblocking and persistent collectives progress inside the communicator's calls; with a
  // progress thread, also while the caller computes: a thread of the communicator's own
  // advances them every progress_interval while any is in flight (and sleeps otherwise).
  // It costs a thread per communicator and a share of a CPU while collectives are in
  // flight. MPI backend: MPI must run at MPI_THREAD_MULTIPLE; threads: not as fibers
  // (Transport::why_no_progress_thread; Error(kInvalidArgument) at the first start).
  bool progress_thread = false;
  std::chrono::microseconds progress_interval{20};
  // Where the communicator numbers its calls (the epochs of their messages). Communicators
  // that share one transport while calls of both may be in flight (the C API remakes its
  // communicator when settings change, and persistent requests keep the old one) share one
  // counter, so that no two calls in flight have the same epoch. Null: a counter of its own.
  std::shared_ptr<std::uint32_t> epochs;
};

// The model "auto" minimizes where CommOptions give none: on threads thread_node_model with
// the processors this process may use (its ranks share them); on MPI default_mpi_model of
// the transport's placement and same-node channel; the reference cluster for others.
// `optcoll calibrate` (or OPTCOLL_MODEL) gives the machine's own.
CostModel default_model(const Transport& transport);
// The same by the backend's name where no transport is at hand: "threads" as above, "mpi"
// as default_mpi_model without a placement (the reference cluster).
CostModel default_model(std::string_view backend);
// The thread backend's default: thread_node_model(allowed_processors()).
CostModel default_thread_model();
// The MPI backend's default: where every rank is on one node, mpi_node_model with the
// node's online processors (the same on every rank of a node; not a rank's affinity, which
// mpirun narrows to one core) and `channel_min_bytes`; across nodes, or where the placement
// is unknown, the reference cluster, flat: a two-level model has no cost formulas, so every
// rank would simulate every candidate at each new call shape (docs/cost_model.md, "The MPI
// backend's default").
CostModel default_mpi_model(const std::optional<Placement>& placement,
                            std::optional<std::size_t> channel_min_bytes);

// How much a PlanCache holds: at most `plans` plans and `weight` ops and counts in all (a
// plan weighs its schedule's ops plus its spec's counts: about 100 and 8 bytes each, so the
// default holds up to about 0.4 GB). Past either, the least recently used plans go (a caller
// that still holds one keeps it alive); the plan just made always stays, however heavy. An
// MPI program whose alltoallv counts change from call to call would otherwise keep every
// shape's plan: at p = 4,096, 16 M counts each.
struct PlanCacheLimits {
  std::size_t plans = 256;
  std::size_t weight = std::size_t{1} << 22;
};

// Plans shared by the ranks of one process (a ThreadWorld's ranks plan each call once).
class PlanCache {
 public:
  // Plans with `planning_workers` threads (PlanOptions::workers, at least 1): the ranks
  // that ask for a plan being made wait for it, so a ThreadWorld's cache may take every
  // processor the process may use (run_threads does); one per MPI process keeps the default,
  // since every rank plans at once. Throws Error(kInvalidArgument) for 0 workers or a limit
  // of 0.
  explicit PlanCache(unsigned planning_workers = kDefaultPlanningWorkers,
                     PlanCacheLimits limits = {});
  // The plan for (spec, algorithm) under `model`, computing it on first use. Thread-safe.
  // With a tuning table, "auto" is plan_tuned(spec, model, *tuning, backend). Communicators
  // with different models may share a cache: each gets its own model's plans.
  // With `only_rank`, for a process that runs that one rank of the call (an MPI process):
  // the plan keeps that rank's program only (Plan::only_rank; PlanOptions::only_rank: built
  // for that rank alone where its time needs no whole schedule, the others emptied once
  // planned otherwise), cached apart from the whole plans. At p = 1,024 an alltoall's
  // schedule is 2 M ops, about 0.2 GB that every process would otherwise keep per call
  // shape; at p = 4,096, 33.5 M ops and 5 GB to build.
  std::shared_ptr<const Plan> get(const CollectiveSpec& spec, const CostModel& model,
                                  const std::string& algorithm, const TuningTable* tuning = nullptr,
                                  std::string_view backend = {},
                                  std::optional<Rank> only_rank = std::nullopt);
  std::size_t size() const;    // plans held now
  std::size_t weight() const;  // their ops and counts (PlanCacheLimits)
  std::size_t made() const;    // plans made since the cache was (evicted ones included)

 private:
  // Everything that determines a plan but the model: the call's scalars, the algorithm and
  // how it is asked for (a string), and the counts, compared as numbers (an alltoallv's p^2
  // counts are not formatted at each lookup).
  struct Shape {
    std::string head;
    std::vector<Count> counts;
    auto operator<=>(const Shape&) const = default;
  };
  struct Planned {
    CostModel model;
    std::shared_ptr<const Plan> plan;
    std::size_t weight = 0;
    std::uint64_t last_use = 0;
  };
  // Drops least recently used plans until the limits hold (the newest plan always stays).
  void evict();

  PlanOptions options_;
  PlanCacheLimits limits_;
  mutable std::mutex mutex_;
  std::map<Shape, std::vector<Planned>> plans_;  // by call shape, one per model
  std::uint64_t uses_ = 0;                       // the clock of Planned::last_use
  std::size_t held_ = 0;                         // plans held
  std::size_t weight_ = 0;                       // their weight
  std::size_t made_ = 0;
};

class Communicator;
namespace detail {
struct PendingCall;  // communicator.cc
}

// A nonblocking or persistent collective (see the file comment). Default-constructed: null
// (test() and wait() return at once, start() throws).
class Request {
 public:
  Request() = default;
  // Whether the collective is in flight (started, and not yet completed by test or wait).
  bool active() const;
  bool persistent() const;
  // Persistent requests: runs the prepared collective again. Error(kInvalidArgument) for a
  // request already in flight (started twice without a wait), or one that is not persistent.
  void start();
  // Advances the communicator's collectives in flight without blocking; true when this one
  // has completed (it is then inactive; true for an inactive or null request too). Throws
  // the collective's failure (WaitError, TransportError).
  bool test();
  // Blocks until this collective completes; throws as test().
  void wait();
  // The plan it runs (null for a null request).
  std::shared_ptr<const Plan> plan() const;

 private:
  friend class Communicator;
  explicit Request(std::shared_ptr<detail::PendingCall> call) : call_(std::move(call)) {}
  std::shared_ptr<detail::PendingCall> call_;
};

// Waits for every request, in order; throws the first failure after waiting for the rest.
void wait_all(std::span<Request> requests);

// The built-in datatype of T, made once (a call constructs no name).
template <typename T>
const Datatype& datatype_of();
template <>
inline const Datatype& datatype_of<std::int32_t>() {
  static const Datatype type = Datatype::int32();
  return type;
}
template <>
inline const Datatype& datatype_of<std::int64_t>() {
  static const Datatype type = Datatype::int64();
  return type;
}
template <>
inline const Datatype& datatype_of<float>() {
  static const Datatype type = Datatype::float32();
  return type;
}
template <>
inline const Datatype& datatype_of<double>() {
  static const Datatype type = Datatype::float64();
  return type;
}

class Communicator {
 public:
  Communicator(Transport& transport, std::shared_ptr<PlanCache> cache, CommOptions options = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  Rank rank() const { return transport_.rank(); }
  Rank size() const { return transport_.size(); }

  // The untyped core: every rank calls it with the same spec, in the same order. Validates
  // the spec and the buffer sizes (Error(kInvalidArgument)), then plans and executes.
  // Returns the plan that ran.
  // `algorithm` overrides the options' choice for this call (a registry name, or empty).
  std::shared_ptr<const Plan> run(const CollectiveSpec& spec, BufferBinding buffers,
                                  const Datatype& type, const ReduceOp& op,
                                  std::string_view algorithm = {});
  // How many calls this communicator keeps prepared (the most recently used ones), and how
  // many it holds now.
  static constexpr std::size_t kPreparedCalls = 16;
  std::size_t prepared_calls() const { return prepared_.size(); }
  // The plan run(spec, ...) would execute (validated, planned once, cached); for callers
  // that decide from its prediction before running it, such as the PMPI library.
  std::shared_ptr<const Plan> plan_for(const CollectiveSpec& spec);
  // A call prepared for callers that hold bare addresses (the C API): the elements of this
  // rank's input and output buffers that run(spec, ..., algorithm) binds, and a handle that
  // runs or starts it with no second lookup. It refers to the communicator's prepared call:
  // valid until the next call, prepare() or plan_for() on this communicator (which may evict
  // or move it; using it after that is an InternalError, never another call's plan).
  // (PreparedCall: a call this communicator has made, its spec as planned, its plan and this
  // rank's prepared execution of it; communicator.cc.)
  struct PreparedCall;
  class Prepared {
   public:
    Count input_count() const { return input_; }
    Count output_count() const { return output_; }

   private:
    friend class Communicator;
    Prepared(const std::shared_ptr<PreparedCall>& call, Count input, Count output)
        : call_(&call), made_for_(call.get()), input_(input), output_(output) {}
    const std::shared_ptr<PreparedCall>* call_;
    const PreparedCall* made_for_;  // what *call_ held when prepared (checked at use)
    Count input_;
    Count output_;
  };
  Prepared prepare(const CollectiveSpec& spec, std::string_view algorithm = {});
  // run() and start() of a prepared call. run() returns the plan (valid until the call is
  // evicted: copy it to keep it).
  const std::shared_ptr<const Plan>& run(const Prepared& call, BufferBinding buffers,
                                         const Datatype& type, const ReduceOp& op);
  Request start(const Prepared& call, BufferBinding buffers, const Datatype& type,
                const ReduceOp& op, bool persistent);
  // The options, with the model resolved (CommOptions::model is always set here).
  const CommOptions& options() const { return options_; }
  // What "auto" minimizes: the options' model, or default_model(transport), placed on the
  // transport's placement where it knows one.
  const CostModel& model() const { return *options_.model; }
  // Whether an MPI-semantics `kind` call (kGatherv or kScatterv: counts at the root only;
  // kAlltoallv: a row and a column of the matrix per rank) runs without the count exchange
  // (optcoll/plan/counts_free.h): the options force an algorithm that needs only each rank's
  // own counts (runs_from_own_counts), or leave the choice to auto and
  // linear_wins_without_exchange holds for this communicator's size and model. Every rank
  // answers alike; computed once per kind.
  bool counts_free(CollectiveKind kind) { return count_exchange(kind).skipped; }
  // The same, with the algorithm the options force for `kind` (nullopt: auto) and the one a
  // call without the exchange runs: the forced one where it needs only each rank's own
  // counts, else kind/linear (a nonblocking call, which never exchanges, runs it whatever
  // is forced; the C API refuses a nonblocking alltoallv forced to another).
  struct CountExchange {
    bool skipped = false;
    std::optional<std::string_view> forced;
    std::string_view without_exchange;
  };
  const CountExchange& count_exchange(CollectiveKind kind);
  // The registry's full name of the algorithm the options force for `kind` (nullopt: auto).
  std::optional<std::string_view> forced_algorithm(CollectiveKind kind) const;
  // The plan of the last collective this communicator ran (nullptr before the first).
  const std::shared_ptr<const Plan>& last_plan() const { return last_plan_; }

  // Typed calls, MPI semantics. Buffers that MPI ignores on a rank (reduce/gather output off
  // the root, scatter input off the root) may be empty there.
  template <typename T>
  void bcast(std::span<T> buffer, Rank root);
  template <typename T>
  void reduce(std::span<const T> in, std::span<T> out, const ReduceOp& op, Rank root);
  template <typename T>
  void reduce(std::span<const T> in, std::span<T> out, std::string_view op, Rank root);
  template <typename T>
  void allreduce(std::span<const T> in, std::span<T> out, const ReduceOp& op);
  template <typename T>
  void allreduce(std::span<const T> in, std::span<T> out, std::string_view op);
  // MPI_Scan: out = in(0) op ... op in(rank), combined in rank order.
  template <typename T>
  void scan(std::span<const T> in, std::span<T> out, const ReduceOp& op);
  template <typename T>
  void scan(std::span<const T> in, std::span<T> out, std::string_view op);
  // MPI_Exscan: out = in(0) op ... op in(rank-1). Rank 0's out is left untouched (MPI: its
  // content is undefined) and may be empty.
  template <typename T>
  void exscan(std::span<const T> in, std::span<T> out, const ReduceOp& op);
  template <typename T>
  void exscan(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  void scatter(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  void scatterv(std::span<const T> in, std::span<T> out, std::span<const Count> counts, Rank root);
  template <typename T>
  void gather(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  void gatherv(std::span<const T> in, std::span<T> out, std::span<const Count> counts, Rank root);
  // MPI semantics: only the root knows every count. gatherv_own_counts takes each rank's
  // count from in.size(); scatterv_root_counts takes the counts at the root only (ignored
  // elsewhere) and each rank's from out.size(). Both first tell every rank all counts (an
  // allgather, resp. a bcast, of p int64 values, planned like any call), then run the
  // planned gatherv / scatterv: the count exchange costs one more small collective.
  // scatterv_root_counts skips the exchange and runs scatterv/linear when that cannot be
  // slower under the model (few ranks: optcoll/plan/counts_free.h) or the options force
  // linear. (gatherv_own_counts cannot: its root does not know the others' counts.)
  template <typename T>
  void gatherv_own_counts(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  void scatterv_root_counts(std::span<const T> in, std::span<T> out,
                            std::span<const Count> root_counts, Rank root);
  template <typename T>
  void allgather(std::span<const T> in, std::span<T> out);
  template <typename T>
  void allgatherv(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  template <typename T>
  void reduce_scatter(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                      std::string_view op);
  template <typename T>
  void reduce_scatter_block(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  void alltoall(std::span<const T> in, std::span<T> out);
  // counts: p x p row-major, counts[i*p + j] = elements rank i sends to rank j.
  template <typename T>
  void alltoallv(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  void barrier();

  // Nonblocking (i<name>) and persistent (<name>_init) forms of every typed call above (the
  // file comment says how they run). gatherv_own_counts_init and scatterv_root_counts_init
  // exchange the counts once, at init; they have no nonblocking form (the exchange would
  // be a collective of its own).
  template <typename T>
  Request ibcast(std::span<T> buffer, Rank root);
  template <typename T>
  Request bcast_init(std::span<T> buffer, Rank root);
  template <typename T>
  Request ireduce(std::span<const T> in, std::span<T> out, const ReduceOp& op, Rank root);
  template <typename T>
  Request ireduce(std::span<const T> in, std::span<T> out, std::string_view op, Rank root);
  template <typename T>
  Request reduce_init(std::span<const T> in, std::span<T> out, const ReduceOp& op, Rank root);
  template <typename T>
  Request reduce_init(std::span<const T> in, std::span<T> out, std::string_view op, Rank root);
  template <typename T>
  Request iallreduce(std::span<const T> in, std::span<T> out, const ReduceOp& op);
  template <typename T>
  Request iallreduce(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request allreduce_init(std::span<const T> in, std::span<T> out, const ReduceOp& op);
  template <typename T>
  Request allreduce_init(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request iscan(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request scan_init(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request iexscan(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request exscan_init(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request iscatter(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  Request scatter_init(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  Request iscatterv(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                    Rank root);
  template <typename T>
  Request scatterv_init(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                        Rank root);
  template <typename T>
  Request scatterv_root_counts_init(std::span<const T> in, std::span<T> out,
                                    std::span<const Count> root_counts, Rank root);
  template <typename T>
  Request igather(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  Request gather_init(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  Request igatherv(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                   Rank root);
  template <typename T>
  Request gatherv_init(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                       Rank root);
  template <typename T>
  Request gatherv_own_counts_init(std::span<const T> in, std::span<T> out, Rank root);
  template <typename T>
  Request iallgather(std::span<const T> in, std::span<T> out);
  template <typename T>
  Request allgather_init(std::span<const T> in, std::span<T> out);
  template <typename T>
  Request iallgatherv(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  template <typename T>
  Request allgatherv_init(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  template <typename T>
  Request ireduce_scatter(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                          std::string_view op);
  template <typename T>
  Request reduce_scatter_init(std::span<const T> in, std::span<T> out,
                              std::span<const Count> counts, std::string_view op);
  template <typename T>
  Request ireduce_scatter_block(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request reduce_scatter_block_init(std::span<const T> in, std::span<T> out, std::string_view op);
  template <typename T>
  Request ialltoall(std::span<const T> in, std::span<T> out);
  template <typename T>
  Request alltoall_init(std::span<const T> in, std::span<T> out);
  template <typename T>
  Request ialltoallv(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  template <typename T>
  Request alltoallv_init(std::span<const T> in, std::span<T> out, std::span<const Count> counts);
  Request ibarrier();
  Request barrier_init();
  // The untyped core of the nonblocking (persistent = false) and persistent forms, as run().
  Request start(const CollectiveSpec& spec, BufferBinding buffers, const Datatype& type,
                const ReduceOp& op, bool persistent, std::string_view algorithm = {});
  // How many collectives are in flight on this communicator.
  std::size_t in_flight();

 private:
  friend class Request;
  friend struct detail::PendingCall;
  enum class Mode : std::uint8_t { kBlocking, kNonblocking, kPersistent };

  template <typename T>
  void call(CollectiveSpec spec, std::span<const T> in, std::span<T> out, const ReduceOp& op,
            std::string_view algorithm = {});
  // call(), or start() of the nonblocking or persistent form.
  template <typename T>
  Request issue(Mode mode, CollectiveSpec spec, std::span<const T> in, std::span<T> out,
                const ReduceOp& op, std::string_view algorithm = {});
  // The nonblocking and persistent forms' common part (run_prepared's, for start()).
  Request start_prepared(const std::shared_ptr<PreparedCall>& call, BufferBinding buffers,
                         const Datatype& type, const ReduceOp& op, bool persistent, bool bind_used);
  // Starts `call` in flight (Request::start, and the nonblocking forms).
  void launch(const std::shared_ptr<detail::PendingCall>& pending);
  // Advances the collectives in flight (Request::test/wait).
  bool test(detail::PendingCall& call);
  void wait(detail::PendingCall& call);
  // Every rank's count, from each rank's own (gatherv_own_counts: an allgather), or from the
  // root's (scatterv_root_counts: a bcast; a root that gave the wrong number of counts makes
  // every rank throw).
  std::vector<Count> exchanged_own_counts(Count mine);
  std::vector<Count> exchanged_root_counts(std::span<const Count> root_counts, Rank root);
  // The prepared call for `spec` (planned and prepared on first use; most recent first),
  // with `algorithm`, or the options' choice for its collective when empty.
  // `call`'s prepared call, checked to be the one it was made for.
  const std::shared_ptr<PreparedCall>& still_prepared(const Prepared& call) const;
  const std::shared_ptr<PreparedCall>& prepared(const CollectiveSpec& spec,
                                                std::string_view algorithm = {});
  // Whether this process runs this rank alone (the MPI backend): its plans need to keep only
  // its own program (PlanCache::get's only_rank).
  bool runs_one_rank() const { return transport_.backend() == "mpi"; }
  // `call` if its execution is free, else a fresh one of the same plan (a collective of the
  // same spec is in flight).
  std::shared_ptr<PreparedCall> idle(const std::shared_ptr<PreparedCall>& call) const;
  // The next call's execution options (its epoch).
  ExecOptions next_options();
  // This rank's spec for the exchange-free scatterv (counts_free_spec). A root that gave the
  // wrong number of counts aborts the call on every rank (the others could not learn of it
  // otherwise) and throws.
  CollectiveSpec scatterv_counts_free_spec(std::span<const Count> root_counts, Count mine,
                                           Rank root);
  // Runs a prepared call; with `bind_used`, a buffer this rank does not use (layout count 0)
  // is bound empty whatever its size (MPI ignores such buffers).
  // Returns the plan (valid until the call is evicted: copy it to keep it).
  const std::shared_ptr<const Plan>& run_prepared(const std::shared_ptr<PreparedCall>& call,
                                                  BufferBinding buffers, const Datatype& type,
                                                  const ReduceOp& op, bool bind_used);

  Transport& transport_;
  std::shared_ptr<PlanCache> cache_;
  CommOptions options_;
  std::uint32_t epoch_ = 0;
  std::array<std::optional<CountExchange>, 3> count_exchanges_;  // gatherv, scatterv, alltoallv
  std::shared_ptr<const Plan> last_plan_;
  // Most recently used first; capacity kPreparedCalls from the start, so that a Prepared's
  // pointer into it stays valid.
  std::vector<std::shared_ptr<PreparedCall>> prepared_;
  std::unique_ptr<CollectivesInFlight> in_flight_;  // made by the first start()
  // With a progress thread: it and the caller's thread take turns on the transport and the
  // collectives in flight under `mutex_` (the caller's blocking calls and waits hold it).
  void progress_loop();
  void stop_progress_thread();
  // The caller's turn on the transport: `mutex_` held while there is a progress thread.
  std::unique_lock<std::mutex> turn();
  std::mutex mutex_;
  std::condition_variable started_;  // a collective was started (wakes the progress thread)
  bool stopping_ = false;
  std::thread progress_thread_;
};

// Runs fn on p ranks of a fresh ThreadWorld, each with its own Communicator over a shared
// plan cache. Throws like ThreadWorld::run when a rank fails.
void run_threads(Rank nranks, const std::function<void(Communicator&)>& fn,
                 CommOptions options = {});

// ---- template definitions

template <typename T>
void Communicator::call(CollectiveSpec spec, std::span<const T> in, std::span<T> out,
                        const ReduceOp& op, std::string_view algorithm) {
  spec.nranks = size();
  spec.elem_bytes = sizeof(T);
  spec.commutative = op.commutative;
  // MPI ignores some buffers on some ranks; bind exactly what the layout says is used.
  run_prepared(prepared(spec, algorithm), {std::as_bytes(in), std::as_writable_bytes(out)},
               datatype_of<T>(), op, /*bind_used=*/true);
}

template <typename T>
Request Communicator::issue(Mode mode, CollectiveSpec spec, std::span<const T> in, std::span<T> out,
                            const ReduceOp& op, std::string_view algorithm) {
  if (mode == Mode::kBlocking) {
    call<T>(std::move(spec), in, out, op, algorithm);
    return {};
  }
  spec.nranks = size();
  spec.elem_bytes = sizeof(T);
  spec.commutative = op.commutative;
  return start_prepared(prepared(spec, algorithm), {std::as_bytes(in), std::as_writable_bytes(out)},
                        datatype_of<T>(), op, mode == Mode::kPersistent, /*bind_used=*/true);
}

namespace detail {
CollectiveSpec regular(CollectiveKind kind, Count count, Rank root = 0);
CollectiveSpec irregular(CollectiveKind kind, std::span<const Count> counts, Rank root = 0);
const ReduceOp& no_op();  // for collectives without a reduction
}  // namespace detail

template <typename T>
void Communicator::bcast(std::span<T> buffer, Rank root) {
  call<T>(detail::regular(CollectiveKind::kBcast, static_cast<Count>(buffer.size()), root), {},
          buffer, detail::no_op());
}
template <typename T>
void Communicator::reduce(std::span<const T> in, std::span<T> out, const ReduceOp& op, Rank root) {
  call<T>(detail::regular(CollectiveKind::kReduce, static_cast<Count>(in.size()), root), in, out,
          op);
}
template <typename T>
void Communicator::reduce(std::span<const T> in, std::span<T> out, std::string_view op, Rank root) {
  reduce<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()), root);
}
template <typename T>
void Communicator::allreduce(std::span<const T> in, std::span<T> out, const ReduceOp& op) {
  call<T>(detail::regular(CollectiveKind::kAllreduce, static_cast<Count>(in.size())), in, out, op);
}
template <typename T>
void Communicator::allreduce(std::span<const T> in, std::span<T> out, std::string_view op) {
  allreduce<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
void Communicator::scan(std::span<const T> in, std::span<T> out, const ReduceOp& op) {
  call<T>(detail::regular(CollectiveKind::kScan, static_cast<Count>(in.size())), in, out, op);
}
template <typename T>
void Communicator::scan(std::span<const T> in, std::span<T> out, std::string_view op) {
  scan<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
void Communicator::exscan(std::span<const T> in, std::span<T> out, const ReduceOp& op) {
  call<T>(detail::regular(CollectiveKind::kExscan, static_cast<Count>(in.size())), in, out, op);
}
template <typename T>
void Communicator::exscan(std::span<const T> in, std::span<T> out, std::string_view op) {
  exscan<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
void Communicator::scatter(std::span<const T> in, std::span<T> out, Rank root) {
  call<T>(detail::regular(CollectiveKind::kScatter, static_cast<Count>(out.size()), root), in, out,
          detail::no_op());
}
template <typename T>
void Communicator::scatterv(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                            Rank root) {
  call<T>(detail::irregular(CollectiveKind::kScatterv, counts, root), in, out, detail::no_op());
}
template <typename T>
void Communicator::gather(std::span<const T> in, std::span<T> out, Rank root) {
  call<T>(detail::regular(CollectiveKind::kGather, static_cast<Count>(in.size()), root), in, out,
          detail::no_op());
}
template <typename T>
void Communicator::gatherv(std::span<const T> in, std::span<T> out, std::span<const Count> counts,
                           Rank root) {
  call<T>(detail::irregular(CollectiveKind::kGatherv, counts, root), in, out, detail::no_op());
}
template <typename T>
void Communicator::gatherv_own_counts(std::span<const T> in, std::span<T> out, Rank root) {
  gatherv<T>(in, out, exchanged_own_counts(static_cast<Count>(in.size())), root);
}
template <typename T>
void Communicator::scatterv_root_counts(std::span<const T> in, std::span<T> out,
                                        std::span<const Count> root_counts, Rank root) {
  if (counts_free(CollectiveKind::kScatterv)) {  // linear: each rank needs only its own count
    const CollectiveSpec spec =
        scatterv_counts_free_spec(root_counts, static_cast<Count>(out.size()), root);
    call<T>(spec, in, out, detail::no_op(),
            count_exchange(CollectiveKind::kScatterv).without_exchange);
    return;
  }
  scatterv<T>(in, out, exchanged_root_counts(root_counts, root), root);
}
template <typename T>
void Communicator::allgather(std::span<const T> in, std::span<T> out) {
  call<T>(detail::regular(CollectiveKind::kAllgather, static_cast<Count>(in.size())), in, out,
          detail::no_op());
}
template <typename T>
void Communicator::allgatherv(std::span<const T> in, std::span<T> out,
                              std::span<const Count> counts) {
  call<T>(detail::irregular(CollectiveKind::kAllgatherv, counts), in, out, detail::no_op());
}
template <typename T>
void Communicator::reduce_scatter(std::span<const T> in, std::span<T> out,
                                  std::span<const Count> counts, std::string_view op) {
  call<T>(detail::irregular(CollectiveKind::kReduceScatter, counts), in, out,
          ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
void Communicator::reduce_scatter_block(std::span<const T> in, std::span<T> out,
                                        std::string_view op) {
  call<T>(detail::regular(CollectiveKind::kReduceScatterBlock, static_cast<Count>(out.size())), in,
          out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
void Communicator::alltoall(std::span<const T> in, std::span<T> out) {
  const auto p = static_cast<std::size_t>(size());
  call<T>(detail::regular(CollectiveKind::kAlltoall, static_cast<Count>(in.size() / p)), in, out,
          detail::no_op());
}
template <typename T>
void Communicator::alltoallv(std::span<const T> in, std::span<T> out,
                             std::span<const Count> counts) {
  call<T>(detail::irregular(CollectiveKind::kAlltoallv, counts), in, out, detail::no_op());
}

// ---- nonblocking and persistent forms: the blocking call's spec, issued in another mode

template <typename T>
Request Communicator::ibcast(std::span<T> buffer, Rank root) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kBcast, static_cast<Count>(buffer.size()), root),
                  {}, buffer, detail::no_op());
}
template <typename T>
Request Communicator::bcast_init(std::span<T> buffer, Rank root) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kBcast, static_cast<Count>(buffer.size()), root),
                  {}, buffer, detail::no_op());
}
template <typename T>
Request Communicator::ireduce(std::span<const T> in, std::span<T> out, const ReduceOp& op,
                              Rank root) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kReduce, static_cast<Count>(in.size()), root), in,
                  out, op);
}
template <typename T>
Request Communicator::ireduce(std::span<const T> in, std::span<T> out, std::string_view op,
                              Rank root) {
  return ireduce<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()), root);
}
template <typename T>
Request Communicator::reduce_init(std::span<const T> in, std::span<T> out, const ReduceOp& op,
                                  Rank root) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kReduce, static_cast<Count>(in.size()), root), in,
                  out, op);
}
template <typename T>
Request Communicator::reduce_init(std::span<const T> in, std::span<T> out, std::string_view op,
                                  Rank root) {
  return reduce_init<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()), root);
}
template <typename T>
Request Communicator::iallreduce(std::span<const T> in, std::span<T> out, const ReduceOp& op) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kAllreduce, static_cast<Count>(in.size())), in,
                  out, op);
}
template <typename T>
Request Communicator::iallreduce(std::span<const T> in, std::span<T> out, std::string_view op) {
  return iallreduce<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::allreduce_init(std::span<const T> in, std::span<T> out, const ReduceOp& op) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kAllreduce, static_cast<Count>(in.size())), in,
                  out, op);
}
template <typename T>
Request Communicator::allreduce_init(std::span<const T> in, std::span<T> out, std::string_view op) {
  return allreduce_init<T>(in, out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::iscan(std::span<const T> in, std::span<T> out, std::string_view op) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kScan, static_cast<Count>(in.size())), in, out,
                  ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::scan_init(std::span<const T> in, std::span<T> out, std::string_view op) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kScan, static_cast<Count>(in.size())), in, out,
                  ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::iexscan(std::span<const T> in, std::span<T> out, std::string_view op) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kExscan, static_cast<Count>(in.size())), in, out,
                  ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::exscan_init(std::span<const T> in, std::span<T> out, std::string_view op) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kExscan, static_cast<Count>(in.size())), in, out,
                  ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::iscatter(std::span<const T> in, std::span<T> out, Rank root) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kScatter, static_cast<Count>(out.size()), root),
                  in, out, detail::no_op());
}
template <typename T>
Request Communicator::scatter_init(std::span<const T> in, std::span<T> out, Rank root) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kScatter, static_cast<Count>(out.size()), root),
                  in, out, detail::no_op());
}
template <typename T>
Request Communicator::iscatterv(std::span<const T> in, std::span<T> out,
                                std::span<const Count> counts, Rank root) {
  return issue<T>(Mode::kNonblocking, detail::irregular(CollectiveKind::kScatterv, counts, root),
                  in, out, detail::no_op());
}
template <typename T>
Request Communicator::scatterv_init(std::span<const T> in, std::span<T> out,
                                    std::span<const Count> counts, Rank root) {
  return issue<T>(Mode::kPersistent, detail::irregular(CollectiveKind::kScatterv, counts, root), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::scatterv_root_counts_init(std::span<const T> in, std::span<T> out,
                                                std::span<const Count> root_counts, Rank root) {
  if (counts_free(CollectiveKind::kScatterv)) {
    const CollectiveSpec spec =
        scatterv_counts_free_spec(root_counts, static_cast<Count>(out.size()), root);
    return issue<T>(Mode::kPersistent, spec, in, out, detail::no_op(),
                    count_exchange(CollectiveKind::kScatterv).without_exchange);
  }
  return scatterv_init<T>(in, out, exchanged_root_counts(root_counts, root), root);
}
template <typename T>
Request Communicator::igather(std::span<const T> in, std::span<T> out, Rank root) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kGather, static_cast<Count>(in.size()), root), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::gather_init(std::span<const T> in, std::span<T> out, Rank root) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kGather, static_cast<Count>(in.size()), root), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::igatherv(std::span<const T> in, std::span<T> out,
                               std::span<const Count> counts, Rank root) {
  return issue<T>(Mode::kNonblocking, detail::irregular(CollectiveKind::kGatherv, counts, root), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::gatherv_init(std::span<const T> in, std::span<T> out,
                                   std::span<const Count> counts, Rank root) {
  return issue<T>(Mode::kPersistent, detail::irregular(CollectiveKind::kGatherv, counts, root), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::gatherv_own_counts_init(std::span<const T> in, std::span<T> out, Rank root) {
  return gatherv_init<T>(in, out, exchanged_own_counts(static_cast<Count>(in.size())), root);
}
template <typename T>
Request Communicator::iallgather(std::span<const T> in, std::span<T> out) {
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kAllgather, static_cast<Count>(in.size())), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::allgather_init(std::span<const T> in, std::span<T> out) {
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kAllgather, static_cast<Count>(in.size())), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::iallgatherv(std::span<const T> in, std::span<T> out,
                                  std::span<const Count> counts) {
  return issue<T>(Mode::kNonblocking, detail::irregular(CollectiveKind::kAllgatherv, counts), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::allgatherv_init(std::span<const T> in, std::span<T> out,
                                      std::span<const Count> counts) {
  return issue<T>(Mode::kPersistent, detail::irregular(CollectiveKind::kAllgatherv, counts), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::ireduce_scatter(std::span<const T> in, std::span<T> out,
                                      std::span<const Count> counts, std::string_view op) {
  return issue<T>(Mode::kNonblocking, detail::irregular(CollectiveKind::kReduceScatter, counts), in,
                  out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::reduce_scatter_init(std::span<const T> in, std::span<T> out,
                                          std::span<const Count> counts, std::string_view op) {
  return issue<T>(Mode::kPersistent, detail::irregular(CollectiveKind::kReduceScatter, counts), in,
                  out, ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::ireduce_scatter_block(std::span<const T> in, std::span<T> out,
                                            std::string_view op) {
  return issue<T>(
      Mode::kNonblocking,
      detail::regular(CollectiveKind::kReduceScatterBlock, static_cast<Count>(out.size())), in, out,
      ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::reduce_scatter_block_init(std::span<const T> in, std::span<T> out,
                                                std::string_view op) {
  return issue<T>(
      Mode::kPersistent,
      detail::regular(CollectiveKind::kReduceScatterBlock, static_cast<Count>(out.size())), in, out,
      ReduceOp::builtin(op, datatype_of<T>()));
}
template <typename T>
Request Communicator::ialltoall(std::span<const T> in, std::span<T> out) {
  const auto p = static_cast<std::size_t>(size());
  return issue<T>(Mode::kNonblocking,
                  detail::regular(CollectiveKind::kAlltoall, static_cast<Count>(in.size() / p)), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::alltoall_init(std::span<const T> in, std::span<T> out) {
  const auto p = static_cast<std::size_t>(size());
  return issue<T>(Mode::kPersistent,
                  detail::regular(CollectiveKind::kAlltoall, static_cast<Count>(in.size() / p)), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::ialltoallv(std::span<const T> in, std::span<T> out,
                                 std::span<const Count> counts) {
  return issue<T>(Mode::kNonblocking, detail::irregular(CollectiveKind::kAlltoallv, counts), in,
                  out, detail::no_op());
}
template <typename T>
Request Communicator::alltoallv_init(std::span<const T> in, std::span<T> out,
                                     std::span<const Count> counts) {
  return issue<T>(Mode::kPersistent, detail::irregular(CollectiveKind::kAlltoallv, counts), in, out,
                  detail::no_op());
}

}  // namespace optcoll
