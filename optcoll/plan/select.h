// SPDX-License-Identifier: Apache-2.0
// File: choosing an algorithm for a call. `plan()` returns the schedule to run with its
// predicted time, and, for "auto", every candidate the registry has for the collective with
// its predicted time or the reason it does not apply (explain()).
//
// Selection order (design.md 3.10): an explicit algorithm name; otherwise the least predicted
// time among the registry's applicable algorithms. Predictions are exact simulations of each
// candidate's schedule under the model (the simulator is fast enough for every registry
// algorithm at the sizes a call has). Near-ties — candidates predicted within kTieTolerance
// of the least time — go to the one that moves the fewest bytes in all (then the earlier
// registry entry): the model often cannot tell them apart (a linear gather and a binomial
// tree tie on bandwidth through the root's one port), and the bytes a tree forwards cost
// what the model does not see (the forwarding ranks' processors and memory, a link's other
// traffic; docs/design.md 28).
// Parameters: each candidate is built with its declared defaults ("auto" values are resolved
// by the builder from the model, e.g. the segment size minimizing its cost formula), then
// with a few variants (radix 2, 3, 4, 8; the segment size halved and doubled); the
// fastest is kept (ties: the defaults, then the earlier variant) and reported with its
// parameters.
// Compositions (plan/compose.h): for allreduce, allgather(v), reduce_scatter(_block) and
// bcast, one more candidate "compose(A, B)": the best registry plan of each phase (reduce +
// bcast, gather(v) + bcast, reduce + scatter(v), scatterv + allgatherv) as one schedule; it
// is chosen only when strictly faster than the registry's choice. So auto is never
// predicted slower than that composition (tests/plan/compose_test.cc: the guard).
// Ties, in full: fewer bytes moved, the earlier registry entry, then the composition; within
// one algorithm the defaults, then the variants in the order above.
// Pruning: some algorithms have a registry lower bound that needs no schedule
// (algorithms.def, OPTCOLL_BOUND: the rings and pairwise exchanges, whose schedules have
// O(p^2) ops). The candidates without one are evaluated first; a bounded candidate is then
// built only if its bound is within kTieTolerance of their best prediction. A skipped one
// cannot win or tie (its time is at least its bound), so the choice is the one a full
// evaluation makes; explain() lists it with its bound. At p = 1024 this skips seconds of
// building per ring (docs/benchmarks.md, "Selection cost at scale").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// Relative width of a near-tie in auto selection (see the file comment).
inline constexpr double kTieTolerance = 0.01;

struct Candidate {
  std::string algorithm;          // registry name, "bcast/binomial"
  std::optional<Time> predicted;  // simulated makespan, when applicable
  std::string why_not;            // why it was skipped, when not
  std::string params;             // the parameters its schedule was built with
  std::uint64_t bytes_moved = 0;  // applicable: the bytes its messages carry, all ranks
  // Not built (pruned): its registry lower bound, which exceeded the best prediction.
  std::optional<Time> bound;
};

struct PlanOptions {
  // Skip building the candidates whose registry bound (algorithms.def, OPTCOLL_BOUND) shows
  // they cannot win. The choice is the same either way; without pruning every candidate
  // gets a prediction (slower at large p: a ring's schedule has O(p^2) ops).
  bool prune = true;
};

// The bytes all of `schedule`'s messages carry (the sends' slices times the element size).
std::uint64_t bytes_moved(const Schedule& schedule);

struct Plan {
  Schedule schedule;
  std::string algorithm;
  algorithms::Params params;
  Time predicted_time = 0;
  std::optional<Time> lower_bound;
  CostModel model;  // the model the predictions are in
  // Who chose the algorithm, for explanations: empty when plan() did (the model, or the
  // caller's explicit name); plan_tuned (tuning.h) says whether a tuning table or the model
  // decided, and why.
  std::string decided_by;
  // Every candidate considered: applicable ones sorted by predicted time (ties in registry
  // order), then those not built by their bound, then the inapplicable ones in registry
  // order. One entry for an explicit choice.
  std::vector<Candidate> candidates;

  // A table: one line per candidate with its predicted time (and ratio to the best) or its
  // reason, the chosen one marked.
  std::string explain() const;
};

// `algorithm` is "auto", a registry name ("gatherv/binomial") or a short name ("binomial").
// Parameters apply only to an explicit algorithm. Throws Error(kInvalidArgument) for a bad
// spec, model, name or parameter, Error(kNotApplicable) for an explicit inapplicable
// algorithm (with its why_not reason).
Plan plan(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm = "auto",
          const algorithms::Params& params = {}, const PlanOptions& options = {});

// For rooted collectives whose root the caller leaves to optcoll (`--root best`): plans
// every root (spec.root is ignored) and returns the plan with the least predicted time
// (ties: lowest root). An explicit algorithm with a best-root hook
// (optcoll/algorithms/planners/best_root.h) is asked for its root instead and planned once
// (its own tie-breaking). Throws Error(kInvalidArgument) for non-rooted kinds or nranks above
// `max_ranks` (the search costs nranks plans).
Plan plan_best_root(const CollectiveSpec& spec, const CostModel& model,
                    std::string_view algorithm = "auto", const algorithms::Params& params = {},
                    Rank max_ranks = 4096, const PlanOptions& options = {});

}  // namespace optcoll
