// SPDX-License-Identifier: Apache-2.0
// File: decisions for an explicit algorithm and the best-root search of the default search
// (search.h).
#include <algorithm>
#include <set>

#include "optcoll/algorithms/planners/best_root.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/search.h"
#include "optcoll/plan/search_steps.h"

namespace optcoll::search {
namespace {

// The root that minimizes `info`'s estimate over every root (ties: the lowest), when the
// estimate is cheap enough to ask p times (its schedule, hence its formula, is O(p)).
std::optional<Rank> scanned_root(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                                 const CostModel& model) {
  const algorithms::Params defaults = algorithms::resolve_params(info, {});
  CollectiveSpec rooted = spec;
  std::optional<Rank> best;
  Time best_time = 0;
  for (Rank root = 0; root < spec.nranks; ++root) {
    rooted.root = root;
    if (algorithms::why_not(info, rooted, defaults)) continue;
    const auto e = info.estimate(rooted, defaults, model);
    if (!e || e->work > 8.0 * spec.nranks) return std::nullopt;
    if (!best || e->time < best_time) {
      best = root;
      best_time = e->time;
    }
  }
  return best;
}

// The roots worth a full decision (select.h, plan_best_root): every root up to
// kAllRootsUpTo ranks; above, root 0, the roots the algorithms' cheap best-root hooks give,
// and for the v-collectives the roots that minimize the cheap formulas (the linear and
// binomial trees': the optimal trees' estimates above planners::kDpInEstimate ranks are
// theirs, so their best roots are among these).
std::vector<Rank> candidate_roots(const CollectiveSpec& spec, const CostModel& model) {
  std::vector<Rank> roots;
  if (spec.nranks <= kAllRootsUpTo) {
    for (Rank r = 0; r < spec.nranks; ++r) roots.push_back(r);
    return roots;
  }
  std::set<Rank> chosen{0};
  for (const auto* info : algorithms::algorithms_for(spec.kind)) {
    const algorithms::Params defaults = algorithms::resolve_params(*info, {});
    if (const auto hooked =
            algorithms::planned_best_root(*info, spec, defaults, model, /*allow_dp=*/false)) {
      chosen.insert(*hooked);
    } else if (takes_counts(spec.kind)) {
      if (const auto scanned = scanned_root(*info, spec, model)) chosen.insert(*scanned);
    }
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace

Decision decide_named(const CollectiveSpec& spec, const CostModel& model,
                      const algorithms::AlgorithmInfo& info, const algorithms::Params& params,
                      const PlanOptions& options) {
  Decision d;
  d.algorithm = std::string(info.name);
  d.params = params;
  const algorithms::Params resolved = algorithms::resolve_params(info, params);
  if (!options.is_exhaustive() && !algorithms::why_not(info, spec, resolved)) {
    if (const auto e = info.estimate(spec, resolved, model);
        e && (e->exact || e->work > options.simulation_budget)) {
      d.predicted_time = e->time;
      d.how = e->exact ? Evaluation::kExactEstimate : Evaluation::kEstimated;
      d.candidates.push_back({d.algorithm, e->time, {}, e->params, e->bytes, {}, d.how});
      return d;
    }
  }
  const Schedule schedule = algorithms::build(info, spec, params, model);
  d.predicted_time = simulate_checked(schedule, model);
  d.how = Evaluation::kSimulated;
  d.candidates.push_back(
      {d.algorithm, d.predicted_time, {}, schedule.params, bytes_moved(schedule), {}, d.how});
  return d;
}

Rank best_root(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options) {
  std::optional<Rank> best;
  Time best_time = 0;
  CollectiveSpec rooted = spec;
  for (const Rank root : candidate_roots(spec, model)) {
    rooted.root = root;
    const Time t = optcoll::decide(rooted, model, "auto", {}, options).predicted_time;
    if (!best || t < best_time) {
      best = root;
      best_time = t;
    }
  }
  return *best;
}

}  // namespace optcoll::search
