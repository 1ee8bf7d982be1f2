// SPDX-License-Identifier: Apache-2.0
// File: Communicator: plan caching and execution; the thread-world convenience runner.
#include "optcoll/api/communicator.h"

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

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
                                           const std::string& algorithm) {
  const std::string key = plan_key(spec, algorithm);
  std::lock_guard lock(mutex_);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    // Planning under the lock: ranks asking for the same plan wait for the first one.
    it = plans_.emplace(key, std::make_shared<const Plan>(plan(spec, model, algorithm))).first;
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

std::shared_ptr<const Plan> Communicator::plan_for(const CollectiveSpec& call) {
  CollectiveSpec spec = call;
  if (options_.reproducible && is_reduction(spec.kind)) spec.reproducible = true;
  validate(spec);
  if (spec.nranks != size()) {
    throw_invalid("{} is for {} ranks but the communicator has {}", describe(spec), spec.nranks,
                  size());
  }
  const auto it = options_.algorithms.find(collective_name(spec.kind));
  const std::string algorithm = it == options_.algorithms.end() ? "auto" : it->second;
  return cache_->get(spec, options_.model, algorithm);
}

std::shared_ptr<const Plan> Communicator::run(const CollectiveSpec& spec, BufferBinding buffers,
                                              const Datatype& type, const ReduceOp& op) {
  // A non-commutative spec with a commutative operator is fine; the reverse is not.
  if (spec.commutative && !op.commutative && is_reduction(spec.kind)) {
    throw_invalid("operator {} is not commutative but the spec says it is", op.name);
  }
  auto chosen = plan_for(spec);
  last_plan_ = chosen;
  ExecOptions exec;
  exec.timeout = options_.timeout;
  exec.epoch = epoch_++;
  exec.known_well_formed = true;  // planning simulated it, which requires a well-formed schedule
  execute(chosen->schedule, transport_, buffers, type, op, exec);
  return chosen;
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

ReduceOp no_op() {
  return ReduceOp::user("none", true, [](const std::byte*, const std::byte*, std::byte*, Count) {
    throw InternalError("a collective without a reduction tried to reduce");
  });
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
