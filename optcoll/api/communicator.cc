// SPDX-License-Identifier: Apache-2.0
// File: Communicator: plan caching and execution; the thread-world convenience runner.
#include "optcoll/api/communicator.h"

#include <algorithm>
#include <array>
#include <thread>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/counts_free.h"

namespace optcoll {
namespace {

// The cache key's scalars: everything but the counts and the model that determines the plan.
std::string shape_head(const CollectiveSpec& spec, const std::string& algorithm) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|", collective_name(spec.kind), spec.nranks,
                     spec.root, spec.count, spec.counts_of.value_or(-1), spec.commutative,
                     spec.reproducible, spec.elem_bytes, algorithm);
}

// What a plan weighs in the cache (PlanCacheLimits): its ops and its spec's counts.
std::size_t plan_weight(const Plan& plan) {
  return plan.schedule.op_count() + plan.schedule.spec.counts.size();
}

}  // namespace

PlanCache::PlanCache(unsigned planning_workers, PlanCacheLimits limits) : limits_(limits) {
  if (planning_workers < 1) throw_invalid("PlanCache: 0 planning workers (at least 1)");
  if (limits.plans < 1 || limits.weight < 1) {
    throw_invalid("PlanCache: a limit of {} plans and {} ops and counts (each at least 1)",
                  limits.plans, limits.weight);
  }
  options_.workers = planning_workers;
}

std::shared_ptr<const Plan> PlanCache::get(const CollectiveSpec& spec, const CostModel& model,
                                           const std::string& algorithm, const TuningTable* tuning,
                                           std::string_view backend,
                                           std::optional<Rank> only_rank) {
  if (only_rank && (*only_rank < 0 || *only_rank >= spec.nranks)) {
    throw_invalid("PlanCache: a plan for rank {} of a {}-rank call", *only_rank, spec.nranks);
  }
  const bool tuned = tuning != nullptr && (algorithm.empty() || algorithm == "auto");
  Shape shape{
      shape_head(spec, algorithm) +
          (tuned ? fmt::format("tuned:{}:{}", static_cast<const void*>(tuning), backend) : "") +
          (only_rank ? fmt::format("only:{}", *only_rank) : ""),
      spec.counts};
  std::lock_guard lock(mutex_);
  if (const auto found = plans_.find(shape); found != plans_.end()) {
    for (Planned& p : found->second) {
      if (p.model == model) {
        p.last_use = ++uses_;
        return p.plan;
      }
    }
  }
  // Planning under the lock: ranks asking for the same plan wait for the first one.
  PlanOptions options = options_;
  options.only_rank = only_rank;  // the plan keeps (and builds) that rank's program only
  Plan made = tuned ? plan_tuned(spec, model, *tuning, backend, options)
                    : plan(spec, model, algorithm, {}, options);
  auto kept = std::make_shared<const Plan>(std::move(made));
  const std::size_t weight = plan_weight(*kept);
  plans_[std::move(shape)].push_back({model, kept, weight, ++uses_});
  ++held_;
  ++made_;
  weight_ += weight;
  evict();
  return kept;
}

void PlanCache::evict() {
  while (held_ > 1 && (held_ > limits_.plans || weight_ > limits_.weight)) {
    // The least recently used plan (a linear search: this follows a planning, which costs far
    // more than a look at a few hundred entries).
    auto oldest_shape = plans_.end();
    std::size_t oldest = 0;
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      for (std::size_t i = 0; i < it->second.size(); ++i) {
        if (oldest_shape == plans_.end() ||
            it->second[i].last_use < oldest_shape->second[oldest].last_use) {
          oldest_shape = it;
          oldest = i;
        }
      }
    }
    std::vector<Planned>& same_shape = oldest_shape->second;
    weight_ -= same_shape[oldest].weight;
    --held_;
    same_shape.erase(same_shape.begin() + static_cast<std::ptrdiff_t>(oldest));
    if (same_shape.empty()) plans_.erase(oldest_shape);
  }
}

