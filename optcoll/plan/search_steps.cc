// SPDX-License-Identifier: Apache-2.0
// File: the steps of the searches (search_steps.h).
#include "optcoll/plan/search_steps.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <limits>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/model/error.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::search {
namespace {

using algorithms::AlgorithmInfo;
using algorithms::Params;

// Parameter sets tried besides the declared defaults (whose "auto" values the builder
// resolves from the model): radix in {2, 3, 4, 8}; segment halved and doubled around the
// value the builder chose. Deterministic: the variants are tried in this order after the
// defaults, and a variant replaces the best so far only when strictly faster.
std::vector<Params> param_variants(const AlgorithmInfo& info, const Params& defaults,
                                   const Params& resolved) {
  std::vector<Params> variants;
  for (const auto& param : info.params()) {
    if (param.name == "radix") {
      for (const char* radix : {"2", "3", "4", "8"}) {
        Params v = defaults;
        v.set("radix", radix);
        if (!(v == defaults)) variants.push_back(std::move(v));
      }
    } else if (param.name == "segment" && resolved.has("segment")) {
      const auto chosen = resolved.get_int("segment");
      for (const auto segment : {chosen / 2, chosen * 2}) {
        if (segment < 1 || segment == chosen) continue;
        Params v = defaults;
        v.set("segment", std::to_string(segment));
        variants.push_back(std::move(v));
      }
    }
  }
  return variants;
}

// The variants that apply to the spec, as options.
std::vector<Option> variant_options(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                    const Params& defaults, const std::string& resolved) {
  std::vector<Option> out;
  for (auto& v : param_variants(info, defaults, Params::parse(resolved))) {
    if (algorithms::why_not(info, spec, v)) continue;
    Option o;
    o.params = std::move(v);
    out.push_back(std::move(o));
  }
  return out;
}

// The closed-form part of a model (estimate.h): what prices a schedule's size when the model
// has switches the formulas do not describe (the size does not depend on them).
CostModel closed_form_part(const CostModel& model) {
  CostModel part;
  part.alpha = model.alpha;
  part.beta = model.beta;
  part.gamma = model.gamma;
  part.copy = model.copy;
  part.per_byte = model.per_byte;
  return part;
}

// `info`'s estimate with `params` under `model`, or under a placement for a flat algorithm,
// its formula at the inter-node costs (prepare_entry).
std::optional<algorithms::Estimate> estimate_of(const AlgorithmInfo& info,
                                                const CollectiveSpec& spec,
                                                const algorithms::Params& params,
                                                const CostModel& model) {
  auto e = info.estimate(spec, params, model);
  if (e || !model.placement || algorithms::patterns::is_node_aware(info)) return e;
  e = info.estimate(spec, params, algorithms::patterns::shared_network_model(model));
  if (e) {
    e->exact = false;
    e->at_inter_costs = true;
  }
  return e;
}

// The defaults, then the variants in order (exhaustive's best_of), unless defaults_only.
void simulate_entry(Entry& e, const CollectiveSpec& spec, const CostModel& model,
                    KeptSchedule* kept) {
  Option& defaults = e.options[0];
  if (!defaults.simulated) simulate_option(defaults, *e.info, spec, model, kept);
  if (e.defaults_only) return;
  if (e.options.size() == 1) {
    auto variants = variant_options(*e.info, spec, defaults.params, defaults.simulated_params);
    e.options.insert(e.options.end(), variants.begin(), variants.end());
  }
  for (std::size_t i = 1; i < e.options.size(); ++i) {
    if (!e.options[i].simulated) simulate_option(e.options[i], *e.info, spec, model, kept);
  }
}

}  // namespace

