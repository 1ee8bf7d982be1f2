// SPDX-License-Identifier: Apache-2.0
// File: the two levels of the node-aware algorithms: which ranks share a node (the model's
// placement, or a `nodes` parameter), each node's leader, the cost model of each level, and
// the flat registry algorithm that runs each phase ("auto": the least closed-form estimate).
// A node-aware algorithm is a short list of phases, each a registry schedule of a
// sub-communicator (the ranks of one node, or one rank per node) placed by a Stitcher.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/params.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms::patterns {

struct NodeLevels {
  std::vector<std::vector<Rank>> members;  // per node, increasing
  std::vector<Rank> leader_index;          // per node: its leader is members[n][leader_index[n]]
  std::vector<Rank> leaders;               // per node: the leader's rank
  std::int32_t root_node = 0;              // the node holding `root`
  // The levels' models (the phases' algorithms are built and chosen for them): the call's
  // model with one alpha and beta per level and no placement, pair matrices or topology.
  CostModel intra;          // within a node: alpha, beta
  CostModel inter;          // between nodes: inter_alpha, inter_beta
  std::string nodes_param;  // as recorded: "nodes=4"

  std::int32_t nodes() const { return static_cast<std::int32_t>(members.size()); }
  Rank size(std::int32_t node) const {
    return static_cast<Rank>(members[static_cast<std::size_t>(node)].size());
  }
};

// The levels of a call of p ranks. `nodes` parameter: "auto" is the model's placement, or,
// for a model without one, one rank per node (the model prices every pair alike); N is N
// nodes in even blocks. Each node's leader is `root` where it holds the root, its first rank
// otherwise.
NodeLevels node_levels(Rank p, const Params& params, const CostModel& model, Rank root = 0);

// A phase's collective: `kind` on q ranks, with the reduction settings of `spec` (not
// reproducible: the node-aware reductions need a commutative operator).
CollectiveSpec level_spec(const CollectiveSpec& spec, CollectiveKind kind, Rank q, Count count,
                          Rank root = 0, std::vector<Count> counts = {});

// One phase's registry algorithm. `choice` is a registry algorithm of the phase's kind that
// is not node-aware, or "auto": the least estimated time under `model` among those that serve
// every spec of `specs` with their default parameters; when the model has no closed form
// (no estimate prices it), `fallback`. Throws Error(kNotApplicable) naming `phase` when the
// named algorithm does not serve a spec.
const AlgorithmInfo& level_algorithm(std::string_view phase, std::string_view choice,
                                     std::span<const CollectiveSpec> specs, const CostModel& model,
                                     std::string_view fallback);

// The schedule of one phase, built with its default parameters for `model`.
Schedule build_level(const AlgorithmInfo& info, const CollectiveSpec& spec, const CostModel& model);

// A phase run by several groups at once (one per node): the slowest group's estimated time,
// the groups' bytes and work together; nullopt where a group's estimate is.
std::optional<Estimate> level_estimate(const AlgorithmInfo& info,
                                       std::span<const CollectiveSpec> specs,
                                       const CostModel& model);

// Phases run one after the other: the sum of their estimates (a phase counted `times`
// times), bytes and work; nullopt where a phase's estimate is. Not exact: NIC sharing and
// the staging copies are not in it.
struct PhaseCost {
  const AlgorithmInfo* info;
  std::span<const CollectiveSpec> specs;
  const CostModel* model;
  int times = 1;
};
std::optional<Estimate> phases_estimate(std::initializer_list<PhaseCost> phases,
                                        std::string params);

// The why_not of the node-aware algorithms: `nodes` is auto or 1..p, each phase parameter
// (name, kind) is auto or a flat registry algorithm of that kind, and the operator is
// commutative (the levels combine node by node, not in rank order).
struct LevelPhase {
  std::string_view param;
  CollectiveKind kind;
};
std::optional<std::string> levels_why_not(const CollectiveSpec& spec, const Params& params,
                                          std::span<const LevelPhase> phases);

// True for the node-aware algorithms themselves (never a phase of another).
bool is_node_aware(const AlgorithmInfo& info);

}  // namespace optcoll::algorithms::patterns
