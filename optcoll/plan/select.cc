// SPDX-License-Identifier: Apache-2.0
// File: algorithm selection (select.h): the default search by cost formulas and a few
// simulations, the exhaustive search by simulation, and what they share (the candidates,
// the choice, the explanation).
#include "optcoll/plan/select.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/algorithms/planners/best_root.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/search.h"
#include "optcoll/plan/search_steps.h"
#include "optcoll/schedule/builder.h"

namespace optcoll {
namespace {

using algorithms::Params;

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", bytes / 1073741824.0);
  if (bytes >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= (std::uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

// The schedule of a decision (a registry algorithm with its parameters, or a composition).
Schedule build_decided(const CollectiveSpec& spec, const CostModel& model, const Decision& d) {
  if (d.phases.empty()) {
    return algorithms::build(algorithms::lookup(d.algorithm, spec.kind), spec, d.params, model);
  }
  return search::build_composed(spec, model, d.phases[0].algorithm, d.phases[0].params,
                                d.phases[1].algorithm, d.phases[1].params);
}

// Empties every program but `rank`'s (their memory freed), if the plan has them.
void keep_only(Plan& plan, Rank rank) {
  for (std::size_t r = 0; r < plan.schedule.ranks.size(); ++r) {
    if (r != static_cast<std::size_t>(rank)) plan.schedule.ranks[r] = RankProgram{};
  }
  plan.only_rank = rank;
}

// The schedule of a decision with rank `rank`'s program only (OneRankBuild).
Schedule build_decided_for(const CollectiveSpec& spec, const CostModel& model, const Decision& d,
                           Rank rank) {
  const OneRankBuild only(rank);
  return build_decided(spec, model, d);
}

Plan plan_from(const CollectiveSpec& spec, const CostModel& model, const Decision& d,
               Schedule schedule, Time predicted) {
  Plan p;
  p.schedule = std::move(schedule);
  p.algorithm = d.algorithm;
  p.params = d.phases.empty() ? Params::parse(p.schedule.params) : Params{};
  p.predicted_time = predicted;
  p.lower_bound = lower_bound(Layout::borrowing(spec), model);
  p.model = model;
  p.candidates = d.candidates;
  return p;
}

// Whether a plan for one rank takes decision `d` of `s` as it is, its time the search's: a
// simulation, an exact formula, or an inexact one whose whole schedule would be too large to
// build and simulate for a confirmation (select.h, kOneRankBuildWork).
bool needs_no_simulation(const search::Search& s, const Decision& d) {
  return d.how == Evaluation::kSimulated || d.how == Evaluation::kExactEstimate ||
         search::chosen_work(s, d) > kOneRankBuildWork;
}

Plan plan_auto(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options) {
  if (options.is_exhaustive()) {
    search::Outcome outcome = search::exhaustive(spec, model, options);
    Plan p = plan_from(spec, model, outcome.decision, std::move(outcome.schedule),
                       outcome.decision.predicted_time);
    return p;
  }
  // A decision made before whose time is a simulation: build it (the same schedule: builds
  // and simulations are deterministic, so its time is the one simulated then).
  if (auto cached = search::cached_decision(spec, model, options);
      cached && cached->how == Evaluation::kSimulated) {
    Schedule schedule = options.only_rank
                            ? build_decided_for(spec, model, *cached, *options.only_rank)
                            : build_decided(spec, model, *cached);
    const Time simulated = cached->predicted_time;
    return plan_from(spec, model, *cached, std::move(schedule), simulated);
  }
  // Choose, build the choice, and while its simulated time leaves another candidate looking
  // faster than it (its estimate was low), choose again with that knowledge: each round
  // turns one estimate into a simulation, so this ends. A choice the search simulated
  // already is not simulated again: at p = 512 a many-to-many schedule's simulation is
  // seconds (tests/plan/select_equivalence_test.cc checks that the two agree).
  // The search keeps the fastest schedule it simulated, usually the choice: not built again.
  // A choice priced by an exact formula (tests/plan/exact_estimate_test.cc holds every such
  // claim to the simulator) is not simulated again when its schedule is large: at p = 4,096
  // alltoall/linear's 33.5 M ops took as long to simulate as to build.
  search::Search s = search::begin(spec, model, options, /*compositions=*/true, /*keep=*/true);
  for (;;) {
    Decision d = search::decide(s);
    std::optional<Schedule> kept = s.kept->take(search::kept_key(d));
    if (options.only_rank && !kept && needs_no_simulation(s, d)) {
      search::cache_decision(spec, model, options, d);
      const Time predicted = d.predicted_time;
      return plan_from(spec, model, d, build_decided_for(spec, model, d, *options.only_rank),
                       predicted);
    }
    Schedule schedule = kept ? std::move(*kept) : build_decided(spec, model, d);
    if (d.how == Evaluation::kExactEstimate && schedule.op_count() > kResimulatedExactOps) {
      search::cache_decision(spec, model, options, d);
      const Time predicted = d.predicted_time;
      return plan_from(spec, model, d, std::move(schedule), predicted);
    }
    const Time simulated = d.how == Evaluation::kSimulated
                               ? d.predicted_time
                               : search::simulate_checked(schedule, model);
    if (search::confirm(s, d, schedule, simulated)) {
      d = search::decide(s);  // the candidates' list with the chosen one simulated
      search::cache_decision(spec, model, options, d);
      return plan_from(spec, model, d, std::move(schedule), simulated);
    }
  }
}

Plan plan_named(const CollectiveSpec& spec, const CostModel& model, std::string_view name,
                const Params& params, const PlanOptions& options) {
  const auto& info = algorithms::lookup(name, spec.kind);
  Decision d;
  d.algorithm = std::string(info.name);
  d.params = params;
  const Params resolved = algorithms::resolve_params(info, params);
  if (options.only_rank && !algorithms::why_not(info, spec, resolved)) {
    // Priced exactly, or too large to simulate whole: built for the one rank (plan_auto).
    const auto e = info.estimate(spec, resolved, model);
    if (e && (e->exact || e->work > kOneRankBuildWork)) {
      d.how = e->exact ? Evaluation::kExactEstimate : Evaluation::kEstimated;
      d.candidates.push_back({d.algorithm, e->time, {}, e->params, e->bytes, {}, d.how});
      return plan_from(spec, model, d, build_decided_for(spec, model, d, *options.only_rank),
                       e->time);
    }
  }
  Schedule schedule = algorithms::build(info, spec, params, model);
  const Time predicted = search::simulate_checked(schedule, model);
  d.candidates.push_back({d.algorithm,
                          predicted,
                          {},
                          schedule.params,
                          bytes_moved(schedule),
                          {},
                          Evaluation::kSimulated});
  return plan_from(spec, model, d, std::move(schedule), predicted);
}

void validate_call(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
                   const Params& params, const PlanOptions& options) {
  if (options.workers < 1) throw_invalid("PlanOptions::workers is 0: planning needs at least 1");
  validate(spec);
  if (options.only_rank && (*options.only_rank < 0 || *options.only_rank >= spec.nranks)) {
    throw_invalid("a plan for rank {} of a {}-rank call: ranks are 0 to {}", *options.only_rank,
                  spec.nranks, spec.nranks - 1);
  }
  validate_for(model, spec.nranks);
  if ((algorithm.empty() || algorithm == "auto") && !params.empty()) {
    throw_invalid("algorithm parameters ({}) need an explicit algorithm, not auto",
                  params.to_string());
  }
}

bool is_auto(std::string_view algorithm) { return algorithm.empty() || algorithm == "auto"; }

}  // namespace

std::string_view evaluation_name(Evaluation how) {
  switch (how) {
    case Evaluation::kSimulated:
      return "simulated";
    case Evaluation::kExactEstimate:
      return "formula, exact";
    case Evaluation::kEstimated:
      return "formula";
    case Evaluation::kInterCosts:
      return "formula at the inter-node costs, NICs shared";
    case Evaluation::kPruned:
      return "pruned by its bound";
    case Evaluation::kNotEvaluated:
      return "not evaluated";
    case Evaluation::kNotApplicable:
      return "not applicable";
  }
  return "?";
}

std::uint64_t bytes_moved(const Schedule& schedule) {
  std::uint64_t elements = 0;
  for (const auto& program : schedule.ranks) {
    for (const auto& op : program.ops) {
      if (is_send(op.action)) elements += static_cast<std::uint64_t>(message_count(op.action));
    }
  }
  return elements * schedule.spec.elem_bytes;
}

Plan plan(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
          const Params& params, const PlanOptions& options) {
  validate_call(spec, model, algorithm, params, options);
  Plan p = is_auto(algorithm) ? plan_auto(spec, model, options)
                              : plan_named(spec, model, algorithm, params, options);
  if (options.only_rank) keep_only(p, *options.only_rank);
  return p;
}

Decision decide(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
                const Params& params, const PlanOptions& options) {
  validate_call(spec, model, algorithm, params, options);
  if (!is_auto(algorithm)) {
    return search::decide_named(spec, model, algorithms::lookup(algorithm, spec.kind), params,
                                options);
  }
  if (auto cached = search::cached_decision(spec, model, options)) return std::move(*cached);
  Decision d;
  if (options.is_exhaustive()) {
    d = search::exhaustive(spec, model, options).decision;
  } else {
    search::Search s = search::begin(spec, model, options);
    d = search::decide(s);
  }
  search::cache_decision(spec, model, options, d);
  return d;
}

Plan plan_best_root(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
                    const Params& params, Rank max_ranks, const PlanOptions& options) {
  if (!is_rooted(spec.kind)) {
    throw_invalid("{} has no root to choose", collective_name(spec.kind));
  }
  validate_call(spec, model, algorithm, params, options);
  // An algorithm that knows its best root (algorithms/planners/best_root.h) is asked once.
  if (!is_auto(algorithm)) {
    const auto& info = algorithms::lookup(algorithm, spec.kind);
    if (const auto root = algorithms::planned_best_root(info, spec, params, model)) {
      CollectiveSpec chosen = spec;
      chosen.root = *root;
      return plan(chosen, model, algorithm, params, options);
    }
  }
  if (spec.nranks > max_ranks) {
    throw_invalid("choosing the best root plans every root; {} ranks exceed the limit of {}",
                  spec.nranks, max_ranks);
  }
  CollectiveSpec chosen = spec;
  if (is_auto(algorithm) && !options.is_exhaustive()) {
    chosen.root = search::best_root(spec, model, options);
    return plan(chosen, model, algorithm, params, options);
  }
  std::optional<Plan> best;
  for (Rank root = 0; root < spec.nranks; ++root) {
    chosen.root = root;
    Plan p = plan(chosen, model, algorithm, params, options);
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
      const bool estimated = c.how == Evaluation::kEstimated || c.how == Evaluation::kInterCosts;
      const std::string how = c.how == Evaluation::kSimulated
                                  ? std::string()
                                  : fmt::format("  ({})", evaluation_name(c.how));
      text += fmt::format(" {} {:<{}}  {:>12}  x{:.2f}  moves {}{}\n", mark, label(c), width,
                          (estimated ? "~" : "") + format_time(*c.predicted, model), ratio,
                          format_bytes(c.bytes_moved), how);
    } else if (c.bound) {
      const double ratio = best > 0 ? *c.bound / best : 1.0;
      text += fmt::format(" {} {:<{}}  {:>12}  x{:.2f}  at least (lower bound): not built\n", mark,
                          label(c), width, ">= " + format_time(*c.bound, model), ratio);
    } else {
      text += fmt::format(" {} {:<{}}  {:>12}  {}\n", mark, label(c), width, "-", c.why_not);
    }
  }
  if (lower_bound) {
    text +=
        fmt::format("   {:<{}}  {:>12}\n", "lower bound", width, format_time(*lower_bound, model));
  }
  const bool faster_exists = std::any_of(candidates.begin(), candidates.end(), [&](const auto& c) {
    return c.predicted && *c.predicted < best;
  });
  if (faster_exists) {
    text += fmt::format(
        "   (chosen among the candidates within {:.0f}% of the least time: it moves the fewest "
        "bytes)\n",
        kTieTolerance * 100);
  }
  if (std::any_of(candidates.begin(), candidates.end(), [](const auto& c) {
        return c.how == Evaluation::kEstimated || c.how == Evaluation::kInterCosts;
      })) {
    text +=
        "   (~: estimated by the algorithm's cost formula, not simulated; \"formula, exact\":"
        " the formula equals the simulation here)\n";
  }
  return text;
}

}  // namespace optcoll