void parallel_for(std::size_t n, unsigned workers, const std::function<void(std::size_t)>& fn) {
  const auto threads_used = static_cast<std::size_t>(std::min<std::size_t>(
      {std::max(1u, workers), std::max(1u, std::thread::hardware_concurrency()),
       std::max<std::size_t>(n, 1)}));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(n);
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        failures[i] = std::current_exception();
        next = n;  // the others stop at their next index
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < threads_used; ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

std::vector<Entry> make_entries(const CollectiveSpec& spec, const CostModel& model) {
  std::vector<Entry> entries;
  for (const auto* info : algorithms::algorithms_for(spec.kind)) {
    Entry e;
    e.info = info;
    e.why_not = algorithms::why_not(*info, spec, algorithms::resolve_params(*info, {}));
    // Without a placement every rank is its own node: a node-aware algorithm is then its
    // inter-node phase on all ranks, a flat candidate already there (plus hand-off copies).
    if (!e.why_not && !model.placement && algorithms::patterns::is_node_aware(*info)) {
      e.why_not =
          "needs a placement in the model (without one it is its inter-node phase, a "
          "flat algorithm already among the candidates)";
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

double pair_cost_dp_work(const AlgorithmInfo& info, const CollectiveSpec& spec,
                         const CostModel& model) {
  // The registry algorithms whose build runs the DP over all ranks (gather_trees.h's
  // optimal_tree_nonhomogeneous) when the model has per-pair costs.
  static constexpr std::array<std::string_view, 6> kAllRanksDp = {
      "gather/optimal",   "gatherv/optimal",       "scatter/optimal",
      "scatterv/optimal", "bcast/optimal_ordered", "reduce/optimal_ordered"};
  if (model.homogeneous() ||
      std::find(kAllRanksDp.begin(), kAllRanksDp.end(), info.name) == kAllRanksDp.end()) {
    return 0;
  }
  const auto p = static_cast<double>(spec.nranks);
  return p * p * p * p / 1000;
}

void prepare_entry(Entry& e, const CollectiveSpec& spec, const CostModel& model, bool price) {
  if (e.why_not) return;
  const AlgorithmInfo& info = *e.info;
  if (info.bound != nullptr) e.bound = info.bound(spec, model);
  e.options.assign(1, Option{});
  e.options[0].params = algorithms::resolve_params(info, {});
  Option& defaults = e.options[0];
  if (price) defaults.estimate = estimate_of(info, spec, defaults.params, model);
  // An estimate at the shared network's costs is from above: the candidate is also simulated
  // where that is affordable, as one no formula prices (rank_unpriced), its variants with it.
  if (defaults.estimate && !defaults.estimate->at_inter_costs) {
    defaults.work = defaults.estimate->work;
    auto variants = variant_options(info, spec, defaults.params, defaults.estimate->params);
    for (Option& v : variants) {
      v.estimate = info.estimate(spec, v.params, model);
      if (v.estimate) v.work = v.estimate->work;
    }
    e.options.insert(e.options.end(), variants.begin(), variants.end());
    return;
  }
  const auto sized = info.estimate(spec, defaults.params, closed_form_part(model));
  defaults.work = (sized ? sized->work : 0) + pair_cost_dp_work(info, spec, model);
  if (sized) e.ranking = sized->time;
  std::size_t variants = 0;  // those simulate_entry will add: radix 2, 3, 4, 8 or segment / 2, * 2
  for (const auto& param : info.params()) {
    variants += param.name == "radix" ? 3 : param.name == "segment" ? 2 : 0;
  }
  e.simulation_work = defaults.work * static_cast<double>(1 + variants);
  if (defaults.work > kMaxSimulatedWork && !defaults.estimate) {
    e.not_evaluated = fmt::format(
        "not evaluated: no formula for this model, and its schedule (about {:.1e} ops) is too "
        "large to simulate (limit {:.0e})",
        defaults.work, kMaxSimulatedWork);
  }
}

namespace {

// Whether some candidate of `s` has an estimate (a formula, or one at the shared network's
// costs) that a choice could rest on without simulating anything.
bool any_estimated(const Search& s) {
  return std::any_of(s.entries.begin(), s.entries.end(), [](const Entry& e) {
    return !e.why_not && !e.options.empty() && e.options[0].estimate.has_value();
  });
}

// A plan for one rank (an MPI process) simulates no whole schedule beyond kOneRankBuildWork
// while another candidate's estimate can be chosen (select.h), whether or not the others fit
// kUnpricedWork: the entries of `which` it may simulate, the others keeping their estimate or
// marked not evaluated.
std::vector<std::size_t> within_one_rank_work(Search& s, const std::vector<std::size_t>& which) {
  if (!s.options.only_rank || !any_estimated(s)) return which;
  std::vector<std::size_t> affordable;
  for (const std::size_t i : which) {
    Entry& e = s.entries[i];
    if (e.options[0].work <= kOneRankBuildWork) {
      affordable.push_back(i);
    } else if (!e.options[0].estimate) {
      e.not_evaluated =
          "not evaluated: no formula for this model, and a plan for one rank simulates no "
          "whole schedule of more than 2^20 ops";
    }
  }
  return affordable;
}

}  // namespace

std::vector<std::size_t> rank_unpriced(Search& s, const std::vector<std::size_t>& which) {
  std::vector<std::size_t> ranked = within_one_rank_work(s, which);
  double total = 0;
  for (const std::size_t i : ranked) total += s.entries[i].simulation_work;
  if (total <= kUnpricedWork) return ranked;
  const auto rank = [&](std::size_t i) {
    return s.entries[i].ranking.value_or(std::numeric_limits<Time>::infinity());
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  std::vector<std::size_t> kept;
  double spent = 0;
  for (const std::size_t i : ranked) {
    Entry& e = s.entries[i];
    if (spent + e.simulation_work <= kUnpricedWork) {
      kept.push_back(i);
      spent += e.simulation_work;
      continue;
    }
    if (kept.empty()) {
      // The first is simulated whatever its cost, its variants not.
      e.defaults_only = true;
      kept.push_back(i);
      spent += e.options[0].work;
      continue;
    }
    if (e.options[0].estimate) continue;  // it keeps its estimate (at the shared network's costs)
    e.not_evaluated = fmt::format(
        "not evaluated: no formula for this model; ranked by its formula without the model's "
        "other switches, below those simulated within {:.0e} ops",
        kUnpricedWork);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

void simulate_option(Option& o, const AlgorithmInfo& info, const CollectiveSpec& spec,
                     const CostModel& model, KeptSchedule* kept) {
  Schedule schedule = algorithms::build(info, spec, o.params, model);
  o.simulated = simulate_checked(schedule, model);
  o.simulated_bytes = bytes_moved(schedule);
  o.simulated_params = schedule.params;
  if (kept != nullptr)
    kept->offer(kept_key(info.name, o.params), *o.simulated, std::move(schedule));
}

void simulate_entries(Search& s, const std::vector<std::size_t>& which,
                      const std::function<std::optional<Time>()>& threshold) {
  std::vector<std::size_t> unbounded;
  std::vector<std::size_t> bounded;
  for (const std::size_t i : which) (s.entries[i].bound ? bounded : unbounded).push_back(i);
  parallel_for(unbounded.size(), s.options.workers, [&](std::size_t k) {
    simulate_entry(s.entries[unbounded[k]], s.spec, s.model, s.kept.get());
  });
  // Decided against the unbounded candidates (and what was known before), so which
  // candidates are built does not depend on the workers' timing.
  const std::optional<Time> best = threshold();
  std::vector<std::size_t> chance;
  for (const std::size_t i : bounded) {
    Entry& e = s.entries[i];
    if (best && *e.bound > *best * (1 + kTieTolerance)) {
      e.pruned = true;
    } else {
      chance.push_back(i);
    }
  }
  parallel_for(chance.size(), s.options.workers, [&](std::size_t k) {
    simulate_entry(s.entries[chance[k]], s.spec, s.model, s.kept.get());
  });
}

Time simulate_checked(const Schedule& schedule, const CostModel& model) {
  const SimResult result = simulate(schedule, model);
  OPTCOLL_CHECK(result.status == SimStatus::kOk, "{} deadlocks in simulation: {}",
                schedule.algorithm, result.deadlock);
  return result.makespan;
}

}  // namespace optcoll::search
