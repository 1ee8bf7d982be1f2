// SPDX-License-Identifier: Apache-2.0
// allreduce/node_multileader — every node's first L ranks each lead a slice: a reduce-scatter
// within each node leaves slice j (n/L elements) reduced over the node at its rank j; the
// j-th ranks of all nodes allreduce slice j among themselves (L allreduces between the nodes
// at once, sharing the NICs); an allgather within each node assembles the result.
//
//   2 nodes x 2 ranks, L = 2: intra reduce-scatter {0,1}, {2,3}; inter allreduce of slice 0
//   between 0 and 2, of slice 1 between 1 and 3; intra allgather {0,1}, {2,3}
//
// Cost: max T_reduce_scatter(m_node, n/L per leader) + T_allreduce(N, n/L) (L at once, each
//   node's NICs shared by its L leaders) + max T_allgatherv(m_node, n/L per leader); every
//   node still sends and receives about 2n over its NICs, but L ranks drive them and the
//   intra phases are bandwidth-optimal.
// Restrictions: commutative operator; nodes auto or 1..p; leaders auto (the least estimated
//   time over 1, 2, 4, ... and the smallest node's size, each slice's allreduce priced with
//   the node's NICs shared by its L leaders) or 1..the smallest node's size; the phases auto
//   or flat registry algorithms.
// Reference: multi-leader allreduce (Kandalla et al., "Designing multi-leader-based
//   allgather algorithms for multi-core clusters", IPDPS 2009; Jain et al., "Multi-leader
//   collectives", 2018); Open MPI coll/han's segmented variants.

#include <algorithm>
#include <charconv>

#include "optcoll/algorithms/node_aware/common.h"
#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"leaders", "auto", "ranks per node that lead a slice (auto: least estimated time)"},
    {"intra", "auto", "reduce-scatter within each node"},
    {"inter", "auto", "allreduce of each slice among the nodes"},
    {"gather", "auto", "allgatherv within each node"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"intra", CollectiveKind::kReduceScatter, patterns::Level::kIntra, "ring"},
    {"inter", CollectiveKind::kAllreduce, patterns::Level::kInter, "recursive_doubling"},
    {"gather", CollectiveKind::kAllgatherv, patterns::Level::kIntra, "ring"}};
enum Phase : std::size_t { kScatter, kInter, kGather };

// The phases (kInter: one allreduce per slice, under the inter model with the leaders
// sharing the NICs) for `leaders` leaders per node.
struct Plan {
  patterns::PhasePlan phases;
  Rank leaders = 1;
};

Rank smallest_node(const patterns::NodeLevels& levels) {
  Rank smallest = levels.size(0);
  for (std::int32_t n = 1; n < levels.nodes(); ++n) smallest = std::min(smallest, levels.size(n));
  return smallest;
}

// `leaders=k`, checked against the smallest node.
Rank leaders_given(std::string_view text, Rank smallest) {
  Rank value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value < 1 || value > smallest) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("leaders={} must be auto or 1..{} (the smallest node's ranks)", text,
                            smallest));
  }
  return value;
}

// The model of one slice's allreduce among the nodes when L leaders per node share the
// node's nic_ports NICs: every message waits for ceil(L / nic_ports) turns (the phases' choice
// and the estimate see the NICs' sharing; the simulation prices it exactly).
CostModel shared_nic_model(const CostModel& inter, Rank leaders, int nic_ports) {
  CostModel m = inter;
  const auto turns = static_cast<double>((leaders + nic_ports - 1) / nic_ports);
  m.alpha *= turns;
  m.beta *= turns;
  return m;
}

Plan plan_for(const CollectiveSpec& spec, const Params& params, const CostModel& model,
              patterns::NodeLevels levels, Rank leaders) {
  Plan plan{{std::move(levels), kPhases}, leaders};
  const auto& lv = plan.phases.levels();
  plan.phases.set_model(kInter, shared_nic_model(lv.inter, leaders, model.nic_ports));
  for (std::int32_t n = 0; n < lv.nodes(); ++n) {
    std::vector<Count> counts(static_cast<std::size_t>(lv.size(n)), 0);
    for (Rank j = 0; j < leaders; ++j) {
      counts[static_cast<std::size_t>(j)] = patterns::even_piece(spec.count, leaders, j).count;
    }
    plan.phases.specs(kScatter).push_back(
        patterns::level_spec(spec, CollectiveKind::kReduceScatter, lv.size(n), 0, 0, counts));
    plan.phases.specs(kGather).push_back(
        patterns::level_spec(spec, CollectiveKind::kAllgatherv, lv.size(n), 0, 0, counts));
  }
  for (Rank j = 0; j < leaders; ++j) {
    plan.phases.specs(kInter).push_back(
        patterns::level_spec(spec, CollectiveKind::kAllreduce, lv.nodes(),
                             patterns::even_piece(spec.count, leaders, j).count));
  }
  plan.phases.choose(params);
  return plan;
}

