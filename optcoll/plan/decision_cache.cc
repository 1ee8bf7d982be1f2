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

// A cheap digest of the key's usual distinguishing fields: a lookup compares in full only
// the entries whose digest matches.
std::uint64_t digest(const Key& k) {
  std::uint64_t h = std::hash<int>{}(static_cast<int>(k.spec.kind));
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(static_cast<std::uint64_t>(k.spec.nranks));
  mix(static_cast<std::uint64_t>(k.spec.root));
  mix(static_cast<std::uint64_t>(k.spec.count));
  mix(k.spec.counts.size());
  for (std::size_t i = 0; i < k.spec.counts.size(); i += 1 + k.spec.counts.size() / 64) {
    mix(static_cast<std::uint64_t>(k.spec.counts[i]));
  }
  mix(std::hash<double>{}(k.model.alpha));
  mix(std::hash<double>{}(k.model.beta));
  return h;
}

struct Cache {
  std::mutex mutex;
  std::list<std::pair<std::uint64_t, std::pair<Key, Decision>>> entries;  // most recent first
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

std::optional<Decision> cached_decision(const CollectiveSpec& spec, const CostModel& model,
                                        const PlanOptions& options) {
  const Key key{spec, model, options};
  const std::uint64_t h = digest(key);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
    if (it->first != h || !(it->second.first == key)) continue;
    c.entries.splice(c.entries.begin(), c.entries, it);
    return c.entries.front().second.second;
  }
  return std::nullopt;
}

void cache_decision(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
                    const Decision& decision) {
  Key key{spec, model, options};
  const std::uint64_t h = digest(key);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.entries.emplace_front(h, std::make_pair(std::move(key), decision));
  if (c.entries.size() > kCachedDecisions) c.entries.pop_back();
}

}  // namespace optcoll::search

namespace optcoll {

void clear_decision_cache() {
  search::Cache& c = search::cache();
  std::lock_guard lock(c.mutex);
  c.entries.clear();
}

}  // namespace optcoll
