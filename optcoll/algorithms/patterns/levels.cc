// SPDX-License-Identifier: Apache-2.0
// File: the levels of the node-aware algorithms (levels.h).
#include "optcoll/algorithms/patterns/levels.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/model/placement.h"

namespace optcoll::algorithms::patterns {
namespace {

// `nodes` as a number in 1..p, nullopt for "auto", an error text otherwise.
std::optional<std::int64_t> nodes_value(std::string_view text) {
  if (text == "auto") return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return -1;
  return value;
}

// A level's model: `model` with one alpha and beta for every pair of the level's ranks (no
// placement, pair matrices or topology: those describe the whole call's ranks, and the whole
// schedule is priced under them). `cores` stays: the job's processors, which a level's ranks
// share too (the other levels' ranks busy at once are seen only when the whole is priced).
CostModel level_model(const CostModel& model, Time alpha, Time beta) {
  CostModel level = model;
  level.placement.reset();
  level.topology.reset();
  level.pair_nranks = 0;
  level.pair_alpha.clear();
  level.pair_beta.clear();
  level.inter_alpha.reset();
  level.inter_beta.reset();
  level.nic_ports = 1;
  level.alpha = alpha;
  level.beta = beta;
  return level;
}

}  // namespace

CostModel shared_network_model(const CostModel& model) {
  Rank largest = 1;
  if (model.placement) {
    for (const auto& node : model.placement->members()) {
      largest = std::max(largest, static_cast<Rank>(node.size()));
    }
  }
  const auto turns = static_cast<Time>((largest + model.nic_ports - 1) / model.nic_ports);
  return level_model(model, model.node_latency() * turns, model.node_per_unit() * turns);
}

bool is_node_aware(const AlgorithmInfo& info) { return info.short_name().starts_with("node_"); }

NodeLevels node_levels(Rank p, const Params& params, const CostModel& model, Rank root) {
  const auto nodes = nodes_value(params.get("nodes"));
  Placement placement;
  if (nodes) {
    placement = even_block_placement(p, static_cast<std::int32_t>(*nodes));
  } else if (model.placement) {
    validate_for(*model.placement, p);
    placement = *model.placement;
  } else {
    placement = block_placement(p, 1);
  }
  NodeLevels levels;
  levels.members = placement.members();
  levels.root_node = placement.node_of[static_cast<std::size_t>(root)];
  for (std::size_t n = 0; n < levels.members.size(); ++n) {
    const auto& m = levels.members[n];
    const auto at = static_cast<Rank>(std::find(m.begin(), m.end(), root) - m.begin());
    levels.leader_index.push_back(at < static_cast<Rank>(m.size()) ? at : 0);
    levels.leaders.push_back(m[static_cast<std::size_t>(levels.leader_index.back())]);
  }
  levels.intra = level_model(model, model.alpha, model.beta);
  levels.inter = level_model(model, model.node_latency(), model.node_per_unit());
  levels.nodes_param = fmt::format("nodes={}", levels.members.size());
  return levels;
}

NodeLevels run_levels(Rank p, const Params& params, const CostModel& model) {
  NodeLevels levels = node_levels(p, params, model);
  std::vector<std::size_t> node_of(static_cast<std::size_t>(p));
  for (std::size_t n = 0; n < levels.members.size(); ++n) {
    for (const Rank r : levels.members[n]) node_of[static_cast<std::size_t>(r)] = n;
  }
  levels.members.clear();
  levels.leader_index.clear();
  levels.leaders.clear();
  for (std::size_t r = 0; r < node_of.size(); ++r) {
    if (r == 0 || node_of[r] != node_of[r - 1]) levels.members.emplace_back();
    levels.members.back().push_back(static_cast<Rank>(r));
  }
  for (const auto& run : levels.members) {
    levels.leader_index.push_back(static_cast<Rank>(run.size()) - 1);
    levels.leaders.push_back(run.back());
  }
  levels.root_node = 0;
  return levels;
}

CollectiveSpec level_spec(const CollectiveSpec& spec, CollectiveKind kind, Rank q, Count count,
                          Rank root, std::vector<Count> counts) {
  CollectiveSpec s;
  s.kind = kind;
  s.nranks = q;
  s.root = is_rooted(kind) ? root : 0;
  s.count = counts.empty() ? count : 0;
  s.counts = std::move(counts);
  s.commutative = spec.commutative;
  s.elem_bytes = spec.elem_bytes;
  return s;
}

const AlgorithmInfo& level_algorithm(std::string_view phase, std::string_view choice,
                                     CollectiveKind kind, std::span<const CollectiveSpec> specs,
                                     const CostModel& model, std::string_view fallback) {
  if (specs.empty() && choice == "auto") return lookup(fallback, kind);
  const auto serves_all = [&](const AlgorithmInfo& info) {
    const Params defaults = resolve_params(info, {});
    for (const CollectiveSpec& s : specs) {
      if (why_not(info, s, defaults)) return false;
    }
    return true;
  };
  if (choice != "auto") {
    const AlgorithmInfo& info = lookup(choice, kind);
    for (const CollectiveSpec& s : specs) {
      if (auto reason = why_not(info, s, resolve_params(info, {}))) {
        throw Error(ErrorCode::kNotApplicable, fmt::format("{}={} cannot run the phase {}: {}",
                                                           phase, choice, describe(s), *reason));
      }
    }
    return info;
  }
  const AlgorithmInfo* best = nullptr;
  Time best_time = std::numeric_limits<Time>::infinity();
  for (const AlgorithmInfo* info : algorithms_for(kind)) {
    if (is_node_aware(*info) || !serves_all(*info)) continue;
    const auto e = level_estimate(*info, specs, model);
    if (e && e->time < best_time) {
      best = info;
      best_time = e->time;
    }
  }
  return best != nullptr ? *best : lookup(fallback, kind);
}

Schedule build_level(const AlgorithmInfo& info, const CollectiveSpec& spec,
                     const CostModel& model) {
  return build(info, spec, {}, model);
}

std::optional<Estimate> level_estimate(const AlgorithmInfo& info,
                                       std::span<const CollectiveSpec> specs,
                                       const CostModel& model) {
  // Nodes of one size have equal specs (1,024 of them under 1024x64): each distinct spec is
  // priced once, looked up among the last kRemembered distinct ones.
  constexpr std::size_t kRemembered = 8;
  std::vector<std::pair<const CollectiveSpec*, Estimate>> priced;
  const Params defaults = resolve_params(info, {});
  Estimate total;
  for (const CollectiveSpec& s : specs) {
    const auto same = std::find_if(priced.rbegin(), priced.rend(),
                                   [&s](const auto& known) { return *known.first == s; });
    if (same == priced.rend()) {
      const auto fresh = info.estimate(s, defaults, model);
      if (!fresh) return std::nullopt;
      if (priced.size() == kRemembered) priced.erase(priced.begin());
      priced.emplace_back(&s, *fresh);
    } else {
      std::iter_swap(same, priced.rbegin());  // the most recent last
    }
    const Estimate& e = priced.back().second;
    total.time = std::max(total.time, e.time);
    total.bytes += e.bytes;
    total.work += e.work;
  }
  return total;
}

PhasePlan::PhasePlan(NodeLevels levels, std::span<const LevelPhase> phases)
    : levels_(std::move(levels)) {
  for (const LevelPhase& declared : phases) {
    phases_.push_back(
        {declared, declared.level == Level::kIntra ? levels_.intra : levels_.inter, {}, nullptr});
  }
}

void PhasePlan::choose(const Params& params) {
  for (Phase& phase : phases_) {
    const LevelPhase& d = phase.declared;
    phase.algorithm = &level_algorithm(d.param, params.get(d.param), d.kind, phase.specs,
                                       phase.model, d.fallback);
  }
}

std::string PhasePlan::recorded(std::string_view extra) const {
  std::string text = levels_.nodes_param;
  if (!extra.empty()) text += fmt::format(",{}", extra);
  for (const Phase& phase : phases_) {
    text += fmt::format(",{}={}", phase.declared.param, phase.algorithm->short_name());
  }
  return text;
}

std::optional<Estimate> PhasePlan::estimate(std::string_view extra) const {
  Estimate total;
  for (const Phase& phase : phases_) {
    const auto e = level_estimate(*phase.algorithm, phase.specs, phase.model);
    if (!e) return std::nullopt;
    const int times = phase.declared.times;
    total.time += times * e->time;
    total.bytes += static_cast<std::uint64_t>(times) * e->bytes;
    total.work += times * e->work;
  }
  total.params = recorded(extra);
  return total;
}

std::optional<std::string> levels_why_not(const CollectiveSpec& spec, const Params& params,
                                          std::span<const LevelPhase> phases) {
  if (is_reduction(spec.kind) && !spec.commutative) {
    return "needs a commutative operator (the levels combine node by node)";
  }
  return level_params_why_not(spec, params, phases);
}

std::optional<std::string> level_params_why_not(const CollectiveSpec& spec, const Params& params,
                                                std::span<const LevelPhase> phases) {
  const auto nodes = nodes_value(params.get("nodes"));
  if (nodes && (*nodes < 1 || *nodes > spec.nranks)) {
    return fmt::format("nodes={} must be auto or a number of nodes from 1 to p = {}",
                       params.get("nodes"), spec.nranks);
  }
  for (const LevelPhase& phase : phases) {
    const std::string_view choice = params.get(phase.param);
    if (choice == "auto") continue;
    const AlgorithmInfo* info =
        find_algorithm(fmt::format("{}/{}", collective_name(phase.kind), choice));
    if (info == nullptr || is_node_aware(*info)) {
      return fmt::format(
          "{}={} is not a {} algorithm of the registry (auto, or one of optcoll "
          "list {} that is not node-aware)",
          phase.param, choice, collective_name(phase.kind), collective_name(phase.kind));
    }
  }
  return std::nullopt;
}

}  // namespace optcoll::algorithms::patterns