std::size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::size_t PlanCache::weight() const {
  std::lock_guard lock(mutex_);
  return weight_;
}

std::size_t PlanCache::made() const {
  std::lock_guard lock(mutex_);
  return made_;
}

CostModel default_thread_model() {
  const int cpus = allowed_processors();
  return thread_node_model(cpus > 0 ? std::optional<int>(cpus) : std::nullopt);
}

CostModel default_mpi_model(const std::optional<Placement>& placement,
                            std::optional<std::size_t> channel_min_bytes) {
  if (!placement || placement->nodes() != 1) return reference_cluster_model();
  const unsigned cpus = std::thread::hardware_concurrency();
  return mpi_node_model(cpus > 0 ? std::optional<int>(static_cast<int>(cpus)) : std::nullopt,
                        channel_min_bytes);
}

CostModel default_model(std::string_view backend) {
  return backend == "threads" ? default_thread_model() : reference_cluster_model();
}

CostModel default_model(const Transport& transport) {
  if (transport.backend() == "mpi") {
    return default_mpi_model(transport.placement(), transport.same_node_channel_min_bytes());
  }
  return default_model(transport.backend());
}

Communicator::Communicator(Transport& transport, std::shared_ptr<PlanCache> cache,
                           CommOptions options)
    : transport_(transport), cache_(std::move(cache)), options_(std::move(options)) {
  OPTCOLL_CHECK(cache_ != nullptr, "Communicator needs a plan cache");
  prepared_.reserve(kPreparedCalls);
  // Where the transport knows the ranks' nodes, a two-level model prices that placement.
  if (!options_.model) options_.model = default_model(transport_);
  options_.model = place_on(std::move(*options_.model), transport_.placement());
  validate(*options_.model);
  // A misspelled override would otherwise be ignored silently.
  for (const auto& [collective, algorithm] : options_.algorithms) {
    const auto kind = parse_collective(collective);
    if (!kind) {
      throw_invalid("CommOptions::algorithms names an unknown collective '{}'", collective);
    }
    if (algorithm != "auto") algorithms::lookup(algorithm, *kind);
  }
}

struct Communicator::PreparedCall {
  PreparedCall(CollectiveSpec call_spec, std::string call_algorithm,
               std::shared_ptr<const Plan> call_plan, Rank rank)
      : spec(std::move(call_spec)),
        algorithm(std::move(call_algorithm)),
        plan(std::move(call_plan)),
        // A registry builder's schedule is well formed (the registry tests verify every
        // algorithm over the grid; planning simulated most, and a one-rank build is the
        // same rank's program).
        execution(plan->schedule, rank, /*known_well_formed=*/true) {}

  // Whether this is the call for `call_spec` with `call_algorithm`: spec == call_spec and
  // algorithm == call_algorithm, the scalar fields compared first (it runs on every call).
  bool matches(const CollectiveSpec& call_spec, std::string_view call_algorithm) const {
    return spec.kind == call_spec.kind && spec.count == call_spec.count &&
           spec.root == call_spec.root && spec.nranks == call_spec.nranks &&
           spec.elem_bytes == call_spec.elem_bytes && spec.commutative == call_spec.commutative &&
           spec.reproducible == call_spec.reproducible && spec.counts_of == call_spec.counts_of &&
           spec.counts == call_spec.counts && algorithm.size() == call_algorithm.size() &&
           algorithm == call_algorithm;
  }

  const CollectiveSpec spec;    // as the caller gave it (before the communicator's options)
  const std::string algorithm;  // as planned: "auto" or a registry name
  const std::shared_ptr<const Plan> plan;
  Execution execution;  // refers to plan->schedule
};

