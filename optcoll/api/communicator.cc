// SPDX-License-Identifier: Apache-2.0
// File: Communicator: plan caching and execution; the thread-world convenience runner.
#include "optcoll/api/communicator.h"

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/counts_free.h"

namespace optcoll {
namespace {

// The cache key: everything that determines the plan.
std::string plan_key(const CollectiveSpec& spec, const std::string& algorithm) {
  std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|", collective_name(spec.kind), spec.nranks, spec.root,
                  spec.count, spec.commutative, spec.reproducible, spec.elem_bytes, algorithm);
  for (const Count c : spec.counts) key += fmt::format("{},", c);
  return key;
}

}  // namespace

std::shared_ptr<const Plan> PlanCache::get(const CollectiveSpec& spec, const CostModel& model,
                                           const std::string& algorithm, const TuningTable* tuning,
                                           std::string_view backend) {
  const bool tuned = tuning != nullptr && (algorithm.empty() || algorithm == "auto");
  const std::string key =
      plan_key(spec, algorithm) +
      (tuned ? fmt::format("tuned:{}:{}", static_cast<const void*>(tuning), backend) : "");
  std::lock_guard lock(mutex_);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    // Planning under the lock: ranks asking for the same plan wait for the first one.
    Plan made = tuned ? plan_tuned(spec, model, *tuning, backend) : plan(spec, model, algorithm);
    it = plans_.emplace(key, std::make_shared<const Plan>(std::move(made))).first;
  }
  return it->second;
}

std::size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

Communicator::Communicator(Transport& transport, std::shared_ptr<PlanCache> cache,
                           CommOptions options)
    : transport_(transport), cache_(std::move(cache)), options_(std::move(options)) {
  OPTCOLL_CHECK(cache_ != nullptr, "Communicator needs a plan cache");
  validate(options_.model);
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
        // Planning simulated the schedule, which requires it to be well formed.
        execution(plan->schedule, rank, /*known_well_formed=*/true) {}

  const CollectiveSpec spec;    // as the caller gave it (before the communicator's options)
  const std::string algorithm;  // as planned: "auto" or a registry name
  const std::shared_ptr<const Plan> plan;
  Execution execution;  // refers to plan->schedule
};

Communicator::~Communicator() = default;

Communicator::PreparedCall& Communicator::prepared(const CollectiveSpec& spec,
                                                   std::string_view algorithm_override) {
  std::string_view algorithm = algorithm_override;
  if (algorithm.empty()) {
    algorithm = "auto";
    if (!options_.algorithms.empty()) {
      const auto it = options_.algorithms.find(collective_name(spec.kind));
      if (it != options_.algorithms.end()) algorithm = it->second;
    }
  }
  for (std::size_t i = 0; i < prepared_.size(); ++i) {
    if (prepared_[i]->spec != spec || prepared_[i]->algorithm != algorithm) continue;
    if (i > 0)
      std::rotate(prepared_.begin(), prepared_.begin() + static_cast<std::ptrdiff_t>(i),
                  prepared_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return *prepared_.front();
  }
  CollectiveSpec planned = spec;
  if (options_.reproducible && is_reduction(planned.kind)) planned.reproducible = true;
  validate(planned);
  if (planned.nranks != size()) {
    throw_invalid("{} is for {} ranks but the communicator has {}", describe(planned),
                  planned.nranks, size());
  }
  std::string name(algorithm);
  auto call = std::make_unique<PreparedCall>(
      spec, name,
      cache_->get(planned, options_.model, name, options_.tuning.get(), transport_.backend()),
      rank());
  if (prepared_.size() == kPreparedCalls) prepared_.pop_back();
  prepared_.insert(prepared_.begin(), std::move(call));
  return *prepared_.front();
}

bool Communicator::counts_free(CollectiveKind kind) {
  if (kind != CollectiveKind::kGatherv && kind != CollectiveKind::kScatterv) {
    throw_invalid("counts_free: {} has no count exchange (only gatherv and scatterv)",
                  collective_name(kind));
  }
  auto& known = counts_free_[kind == CollectiveKind::kGatherv ? 0 : 1];
  if (!known) {
    const auto it = options_.algorithms.find(collective_name(kind));
    if (it != options_.algorithms.end() && it->second != "auto") {
      known = algorithms::lookup(it->second, kind).name ==
              fmt::format("{}/linear", collective_name(kind));
    } else {
      known = linear_wins_without_exchange(kind, size(), options_.model);
    }
  }
  return *known;
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
  return prepared(spec).plan;
}

Communicator::BufferCounts Communicator::buffer_counts(const CollectiveSpec& spec,
                                                       std::string_view algorithm) {
  const Execution& execution = prepared(spec, algorithm).execution;
  return {execution.input_count(), execution.output_count()};
}

const std::shared_ptr<const Plan>& Communicator::run_prepared(PreparedCall& call,
                                                              BufferBinding buffers,
                                                              const Datatype& type,
                                                              const ReduceOp& op, bool bind_used) {
  // A non-commutative spec with a commutative operator is fine; the reverse is not.
  if (call.spec.commutative && !op.commutative && is_reduction(call.spec.kind)) {
    throw_invalid("operator {} is not commutative but the spec says it is", op.name);
  }
  if (bind_used) {
    if (call.execution.input_count() == 0) buffers.input = buffers.input.first(0);
    if (call.execution.output_count() == 0) buffers.output = buffers.output.first(0);
  }
  // (Plans are shared by the ranks of a process: copying one touches a shared counter.)
  if (last_plan_ != call.plan) last_plan_ = call.plan;
  ExecOptions exec;
  exec.timeout = options_.timeout;
  exec.epoch = epoch_++;
  call.execution.run(transport_, buffers, type, op, exec);
  return call.plan;
}

std::shared_ptr<const Plan> Communicator::run(const CollectiveSpec& spec, BufferBinding buffers,
                                              const Datatype& type, const ReduceOp& op,
                                              std::string_view algorithm) {
  return run_prepared(prepared(spec, algorithm), buffers, type, op, /*bind_used=*/false);
}

void Communicator::barrier() {
  call<std::int32_t>(detail::regular(CollectiveKind::kBarrier, 0), {}, {}, detail::no_op());
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
  auto cache = std::make_shared<PlanCache>();
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache, options);
    fn(comm);
  });
}

}  // namespace optcoll
