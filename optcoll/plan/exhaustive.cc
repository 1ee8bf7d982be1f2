// SPDX-License-Identifier: Apache-2.0
// File: the exhaustive search (search.h): every candidate and variant built and simulated,
// the registry bounds skipping those that cannot win; the reference the default search is
// tested against (tests/plan/select_equivalence_test.cc) and what `--exhaustive` runs.
#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/plan/compose.h"
#include "optcoll/plan/search.h"
#include "optcoll/plan/search_steps.h"

namespace optcoll::search {
namespace {

// The least simulated time so far (of the default parameters only with `defaults`, which is
// never less: what a composition's phase search prunes against, since it also needs its
// best default-parameter plan).
std::optional<Time> best_simulated(const Search& s, bool defaults) {
  std::optional<Time> best;
  for (const Entry& e : s.entries) {
    for (std::size_t i = 0; i < e.options.size() && (i == 0 || !defaults); ++i) {
      const Option& o = e.options[i];
      if (o.simulated && (!best || *o.simulated < *best)) best = *o.simulated;
    }
  }
  return best;
}

Search simulate_all(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
                    bool defaults) {
  Search s{spec, model, options, make_entries(spec, model), std::nullopt, 0, nullptr};
  s.options.exhaustive = true;
  parallel_for(s.entries.size(), options.workers,
               [&](std::size_t i) { prepare_entry(s.entries[i], spec, model, /*price=*/false); });
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    Entry& e = s.entries[i];
    if (!options.prune) e.bound.reset();
    if (!e.why_not && e.not_evaluated.empty()) which.push_back(i);
  }
  simulate_entries(s, which, [&] { return best_simulated(s, defaults); });
  return s;
}

// The composition from the phases' best plans, and from their best default-parameter plans:
// composed, either can be faster (ranks enter the second phase at different times, and the
// simulator's greedy start order makes the composition's time depend on the parts).
std::optional<Composed> composition(const CollectiveSpec& spec, const CostModel& model,
                                    const PlanOptions& options) {
  const auto parts = composition_for(spec);
  if (!parts) return std::nullopt;
  try {
    const Search first = simulate_all(parts->first, model, options, /*defaults=*/true);
    const Search second = simulate_all(parts->second, model, options, /*defaults=*/true);
    std::optional<Composed> best;
    for (const bool defaults : {false, true}) {
      Composed c;
      c.first = defaults ? decide_defaults(first) : decide(first);
      c.second = defaults ? decide_defaults(second) : decide(second);
      if (best && c.first.algorithm == best->first.algorithm &&
          c.first.params == best->first.params && c.second.algorithm == best->second.algorithm &&
          c.second.params == best->second.params) {
        break;  // the default-parameter phases are the same plans
      }
      const Schedule schedule = build_composed(spec, model, c.first.algorithm, c.first.params,
                                               c.second.algorithm, c.second.params);
      c.simulated = simulate_checked(schedule, model);
      c.simulated_bytes = bytes_moved(schedule);
      c.estimate = *c.simulated;
      if (!best || *c.simulated < *best->simulated) best = std::move(c);
    }
    return best;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotApplicable) return std::nullopt;
    throw;
  }
}

}  // namespace

Outcome exhaustive(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options) {
  Search s = simulate_all(spec, model, options, /*defaults=*/false);
  s.composed = composition(spec, model, options);
  Decision d = decide(s);
  // Only numbers were kept (at p = 1024 a ring's schedule is ~100 MB): build the choice again.
  Schedule schedule =
      d.phases.empty()
          ? algorithms::build(algorithms::lookup(d.algorithm, spec.kind), spec, d.params, model)
          : build_composed(spec, model, d.phases[0].algorithm, d.phases[0].params,
                           d.phases[1].algorithm, d.phases[1].params);
  const Time predicted = simulate_checked(schedule, model);
  OPTCOLL_CHECK(predicted == d.predicted_time, "{} predicted {} when rebuilt, {} before",
                d.algorithm, predicted, d.predicted_time);
  return {std::move(d), std::move(schedule)};
}

Schedule build_composed(const CollectiveSpec& spec, const CostModel& model,
                        const std::string& first, const algorithms::Params& first_params,
                        const std::string& second, const algorithms::Params& second_params) {
  const auto parts = composition_for(spec);
  OPTCOLL_CHECK(parts.has_value(), "{} has no composition", describe(spec));
  const Schedule a = algorithms::build(algorithms::lookup(first, parts->first.kind), parts->first,
                                       first_params, model);
  const Schedule b = algorithms::build(algorithms::lookup(second, parts->second.kind),
                                       parts->second, second_params, model);
  Schedule composed = compose(spec, *parts, a, b);
  composed.algorithm = "compose(" + first + ", " + second + ")";
  return composed;
}

}  // namespace optcoll::search