namespace detail {

// A nonblocking or persistent collective: its prepared call (its own execution while it
// runs), buffers, datatype and operator, and its run while in flight.
struct PendingCall {
  Communicator* comm = nullptr;
  std::shared_ptr<Communicator::PreparedCall> prepared;
  BufferBinding buffers;
  Datatype type;
  ReduceOp op;
  bool persistent = false;
  CollectivesInFlight::Handle run;   // null: inactive
  CollectivesInFlight::Handle last;  // persistent: the last run, started again if it succeeded
};

}  // namespace detail

// The progress thread stops first; then the collectives in flight complete (in_flight_
// goes before the prepared calls it runs).
Communicator::~Communicator() {
  stop_progress_thread();
  in_flight_.reset();
}

void Communicator::stop_progress_thread() {
  if (!progress_thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  started_.notify_all();
  progress_thread_.join();
}

std::unique_lock<std::mutex> Communicator::turn() {
  if (!progress_thread_.joinable()) return {};
  return std::unique_lock(mutex_);
}

void Communicator::progress_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (in_flight_->empty()) {
      started_.wait(lock, [this] { return stopping_ || !in_flight_->empty(); });
      continue;
    }
    try {
      in_flight_->progress(std::chrono::milliseconds{0});  // keeps failures for their waits
    } catch (...) {  // NOLINT(bugprone-empty-catch): a run's failure stays with the run
    }
    lock.unlock();
    std::this_thread::sleep_for(options_.progress_interval);
    lock.lock();
  }
}

