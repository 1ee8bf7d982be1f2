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

// The levels of a prefix reduction (scan, exscan): the maximal runs of consecutive ranks on
// one node of node_levels' placement, in rank order, each led by its last rank (which holds
// the run's total after a scan within the run). Where nodes are blocks of consecutive ranks
// the runs are the nodes; where they interleave (round robin) runs are shorter, down to
// single ranks. Combining run by run is rank order, so any operator serves.
NodeLevels run_levels(Rank p, const Params& params, const CostModel& model);

// A phase's collective: `kind` on q ranks, with the reduction settings of `spec` (not
// reproducible: the node-aware reductions need a commutative operator).
CollectiveSpec level_spec(const CollectiveSpec& spec, CollectiveKind kind, Rank q, Count count,
                          Rank root = 0, std::vector<Count> counts = {});

// What prices a flat algorithm's formula under a placement, as if every message crossed the
// network while every rank of the largest node used its NICs at once: every pair at the
// inter-node costs (inter_alpha, inter_beta; alpha, beta where unset) times
// ceil(ranks of the largest node / nic_ports), the turns a message waits for a NIC then; no
// placement. An estimate from above for the algorithms whose every rank sends in every step
// (rings, exchanges), and a pessimistic one for trees, whose node-aware forms are candidates.
CostModel shared_network_model(const CostModel& model);

// One phase's registry algorithm. `choice` is a registry algorithm of the phase's kind that
// is not node-aware, or "auto": the least estimated time under `model` among those that serve
// every spec of `specs` with their default parameters; when the model has no closed form
// (no estimate prices it), `fallback`. Throws Error(kNotApplicable) naming `phase` when the
// named algorithm does not serve a spec. With no specs (no group runs the phase), `fallback`.
const AlgorithmInfo& level_algorithm(std::string_view phase, std::string_view choice,
                                     CollectiveKind kind, std::span<const CollectiveSpec> specs,
                                     const CostModel& model, std::string_view fallback);

// The schedule of one phase, built with its default parameters for `model`.
Schedule build_level(const AlgorithmInfo& info, const CollectiveSpec& spec, const CostModel& model);

// A phase run by several groups at once (one per node): the slowest group's estimated time,
// the groups' bytes and work together; nullopt where a group's estimate is.
std::optional<Estimate> level_estimate(const AlgorithmInfo& info,
                                       std::span<const CollectiveSpec> specs,
                                       const CostModel& model);

// One phase of a node-aware algorithm, as its file declares it in a table: the parameter
// that names its algorithm, its collective, the level it runs at (within each node, or
// among the nodes' leaders), the algorithm auto takes where no estimate prices the level's
// model, and how many times it runs (a barrier's intra-node phase: twice).
enum class Level : std::uint8_t { kIntra, kInter };
struct LevelPhase {
  std::string_view param;
  CollectiveKind kind;
  Level level = Level::kIntra;
  std::string_view fallback = "binomial";
  int times = 1;
};

// The why_not of the node-aware algorithms: `nodes` is auto or 1..p, each phase parameter
// (name, kind) is auto or a flat registry algorithm of that kind, and the operator is
// commutative (the levels combine node by node, not in rank order).
std::optional<std::string> levels_why_not(const CollectiveSpec& spec, const Params& params,
                                          std::span<const LevelPhase> phases);
// levels_why_not without the operator's restriction (for the algorithms that combine in rank
// order: the prefix reductions over run_levels).
std::optional<std::string> level_params_why_not(const CollectiveSpec& spec, const Params& params,
                                                std::span<const LevelPhase> phases);

// The phases of one call of a node-aware algorithm: for each entry of its table, the specs
// of the groups that run it (one per node, or one among the leaders) and the algorithm
// chosen for them. The file fills the specs, then choose() picks every phase's algorithm;
// recorded() and estimate() follow the table.
class PhasePlan {
 public:
  PhasePlan(NodeLevels levels, std::span<const LevelPhase> phases);

  const NodeLevels& levels() const { return levels_; }
  std::vector<CollectiveSpec>& specs(std::size_t phase) { return phases_[phase].specs; }
  const std::vector<CollectiveSpec>& specs(std::size_t phase) const { return phases_[phase].specs; }
  // The model phase `phase` is chosen and priced under: its level's (set_model: another,
  // e.g. the inter level with its NICs shared by several leaders).
  const CostModel& model(std::size_t phase) const { return phases_[phase].model; }
  void set_model(std::size_t phase, CostModel model) { phases_[phase].model = std::move(model); }

  // Each phase's algorithm: its parameter's value, or auto (level_algorithm).
  void choose(const Params& params);
  const AlgorithmInfo& algorithm(std::size_t phase) const { return *phases_[phase].algorithm; }
  Level level(std::size_t phase) const { return phases_[phase].declared.level; }

  // "nodes=N,<param>=<algorithm>,..." in table order; `extra` ("leaders=2") after nodes.
  std::string recorded(std::string_view extra = {}) const;
  // The phases one after the other (phases_estimate), recorded() as its parameters.
  std::optional<Estimate> estimate(std::string_view extra = {}) const;

 private:
  struct Phase {
    LevelPhase declared;
    CostModel model;
    std::vector<CollectiveSpec> specs;
    const AlgorithmInfo* algorithm = nullptr;
  };
  NodeLevels levels_;
  std::vector<Phase> phases_;
};

// True for the node-aware algorithms themselves (never a phase of another).
bool is_node_aware(const AlgorithmInfo& info);

}  // namespace optcoll::algorithms::patterns