// The three phases' estimates one after the other (the slices' allreduces at once: the
// slowest, each under the shared-NIC model).
std::optional<Estimate> estimate_of(const Plan& plan) {
  return plan.phases.estimate(fmt::format("leaders={}", plan.leaders));
}

// leaders=auto: the least estimated time over L = 1, 2, 4, ... and the smallest node's size
// (where no estimate prices the model: the smallest node's size).
Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  const patterns::NodeLevels levels = patterns::node_levels(spec.nranks, params, model);
  const Rank smallest = smallest_node(levels);
  const std::string_view text = params.get("leaders");
  if (text != "auto") return plan_for(spec, params, model, levels, leaders_given(text, smallest));
  std::vector<Rank> candidates;
  for (Rank l = 1; l < smallest; l *= 2) candidates.push_back(l);
  candidates.push_back(smallest);
  std::optional<Plan> best;
  Time best_time = 0;
  for (const Rank l : candidates) {
    Plan plan = plan_for(spec, params, model, levels, l);
    const auto e = estimate_of(plan);
    if (!e) return plan_for(spec, params, model, levels, smallest);
    if (!best || e->time < best_time) {
      best_time = e->time;
      best = std::move(plan);
    }
  }
  return std::move(*best);
}

}  // namespace

std::span<const ParamInfo> allreduce_node_multileader_params() { return kParams; }

std::optional<std::string> allreduce_node_multileader_why_not(const CollectiveSpec& spec,
                                                              const Params& params) {
  const std::string_view leaders = params.get("leaders");
  Rank value = 0;
  const auto [ptr, ec] = std::from_chars(leaders.data(), leaders.data() + leaders.size(), value);
  if (leaders != "auto" &&
      (ec != std::errc{} || ptr != leaders.data() + leaders.size() || value < 1)) {
    return fmt::format("leaders={} must be auto or a number of ranks from 1", leaders);
  }
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_allreduce_node_multileader(const CollectiveSpec& spec, const Params& params,
                                          const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  const auto nodes = static_cast<std::size_t>(levels.nodes());
  Stitcher stitcher(spec, "allreduce/node_multileader");
  // Per node and leader j: slice j reduced over the node, then over all nodes.
  std::vector<std::vector<Slice>> reduced(nodes);
  std::vector<std::vector<Slice>> result(nodes);
  for (std::size_t g = 0; g < nodes; ++g) {
    for (Rank j = 0; j < plan.leaders; ++j) {
      const Rank r = levels.members[g][static_cast<std::size_t>(j)];
      const Count size = patterns::even_piece(spec.count, plan.leaders, j).count;
      reduced[g].push_back(stitcher.scratch(r, size));
      result[g].push_back(stitcher.scratch(r, size));
    }
  }
  const auto slice_of = [&](const std::vector<std::vector<Slice>>& slices, std::size_t g, Rank i) {
    return i < plan.leaders ? slices[g][static_cast<std::size_t>(i)] : Slice{Buf::kScratch, 0, 0};
  };
  node_aware::append_phase(stitcher, plan.phases, kScatter, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) {
      return node_aware::whole(layout, node_aware::member_of(plan.phases, kScatter, g, i), buf);
    }
    return slice_of(reduced, g, i);
  });
  // Slice j's allreduce runs among the j-th ranks of every node.
  std::vector<std::vector<Rank>> slice_groups(static_cast<std::size_t>(plan.leaders));
  for (Rank j = 0; j < plan.leaders; ++j) {
    for (std::size_t g = 0; g < nodes; ++g) {
      slice_groups[static_cast<std::size_t>(j)].push_back(
          levels.members[g][static_cast<std::size_t>(j)]);
    }
  }
  node_aware::append_phase(stitcher, plan.phases, kInter, slice_groups,
                           [&](std::size_t j, Rank g, Buf buf) {
                             const auto& slices = buf == Buf::kInput ? reduced : result;
                             return slices[static_cast<std::size_t>(g)][j];
                           });
  node_aware::append_phase(stitcher, plan.phases, kGather, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kOutput) {
      return node_aware::whole(layout, node_aware::member_of(plan.phases, kGather, g, i), buf);
    }
    return slice_of(result, g, i);
  });
  stitcher.set_params(plan.phases.recorded(fmt::format("leaders={}", plan.leaders)));
  return std::move(stitcher).finish();
}

// Estimate: the phases' estimates, the slices' allreduces under the shared-NIC model
// (estimate_of).
std::optional<Estimate> estimate_allreduce_node_multileader(const CollectiveSpec& spec,
                                                            const Params& params,
                                                            const CostModel& model) {
  return estimate_of(plan_of(spec, params, model));
}

}  // namespace optcoll::algorithms