const std::shared_ptr<Communicator::PreparedCall>& Communicator::prepared(
    const CollectiveSpec& spec, std::string_view algorithm_override) {
  std::string_view algorithm = algorithm_override;
  if (algorithm.empty()) {
    algorithm = "auto";
    if (!options_.algorithms.empty()) {
      const auto it = options_.algorithms.find(collective_name(spec.kind));
      if (it != options_.algorithms.end()) algorithm = it->second;
    }
  }
  for (std::size_t i = 0; i < prepared_.size(); ++i) {
    if (!prepared_[i]->matches(spec, algorithm)) continue;
    if (i > 0)
      std::rotate(prepared_.begin(), prepared_.begin() + static_cast<std::ptrdiff_t>(i),
                  prepared_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return prepared_.front();
  }
  CollectiveSpec planned = spec;
  if (options_.reproducible && is_reduction(planned.kind)) planned.reproducible = true;
  validate(planned);
  if (planned.nranks != size()) {
    throw_invalid("{} is for {} ranks but the communicator has {}", describe(planned),
                  planned.nranks, size());
  }
  std::string name(algorithm);
  auto call = std::make_shared<PreparedCall>(
      spec, name,
      cache_->get(planned, model(), name, options_.tuning.get(), transport_.backend(),
                  runs_one_rank() ? std::optional<Rank>(rank()) : std::nullopt),
      rank());
  if (prepared_.size() == kPreparedCalls) prepared_.pop_back();
  prepared_.insert(prepared_.begin(), std::move(call));
  return prepared_.front();
}

std::shared_ptr<Communicator::PreparedCall> Communicator::idle(
    const std::shared_ptr<PreparedCall>& call) const {
  if (!call->execution.running()) return call;
  return std::make_shared<PreparedCall>(call->spec, call->algorithm, call->plan, rank());
}

ExecOptions Communicator::next_options() {
  ExecOptions exec;
  exec.timeout = options_.timeout;
  exec.epoch = options_.epochs != nullptr ? (*options_.epochs)++ : epoch_++;
  return exec;
}

const Communicator::CountExchange& Communicator::count_exchange(CollectiveKind kind) {
  constexpr std::array<CollectiveKind, 3> kExchanging = {
      CollectiveKind::kGatherv, CollectiveKind::kScatterv, CollectiveKind::kAlltoallv};
  const auto* const at = std::find(kExchanging.begin(), kExchanging.end(), kind);
  if (at == kExchanging.end()) {
    throw_invalid("counts_free: {} has no count exchange (only gatherv, scatterv and alltoallv)",
                  collective_name(kind));
  }
  auto& known = count_exchanges_[static_cast<std::size_t>(at - kExchanging.begin())];
  if (!known) {
    const std::optional<std::string_view> forced = forced_algorithm(kind);
    const bool own_counts = forced && runs_from_own_counts(*forced);
    known = CountExchange{forced ? own_counts : linear_wins_without_exchange(kind, size(), model()),
                          forced, own_counts ? *forced : algorithms::lookup("linear", kind).name};
  }
  return *known;
}

std::optional<std::string_view> Communicator::forced_algorithm(CollectiveKind kind) const {
  const auto it = options_.algorithms.find(collective_name(kind));
  if (it == options_.algorithms.end() || it->second == "auto") return std::nullopt;
  return algorithms::lookup(it->second, kind).name;
}

CollectiveSpec Communicator::scatterv_counts_free_spec(std::span<const Count> root_counts,
                                                       Count mine, Rank root) {
  if (rank() == root && root_counts.size() != static_cast<std::size_t>(size())) {
    const std::string reason = fmt::format(
        "scatterv_root_counts: the root gave {} counts for {} ranks", root_counts.size(), size());
    transport_.abort(reason);
    throw Error(ErrorCode::kInvalidArgument, reason);
  }
  if (rank() == root)
    return counts_free_spec(CollectiveKind::kScatterv, size(), root, rank(), root_counts);
  return counts_free_spec(CollectiveKind::kScatterv, size(), root, rank(), std::span(&mine, 1));
}

std::shared_ptr<const Plan> Communicator::plan_for(const CollectiveSpec& spec) {
  return prepared(spec)->plan;
}

Communicator::Prepared Communicator::prepare(const CollectiveSpec& spec,
                                             std::string_view algorithm) {
  const std::shared_ptr<PreparedCall>& call = prepared(spec, algorithm);
  return {call, call->execution.input_count(), call->execution.output_count()};
}

const std::shared_ptr<Communicator::PreparedCall>& Communicator::still_prepared(
    const Prepared& call) const {
  OPTCOLL_CHECK(call.call_->get() == call.made_for_,
                "a Prepared call was used after another call on its communicator");
  return *call.call_;
}

const std::shared_ptr<const Plan>& Communicator::run(const Prepared& call, BufferBinding buffers,
                                                     const Datatype& type, const ReduceOp& op) {
  return run_prepared(still_prepared(call), buffers, type, op, /*bind_used=*/false);
}

Request Communicator::start(const Prepared& call, BufferBinding buffers, const Datatype& type,
                            const ReduceOp& op, bool persistent) {
  return start_prepared(still_prepared(call), buffers, type, op, persistent, /*bind_used=*/false);
}

namespace {

// The buffers a call binds: with `bind_used`, a buffer this rank does not use (layout count
// 0) is bound empty whatever its size (MPI ignores such buffers).
BufferBinding bound(const Execution& execution, BufferBinding buffers, bool bind_used) {
  if (bind_used) {
    if (execution.input_count() == 0) buffers.input = buffers.input.first(0);
    if (execution.output_count() == 0) buffers.output = buffers.output.first(0);
  }
  return buffers;
}

// A non-commutative spec with a commutative operator is fine; the reverse is not.
void check_operator(const CollectiveSpec& spec, const ReduceOp& op) {
  if (spec.commutative && !op.commutative && is_reduction(spec.kind)) {
    throw_invalid("operator {} is not commutative but the spec says it is", op.name);
  }
}

}  // namespace

const std::shared_ptr<const Plan>& Communicator::run_prepared(
    const std::shared_ptr<PreparedCall>& call, BufferBinding buffers, const Datatype& type,
    const ReduceOp& op, bool bind_used) {
  check_operator(call->spec, op);
  buffers = bound(call->execution, buffers, bind_used);
  // (Plans are shared by the ranks of a process: copying one touches a shared counter.)
  if (last_plan_ != call->plan) last_plan_ = call->plan;
  const auto lock = turn();
  if (in_flight_ != nullptr && !in_flight_->empty()) {
    // Collectives are in flight: this one runs with them (and advances them).
    const std::shared_ptr<PreparedCall> free_call = idle(call);
    const auto run =
        in_flight_->start(free_call->execution, buffers, type, op, next_options(), free_call);
    in_flight_->wait(*run);
    return call->plan;
  }
  call->execution.run(transport_, buffers, type, op, next_options());
  return call->plan;
}

Request Communicator::start_prepared(const std::shared_ptr<PreparedCall>& call,
                                     BufferBinding buffers, const Datatype& type,
                                     const ReduceOp& op, bool persistent, bool bind_used) {
  check_operator(call->spec, op);
  auto pending = std::make_shared<detail::PendingCall>();
  pending->comm = this;
  // A persistent request keeps an execution of its own, so that no other call waits for it.
  pending->prepared =
      persistent ? std::make_shared<PreparedCall>(call->spec, call->algorithm, call->plan, rank())
                 : idle(call);
  pending->buffers = bound(pending->prepared->execution, buffers, bind_used);
  pending->type = type;
  pending->op = op;
  pending->persistent = persistent;
  if (!persistent) launch(pending);
  return Request(std::move(pending));
}

void Communicator::launch(const std::shared_ptr<detail::PendingCall>& pending) {
  detail::PendingCall& call = *pending;
  if (in_flight_ == nullptr) {
    if (options_.progress_thread) {
      const std::string why = transport_.why_no_progress_thread();
      if (!why.empty()) throw_invalid("CommOptions::progress_thread: {}", why);
    }
    // Every rank gets here at the same collective of its sequence (its first start).
    transport_.expect_overlapping_calls();
    in_flight_ = std::make_unique<CollectivesInFlight>(transport_);
    if (options_.progress_thread) progress_thread_ = std::thread([this] { progress_loop(); });
  }
  {
    const auto lock = turn();
    if (last_plan_ != call.prepared->plan) last_plan_ = call.prepared->plan;
    const auto& last = call.last;
    if (last != nullptr && last->failure == nullptr && last->run->finished()) {
      in_flight_->restart(last, next_options(), pending);  // a persistent request's next start
      call.run = last;
    } else {
      call.run = in_flight_->start(call.prepared->execution, call.buffers, call.type, call.op,
                                   next_options(), pending);
      if (call.persistent) call.last = call.run;
    }
    // Every call advances the others in flight.
    if (in_flight_->size() > 1) in_flight_->progress(std::chrono::milliseconds{0});
  }
  if (progress_thread_.joinable()) started_.notify_one();
}

bool Communicator::test(detail::PendingCall& call) {
  const auto lock = turn();
  const CollectivesInFlight::Handle run = call.run;
  try {
    if (!in_flight_->test(*run)) return false;
  } catch (...) {
    call.run.reset();
    throw;
  }
  call.run.reset();
  return true;
}

void Communicator::wait(detail::PendingCall& call) {
  const auto lock = turn();
  const CollectivesInFlight::Handle run = std::move(call.run);
  in_flight_->wait(*run);
}

std::size_t Communicator::in_flight() {
  const auto lock = turn();
  return in_flight_ == nullptr ? 0 : in_flight_->size();
}

Request Communicator::start(const CollectiveSpec& spec, BufferBinding buffers, const Datatype& type,
                            const ReduceOp& op, bool persistent, std::string_view algorithm) {
  return start_prepared(prepared(spec, algorithm), buffers, type, op, persistent,
                        /*bind_used=*/false);
}

std::vector<Count> Communicator::exchanged_own_counts(Count mine) {
  const auto own = static_cast<std::int64_t>(mine);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()));
  allgather<std::int64_t>(std::span<const std::int64_t>(&own, 1), all);
  return {all.begin(), all.end()};
}

