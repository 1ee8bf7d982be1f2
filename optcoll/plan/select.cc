// SPDX-License-Identifier: Apache-2.0
// File: algorithm selection by simulated cost.
#include "optcoll/plan/select.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "optcoll/algorithms/planners/best_root.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/compose.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

Time predict(const Schedule& schedule, const CostModel& model) {
  const SimResult result = simulate(schedule, model);
  OPTCOLL_CHECK(result.status == SimStatus::kOk, "{} deadlocks in simulation: {}",
                schedule.algorithm, result.deadlock);
  return result.makespan;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", bytes / 1073741824.0);
  if (bytes >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= (std::uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
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
  p.candidates.push_back(
      {p.algorithm, p.predicted_time, {}, p.schedule.params, bytes_moved(p.schedule), {}});
  return p;
}

// Parameter sets tried besides the declared defaults (whose "auto" values the builder
// resolves from the model): radix in {2, 3, 4, 8}; segment halved and doubled around the
// value the builder chose. Deterministic: the variants are tried in this order after the
// defaults, and a variant replaces the best so far only when strictly faster.
std::vector<algorithms::Params> param_variants(const algorithms::AlgorithmInfo& info,
                                               const algorithms::Params& defaults,
                                               const algorithms::Params& resolved) {
  std::vector<algorithms::Params> variants;
  for (const auto& param : info.params()) {
    if (param.name == "radix") {
      for (const char* radix : {"2", "3", "4", "8"}) {
        algorithms::Params v = defaults;
        v.set("radix", radix);
        if (!(v == defaults)) variants.push_back(std::move(v));
      }
    } else if (param.name == "segment" && resolved.has("segment")) {
      const auto chosen = resolved.get_int("segment");
      for (const auto segment : {chosen / 2, chosen * 2}) {
        if (segment < 1 || segment == chosen) continue;
        algorithms::Params v = defaults;
        v.set("segment", std::to_string(segment));
        variants.push_back(std::move(v));
      }
    }
  }
  return variants;
}

// The fastest schedule of one algorithm over its default parameters and param_variants, and
// (when a variant won and `keep_default` is set) the default parameters' schedule too.
struct Best {
  Schedule schedule;
  Time predicted = 0;
  std::optional<Schedule> default_schedule;  // set only when it differs from `schedule`
  Time default_predicted = 0;
};
Best best_of(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
             const CostModel& model, const algorithms::Params& defaults, bool variants,
             bool keep_default) {
  Best best{algorithms::build(info, spec, defaults, model), 0, std::nullopt, 0};
  best.predicted = predict(best.schedule, model);
  best.default_predicted = best.predicted;
  if (!variants) return best;
  const auto resolved = algorithms::Params::parse(best.schedule.params);
  for (const auto& variant : param_variants(info, defaults, resolved)) {
    if (algorithms::why_not(info, spec, variant)) continue;
    Schedule schedule = algorithms::build(info, spec, variant, model);
    const Time predicted = predict(schedule, model);
    if (predicted < best.predicted) {
      if (keep_default && !best.default_schedule) best.default_schedule = std::move(best.schedule);
      best.schedule = std::move(schedule);
      best.predicted = predicted;
    }
  }
  return best;
}

struct AutoOptions {
  bool compositions = true;  // consider plan_composed
  bool variants = true;      // try param_variants
  bool prune = true;         // skip candidates whose registry bound shows they cannot win
};
// With `best_default`, also the best plan over default parameters only (the same candidates'
// first builds: no second pass).
Plan plan_auto(const CollectiveSpec& spec, const CostModel& model, AutoOptions options,
               Plan* best_default = nullptr);

// The best registry plan of each phase of spec's composition (compose.h), run one after the
// other as one schedule; nullopt when the kind has no composition or a phase has no
// applicable algorithm. Phases are planned without compositions (no recursion).
std::optional<Plan> plan_composed(const CollectiveSpec& spec, const CostModel& model, bool prune) {
  const auto composition = composition_for(spec);
  if (!composition) return std::nullopt;
  try {
    // The phases' best plans with parameter variants, and with default parameters only:
    // composed, either can be faster (ranks enter the second phase at different times, and
    // the simulator's greedy start order makes the composition's time depend on the parts).
    std::optional<Plan> best;
    const AutoOptions phase_options{.compositions = false, .variants = true, .prune = prune};
    Plan first_default;
    Plan second_default;
    const Plan first = plan_auto(composition->first, model, phase_options, &first_default);
    const Plan second = plan_auto(composition->second, model, phase_options, &second_default);
    const bool same = first_default.algorithm == first.algorithm &&
                      first_default.schedule.params == first.schedule.params &&
                      second_default.algorithm == second.algorithm &&
                      second_default.schedule.params == second.schedule.params;
    for (const auto& [a, b] :
         {std::pair<const Plan*, const Plan*>{&first, &second},
          std::pair<const Plan*, const Plan*>{&first_default, &second_default}}) {
      if (best && same) break;  // the default-parameter phases are the same plans
      const Plan& first_phase = *a;
      const Plan& second_phase = *b;
      Plan p;
      p.schedule = compose(spec, *composition, first_phase.schedule, second_phase.schedule);
      p.algorithm = "compose(" + first_phase.algorithm + ", " + second_phase.algorithm + ")";
      p.schedule.algorithm = p.algorithm;
      p.predicted_time = predict(p.schedule, model);
      if (!best || p.predicted_time < best->predicted_time) best = std::move(p);
    }
    return best;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotApplicable) return std::nullopt;
    throw;
  }
}

// What one worker of plan_auto found: every candidate's (predicted, params) by registry
// index, and its own best and best-default schedules (the only schedules kept: at p = 1024 a
// ring's schedule is ~100 MB).
struct WorkerBest {
  std::optional<std::size_t> best, best_default;  // registry indices
  Schedule schedule, default_schedule;
  Time predicted = 0, default_predicted = 0;
};

// Candidates are independent (builders and the simulator are pure functions of their
// arguments), so up to kPlanningWorkers threads evaluate them, each taking the next index;
// the result is the same as one thread's: the least predicted time, ties to the earlier
// registry entry. Measured (docs/benchmarks.md, "Selection cost at scale"): allreduce at
// p = 1024 on 2 cores from 47 s to about half.
constexpr unsigned kPlanningWorkers = 2;

Plan plan_auto(const CollectiveSpec& spec, const CostModel& model, AutoOptions options,
               Plan* best_default) {
  const auto infos = algorithms::algorithms_for(spec.kind);
  std::vector<std::optional<Candidate>> results(infos.size());
  std::vector<std::optional<std::string>> reasons(infos.size());
  std::vector<std::optional<Time>> bounds(infos.size());  // set: the registry's bound
  // The applicable candidates: first those without a bound, then (once their best is
  // known) those whose bound leaves them a chance (file comment, "Pruning").
  std::vector<std::size_t> unbounded;
  std::vector<std::size_t> bounded;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const auto* info = infos[i];
    if (auto reason = algorithms::why_not(*info, spec, algorithms::resolve_params(*info, {}))) {
      reasons[i] = std::move(*reason);
      continue;
    }
    if (options.prune && info->bound != nullptr) bounds[i] = info->bound(spec, model);
    (bounds[i] ? bounded : unbounded).push_back(i);
  }
  const std::vector<std::size_t>* order = &unbounded;
  std::atomic<std::size_t> next{0};
  const bool want_default = best_default != nullptr;
  auto work = [&](WorkerBest& mine) {
    for (std::size_t k = next++; k < order->size(); k = next++) {
      const std::size_t i = (*order)[k];
      const auto* info = infos[i];
      const algorithms::Params params = algorithms::resolve_params(*info, {});
      auto [schedule, predicted, default_schedule, default_predicted] =
          best_of(*info, spec, model, params, options.variants, want_default);
      Candidate built{std::string(info->name), predicted, {}, schedule.params, 0, {}};
      built.bytes_moved = bytes_moved(schedule);
      results[i] = std::move(built);
      // Ties go to the earlier registry entry: a worker may meet a bounded candidate after a
      // later entry (the unbounded ones come first).
      const auto before = [i](Time t, Time best_t, std::size_t best_i) {
        return t < best_t || (t == best_t && i < best_i);
      };
      if (want_default && (!mine.best_default ||
                           before(default_predicted, mine.default_predicted, *mine.best_default))) {
        mine.best_default = i;
        mine.default_schedule = default_schedule ? std::move(*default_schedule) : schedule;
        mine.default_predicted = default_predicted;
      }
      if (!mine.best || before(predicted, mine.predicted, *mine.best)) {
        mine.best = i;
        mine.schedule = std::move(schedule);
        mine.predicted = predicted;
      }
    }
  };
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(
      {kPlanningWorkers, std::max(1u, std::thread::hardware_concurrency()), infos.size()}));
  std::vector<WorkerBest> per_worker(std::max(1u, workers));
  // Evaluates the candidates of *order on the workers (each keeps its bests in per_worker).
  auto evaluate = [&] {
    next = 0;
    std::vector<std::exception_ptr> failures(per_worker.size());
    const std::size_t workers_needed =
        std::min(per_worker.size(), std::max<std::size_t>(1, order->size()));
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers_needed; ++w) {
      threads.emplace_back([&, w] {
        try {
          work(per_worker[w]);
        } catch (...) {
          failures[w] = std::current_exception();
          next = order->size();  // the others stop at their next candidate
        }
      });
    }
    try {
      work(per_worker[0]);
    } catch (...) {
      failures[0] = std::current_exception();
      next = order->size();
    }
    for (auto& t : threads) t.join();
    for (const auto& failure : failures) {
      if (failure) std::rethrow_exception(failure);
    }
  };
  evaluate();
  // Pruning: a bounded candidate is built only if its bound is within the tie tolerance of
  // the best prediction so far (with `best_default`, of the best default-parameter one, which
  // is never less). Decided against the unbounded candidates alone, so which candidates are
  // built does not depend on the workers' timing.
  std::optional<Time> threshold;
  for (const auto& w : per_worker) {
    const std::optional<std::size_t>& index = want_default ? w.best_default : w.best;
    const Time predicted = want_default ? w.default_predicted : w.predicted;
    if (index && (!threshold || predicted < *threshold)) threshold = predicted;
  }
  if (threshold) *threshold *= 1 + kTieTolerance;
  std::vector<std::size_t> pruned;
  std::vector<std::size_t> chance;
  for (const std::size_t i : bounded) {
    (threshold && *bounds[i] > *threshold ? pruned : chance).push_back(i);
  }
  order = &chance;
  evaluate();
  // The workers' bests, merged as one thread would have: least time, then registry order.
  Plan best;
  bool found_best = false;
  std::size_t best_index = 0;
  std::size_t default_index = 0;
  bool found_default = false;
  for (auto& w : per_worker) {
    if (w.best && (!found_best || w.predicted < best.predicted_time ||
                   (w.predicted == best.predicted_time && *w.best < best_index))) {
      found_best = true;
      best_index = *w.best;
      best.schedule = std::move(w.schedule);
      best.algorithm = std::string(infos[*w.best]->name);
      best.predicted_time = w.predicted;
    }
    if (want_default && w.best_default &&
        (!found_default || w.default_predicted < best_default->predicted_time ||
         (w.default_predicted == best_default->predicted_time &&
          *w.best_default < default_index))) {
      found_default = true;
      default_index = *w.best_default;
      best_default->schedule = std::move(w.default_schedule);
      best_default->algorithm = std::string(infos[*w.best_default]->name);
      best_default->predicted_time = w.default_predicted;
    }
  }
  if (found_best) {
    // Near-ties: the fewest bytes moved, then the earlier registry entry (file comment).
    // The workers kept only their fastest schedules, so another choice is built again.
    std::size_t chosen = best_index;
    for (std::size_t i = 0; i < infos.size(); ++i) {
      if (!results[i] || *results[i]->predicted > best.predicted_time * (1 + kTieTolerance)) {
        continue;
      }
      const auto bytes = results[i]->bytes_moved;
      const auto chosen_bytes = results[chosen]->bytes_moved;
      if (bytes < chosen_bytes || (bytes == chosen_bytes && i < chosen)) chosen = i;
    }
    if (chosen != best_index) {
      best.schedule = algorithms::build(*infos[chosen], spec,
                                        algorithms::Params::parse(results[chosen]->params), model);
      best.algorithm = std::string(infos[chosen]->name);
      best.predicted_time = predict(best.schedule, model);
      OPTCOLL_CHECK(best.predicted_time == *results[chosen]->predicted,
                    "{} predicted {} when rebuilt, {} before", best.algorithm, best.predicted_time,
                    *results[chosen]->predicted);
    }
    best.params = algorithms::Params::parse(best.schedule.params);
  }
  if (found_default) {
    best_default->params = algorithms::Params::parse(best_default->schedule.params);
  }
  bool found = found_best;
  std::vector<Candidate> applicable;
  std::vector<Candidate> skipped;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    if (results[i]) applicable.push_back(std::move(*results[i]));
    if (reasons[i]) {
      skipped.push_back({std::string(infos[i]->name), std::nullopt, *reasons[i], {}, 0, {}});
    }
  }
  std::vector<Candidate> not_built;
  for (const std::size_t i : pruned) {
    not_built.push_back({std::string(infos[i]->name), std::nullopt, {}, {}, 0, bounds[i]});
  }
  if (options.compositions) {
    if (auto composed = plan_composed(spec, model, options.prune)) {
      applicable.push_back({composed->algorithm,
                            composed->predicted_time,
                            {},
                            composed->schedule.params,
                            bytes_moved(composed->schedule),
                            {}});
      if (!found || composed->predicted_time < best.predicted_time) {
        found = true;
        best.params = {};
        best.schedule = std::move(composed->schedule);
        best.algorithm = composed->algorithm;
        best.predicted_time = composed->predicted_time;
      }
    }
  }
  if (!found) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("no registry algorithm applies to {}", describe(spec)));
  }
  std::stable_sort(
      applicable.begin(), applicable.end(),
      [](const Candidate& a, const Candidate& b) { return *a.predicted < *b.predicted; });
  std::stable_sort(not_built.begin(), not_built.end(),
                   [](const Candidate& a, const Candidate& b) { return *a.bound < *b.bound; });
  best.candidates = std::move(applicable);
  best.candidates.insert(best.candidates.end(), not_built.begin(), not_built.end());
  best.candidates.insert(best.candidates.end(), skipped.begin(), skipped.end());
  best.lower_bound = lower_bound(Layout(spec), model);
  best.model = model;
  return best;
}

}  // namespace

