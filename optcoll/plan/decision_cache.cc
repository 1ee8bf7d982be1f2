// SPDX-License-Identifier: Apache-2.0
// File: the decision cache by call shape (search.h): the Communicator, the C API and the
// PMPI library ask the planner on every rank for every new call shape, and the best-root
// search decides a root more than once; a repeated question costs a lookup.
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>

#include "optcoll/plan/search.h"

namespace optcoll::search {
namespace {

// Entries kept; the least recently used goes first.
constexpr std::size_t kCachedDecisions = 256;

struct Key {
  CollectiveSpec spec;
  CostModel model;
  PlanOptions options;
  bool operator==(const Key&) const = default;
};

// A cheap digest of a key's usual distinguishing fields: a lookup compares in full only
// the entries whose digest matches.
std::uint64_t digest(const CollectiveSpec& spec, const CostModel& model) {
  std::uint64_t h = std::hash<int>{}(static_cast<int>(spec.kind));
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(static_cast<std::uint64_t>(spec.nranks));
  mix(static_cast<std::uint64_t>(spec.root));
  mix(static_cast<std::uint64_t>(spec.count));
  mix(static_cast<std::uint64_t>(spec.counts_of.value_or(-1)));
  mix(spec.counts.size());
  for (std::size_t i = 0; i < spec.counts.size(); i += 1 + spec.counts.size() / 64) {
    mix(static_cast<std::uint64_t>(spec.counts[i]));
  }
  mix(std::hash<double>{}(model.alpha));
  mix(std::hash<double>{}(model.beta));
  return h;
}

bool same_key(const Key& k, const CollectiveSpec& spec, const CostModel& model,
              const PlanOptions& options) {
  return k.spec == spec && k.model == model && k.options == options;
}

struct Cache {
  std::mutex mutex;
  std::list<std::pair<std::uint64_t, std::pair<Key, Decision>>> entries;  // most recent first
  std::size_t counts = 0;  // the entries' spec counts together
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

std::optional<Decision> cached_decision(const CollectiveSpec& spec, const CostModel& model,
                                        const PlanOptions& options) {
  const std::uint64_t h = digest(spec, model);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
    if (it->first != h || !same_key(it->second.first, spec, model, options)) continue;
    c.entries.splice(c.entries.begin(), c.entries, it);
    return c.entries.front().second.second;
  }
  return std::nullopt;
}

void cache_decision(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
                    const Decision& decision) {
  const std::uint64_t h = digest(spec, model);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.entries.emplace_front(h, std::make_pair(Key{spec, model, options}, decision));
  c.counts += spec.counts.size();
  while (c.entries.size() > 1 &&
         (c.entries.size() > kCachedDecisions || c.counts > kCachedDecisionCounts)) {
    c.counts -= c.entries.back().second.first.spec.counts.size();
    c.entries.pop_back();
  }
}

}  // namespace optcoll::search

namespace optcoll {

void clear_decision_cache() {
  search::Cache& c = search::cache();
  std::lock_guard lock(c.mutex);
  c.entries.clear();
  c.counts = 0;
}

}  // namespace optcoll