std::vector<Count> Communicator::exchanged_root_counts(std::span<const Count> root_counts,
                                                       Rank root) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()));
  if (rank() == root) {
    if (root_counts.size() == all.size()) {
      std::copy(root_counts.begin(), root_counts.end(), all.begin());
    } else {  // every rank must learn of it, not only the root: -(given + 1) in slot 0
      all[0] = -static_cast<std::int64_t>(root_counts.size()) - 1;
    }
  }
  bcast<std::int64_t>(all, root);
  if (all[0] < 0) {
    throw_invalid("scatterv_root_counts: the root gave {} counts for {} ranks", -all[0] - 1,
                  all.size());
  }
  return {all.begin(), all.end()};
}

// ---- Request

bool Request::active() const { return call_ != nullptr && call_->run != nullptr; }
bool Request::persistent() const { return call_ != nullptr && call_->persistent; }

void Request::start() {
  if (call_ == nullptr) throw_invalid("start() of a null request");
  if (!call_->persistent) {
    throw_invalid(
        "start() of a nonblocking request: only persistent requests (made by a "
        "<collective>_init call) can be started again");
  }
  if (call_->run != nullptr) {
    throw_invalid(
        "start() of a persistent {} that is already in flight (started twice "
        "without a wait or a completing test)",
        collective_name(call_->prepared->spec.kind));
  }
  call_->comm->launch(call_);
}