std::uint64_t bytes_moved(const Schedule& schedule) {
  std::uint64_t elements = 0;
  for (const auto& program : schedule.ranks) {
    for (const auto& op : program.ops) {
      if (const auto* send = std::get_if<Send>(&op.action)) {
        elements += static_cast<std::uint64_t>(send->src.count);
      }
    }
  }
  return elements * schedule.spec.elem_bytes;
}

Plan plan(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
          const algorithms::Params& params, const PlanOptions& options) {
  validate(spec);
  validate_for(model, spec.nranks);
  if (algorithm.empty() || algorithm == "auto") {
    if (!params.empty()) {
      throw_invalid("algorithm parameters ({}) need an explicit algorithm, not auto",
                    params.to_string());
    }
    return plan_auto(spec, model, AutoOptions{.prune = options.prune});
  }
  return plan_named(spec, model, algorithm, params);
}

Plan plan_best_root(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm,
                    const algorithms::Params& params, Rank max_ranks, const PlanOptions& options) {
  if (!is_rooted(spec.kind)) {
    throw_invalid("{} has no root to choose", collective_name(spec.kind));
  }
  // An algorithm that knows its best root (algorithms/planners/best_root.h) is asked once.
  if (!algorithm.empty() && algorithm != "auto") {
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
  std::optional<Plan> best;
  for (Rank root = 0; root < spec.nranks; ++root) {
    CollectiveSpec candidate = spec;
    candidate.root = root;
    Plan p = plan(candidate, model, algorithm, params, options);
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
      text += fmt::format(" {} {:<{}}  {:>12}  x{:.2f}  moves {}\n", mark, label(c), width,
                          format_time(*c.predicted, model), ratio, format_bytes(c.bytes_moved));
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
  return text;
}

}  // namespace optcoll
