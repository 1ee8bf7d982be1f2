// SPDX-License-Identifier: Apache-2.0
// File: the machinery behind select.h's plan() and decide(): the candidates of a call with
// what is known of each (estimates, simulations, bounds), the default search that prices
// them by formulas and simulates few, the exhaustive search that simulates all, the choice
// both share, the best-root search and the decision cache. select.h states the rules; this
// header is internal to optcoll/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "optcoll/algorithms/registry.h"
#include "optcoll/plan/select.h"

namespace optcoll::search {

// One way to run a registry algorithm: its defaults, or a parameter variant.
struct Option {
  algorithms::Params params;  // as given to the builder ("auto" values unresolved)
  std::optional<algorithms::Estimate> estimate;  // under the model, where a formula describes it
  std::optional<Time> simulated;
  std::uint64_t simulated_bytes = 0;
  std::string simulated_params;  // the schedule's record of its resolved parameters
  double work = 0;               // op-equivalents to build and simulate it

  bool evaluated() const { return simulated || estimate; }
  // A prediction the choice may rest on: a simulation, or an exact formula.
  bool known() const { return simulated || (estimate && estimate->exact); }
  Time value() const { return simulated ? *simulated : estimate->time; }
  std::uint64_t bytes() const { return simulated ? simulated_bytes : estimate->bytes; }
  const std::string& resolved() const { return simulated ? simulated_params : estimate->params; }
};

// One registry algorithm of the call's collective.
struct Entry {
  const algorithms::AlgorithmInfo* info = nullptr;
  std::optional<std::string> why_not;  // not applicable
  std::vector<Option> options;         // the defaults first, then the variants in order
  std::optional<Time> bound;           // its registry lower bound, where it has one
  bool pruned = false;                 // not built: the bound exceeded the best prediction
  std::string not_evaluated;           // not built: why (too large to simulate)
  // Under a model no formula describes: the defaults' formula under the model's closed-form
  // part (search_steps.h, rank_unpriced), and the work of simulating them and their variants.
  std::optional<Time> ranking;
  double simulation_work = 0;
  // Simulated with its defaults only: the one candidate simulated whatever its cost, when
  // with its variants it would exceed kUnpricedWork (search_steps.h, rank_unpriced).
  bool defaults_only = false;

  // The index of the best evaluated option (least value; ties: the earlier), or nullopt.
  std::optional<std::size_t> best() const;
};

// The composition candidate (compose.h): the phases' own choices, run one after the other.
struct Composed {
  Decision first;
  Decision second;
  // The phases' least-time default-parameter choices, also composed when it is simulated
  // (the exhaustive search does the same): composed, either pair can be faster.
  std::vector<Decision> alternative;
  double work = 0;    // both pairs of phase schedules
  Time estimate = 0;  // the phases' predictions added up (they may overlap across ranks)
  std::optional<Time> simulated;
  std::uint64_t simulated_bytes = 0;
  std::uint64_t estimated_bytes = 0;
  Time value() const { return simulated ? *simulated : estimate; }
};

// The schedule of the fastest candidate simulated so far, kept for plan() so that its choice
// is not built a second time (at p = 4,096 under a placement, reduce_scatter_block's
// recursive halving has 17 M ops: seconds to build). One at a time: a faster one replaces
// it, so it costs at most one schedule's memory beside those being built. Thread-safe (the
// candidates are simulated on several threads).
class KeptSchedule {
 public:
  // Keeps `schedule` (of the candidate `key`, simulated at `time`) if it is the fastest yet.
  void offer(const std::string& key, Time time, Schedule&& schedule);
  // The schedule kept for `key`, moved out; nullopt if another (or none) is kept.
  std::optional<Schedule> take(const std::string& key);

 private:
  std::mutex mutex_;
  std::string key_;
  std::optional<Time> time_;
  std::optional<Schedule> schedule_;
};

// What names a candidate's schedule: a registry algorithm with its parameters, or a
// composition with its phases'.
std::string kept_key(std::string_view algorithm, const algorithms::Params& params);
std::string kept_key(const Decision& d);

struct Search {
  // The caller's spec (begin()'s argument), which must outlive the search: not copied (an
  // alltoallv's p^2 counts are 134 MB at p = 4,096).
  const CollectiveSpec& spec;
  CostModel model;
  PlanOptions options;
  std::vector<Entry> entries;  // registry order
  std::optional<Composed> composed;
  double spent = 0;                    // of options.simulation_budget
  std::shared_ptr<KeptSchedule> kept;  // null: the simulated schedules are not kept
};

// The default search (select.h, "How candidates are priced"), up to the choice. With `keep`,
// the fastest simulated schedule is kept (Search::kept) for the caller to take. `spec` must
// outlive the search (Search::spec refers to it).
Search begin(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
             bool compositions = true, bool keep = false);
// The choice by what `s` knows now, with every candidate for explain().
Decision decide(const Search& s);
// The choice restricted to default parameters (the exhaustive compositions' second try).
Decision decide_defaults(const Search& s);
// Records the simulation of `d`'s schedule; true if `d` is still the choice (its time is now
// a simulation), false if another candidate must be built.
bool confirm(Search& s, const Decision& d, const Schedule& schedule, Time simulated);

// The reference: every candidate simulated (bound pruning with options.prune); the chosen
// schedule.
struct Outcome {
  Decision decision;
  Schedule schedule;
};
Outcome exhaustive(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options);

// decide() for an explicit algorithm: its estimate where the formula is exact, or where its
// work exceeds the simulation budget; its simulation otherwise.
Decision decide_named(const CollectiveSpec& spec, const CostModel& model,
                      const algorithms::AlgorithmInfo& info, const algorithms::Params& params,
                      const PlanOptions& options);

// The root plan_best_root's default search chooses (select.h).
Rank best_root(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options);

// The composition of two phase algorithms for `spec` (compose.h) as one schedule.
Schedule build_composed(const CollectiveSpec& spec, const CostModel& model,
                        const std::string& first, const algorithms::Params& first_params,
                        const std::string& second, const algorithms::Params& second_params);

// simulate() that insists on a complete run (a registry schedule never deadlocks).
Time simulate_checked(const Schedule& schedule, const CostModel& model);

// The decision cache by call shape (decide()): thread-safe, bounded by entries (256, the
// least recently used first out) and by the counts their specs hold together (at most
// kCachedDecisionCounts, the newest entry kept whatever its size): an MPI program whose
// alltoallv counts change from call to call would otherwise keep 256 copies of p^2 counts
// (34 GB at p = 4,096). A lookup compares in place; it copies nothing.
inline constexpr std::size_t kCachedDecisionCounts = std::size_t{1} << 22;
std::optional<Decision> cached_decision(const CollectiveSpec& spec, const CostModel& model,
                                        const PlanOptions& options);
void cache_decision(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
                    const Decision& decision);

}  // namespace optcoll::search
