// SPDX-License-Identifier: Apache-2.0
// File: algorithm selection by simulated cost.
#include "optcoll/plan/select.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

Time predict(const Schedule& schedule, const CostModel& model) {
  const SimResult result = simulate(schedule, model);
  OPTCOLL_CHECK(result.status == SimStatus::kOk, "{} deadlocks in simulation: {}",
                schedule.algorithm, result.deadlock);
  return result.makespan;
}

Plan plan_named(const CollectiveSpec& spec, const CostModel& model, std::string_view name,
                const algorithms::Params& params) {
  const auto& info = algorithms::lookup(name, spec.kind);
  Plan p;
  p.schedule = algorithms::build(info, spec, params, model);
  p.algorithm = std::string(info.name);
  p.params = algorithms::Params::parse(p.schedule.params);
  p.predicted_time = predict(p.schedule, model);
  p.lower_bound = lower_bound(Layout(spec), model);
  p.model = model;
  p.candidates.push_back({p.algorithm, p.predicted_time, {}, p.schedule.params});
  return p;
}

Plan plan_auto(const CollectiveSpec& spec, const CostModel& model) {
  Plan best;
  bool found = false;
  std::vector<Candidate> applicable;
  std::vector<Candidate> skipped;
  for (const auto* info : algorithms::algorithms_for(spec.kind)) {
    const algorithms::Params params = algorithms::resolve_params(*info, {});
    if (auto reason = algorithms::why_not(*info, spec, params)) {
      skipped.push_back({std::string(info->name), std::nullopt, *reason, {}});
      continue;
    }
    Schedule schedule = algorithms::build(*info, spec, params, model);
    const Time predicted = predict(schedule, model);
    applicable.push_back({std::string(info->name), predicted, {}, schedule.params});
    if (!found || predicted < best.predicted_time) {
      found = true;
      best.params = algorithms::Params::parse(schedule.params);
      best.schedule = std::move(schedule);
      best.algorithm = std::string(info->name);
      best.predicted_time = predicted;
    }
  }
  if (!found) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("no registry algorithm applies to {}", describe(spec)));
  }
  std::stable_sort(
      applicable.begin(), applicable.end(),
      [](const Candidate& a, const Candidate& b) { return *a.predicted < *b.predicted; });
  best.candidates = std::move(applicable);
  best.candidates.insert(best.candidates.end(), skipped.begin(), skipped.end());
  best.lower_bound = lower_bound(Layout(spec), model);
  best.model = model;
  return best;
}

}  // namespace

Plan plan(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
          const algorithms::Params& params) {
  validate(spec);
  validate_for(model, spec.nranks);
  if (algorithm.empty() || algorithm == "auto") {
    if (!params.empty()) {
      throw_invalid("algorithm parameters ({}) need an explicit algorithm, not auto",
                    params.to_string());
    }
    return plan_auto(spec, model);
  }
  return plan_named(spec, model, algorithm, params);
}

Plan plan_best_root(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
                    const algorithms::Params& params, Rank max_ranks) {
  if (!is_rooted(spec.kind)) {
    throw_invalid("{} has no root to choose", collective_name(spec.kind));
  }
  if (spec.nranks > max_ranks) {
    throw_invalid("choosing the best root plans every root; {} ranks exceed the limit of {}",
                  spec.nranks, max_ranks);
  }
  std::optional<Plan> best;
  for (Rank root = 0; root < spec.nranks; ++root) {
    CollectiveSpec candidate = spec;
    candidate.root = root;
    Plan p = plan(candidate, model, algorithm, params);
    if (!best || p.predicted_time < best->predicted_time) best = std::move(p);
  }
  return std::move(*best);
}

std::string Plan::explain() const {
  std::string text =
      fmt::format("{}: {} candidate(s)\n", describe(schedule.spec), candidates.size());
  std::size_t width = 9;
  auto label = [](const Candidate& c) {
    return c.params.empty() ? c.algorithm : c.algorithm + " (" + c.params + ")";
  };
  for (const auto& c : candidates) width = std::max(width, label(c).size());
  const Time best = predicted_time;
  for (const auto& c : candidates) {
    const char* mark = c.algorithm == algorithm ? "*" : " ";
    if (c.predicted) {
      const double ratio = best > 0 ? *c.predicted / best : 1.0;
      text += fmt::format(" {} {:<{}}  {:>12}  x{:.2f}\n", mark, label(c), width,
                          format_time(*c.predicted, model), ratio);
    } else {
      text += fmt::format(" {} {:<{}}  {:>12}  {}\n", mark, label(c), width, "-", c.why_not);
    }
  }
  if (lower_bound) {
    text +=
        fmt::format("   {:<{}}  {:>12}\n", "lower bound", width, format_time(*lower_bound, model));
  }
  return text;
}

}  // namespace optcoll