bool Request::test() {
  if (!active()) return true;
  return call_->comm->test(*call_);
}

void Request::wait() {
  if (!active()) return;
  call_->comm->wait(*call_);
}

std::shared_ptr<const Plan> Request::plan() const {
  return call_ == nullptr ? nullptr : call_->prepared->plan;
}

void wait_all(std::span<Request> requests) {
  std::exception_ptr first;
  for (Request& request : requests) {
    try {
      request.wait();
    } catch (...) {
      if (first == nullptr) first = std::current_exception();
    }
  }
  if (first != nullptr) std::rethrow_exception(first);
}

std::shared_ptr<const Plan> Communicator::run(const CollectiveSpec& spec, BufferBinding buffers,
                                              const Datatype& type, const ReduceOp& op,
                                              std::string_view algorithm) {
  return run_prepared(prepared(spec, algorithm), buffers, type, op, /*bind_used=*/false);
}

void Communicator::barrier() {
  call<std::int32_t>(detail::regular(CollectiveKind::kBarrier, 0), {}, {}, detail::no_op());
}

Request Communicator::ibarrier() {
  return issue<std::int32_t>(Mode::kNonblocking, detail::regular(CollectiveKind::kBarrier, 0), {},
                             {}, detail::no_op());
}

Request Communicator::barrier_init() {
  return issue<std::int32_t>(Mode::kPersistent, detail::regular(CollectiveKind::kBarrier, 0), {},
                             {}, detail::no_op());
}

namespace detail {

CollectiveSpec regular(CollectiveKind kind, Count count, Rank root) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.count = count;
  spec.root = root;
  return spec;
}

CollectiveSpec irregular(CollectiveKind kind, std::span<const Count> counts, Rank root) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.counts.assign(counts.begin(), counts.end());
  spec.root = root;
  return spec;
}

const ReduceOp& no_op() {
  static const ReduceOp op =
      ReduceOp::user("none", true, [](const std::byte*, const std::byte*, std::byte*, Count) {
        throw InternalError("a collective without a reduction tried to reduce");
      });
  return op;
}

}  // namespace detail

void run_threads(Rank nranks, const std::function<void(Communicator&)>& fn, CommOptions options) {
  ThreadWorld world(nranks, WorldOptions{options.timeout});
  // Every rank but the one planning waits for the plan: it may take their processors.
  const int processors = allowed_processors();
  const int workers = std::min(processors > 0 ? processors : 1, std::max(1, nranks));
  auto cache = std::make_shared<PlanCache>(static_cast<unsigned>(workers));
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache, options);
    fn(comm);
  });
}

}  // namespace optcoll
