// SPDX-License-Identifier: Apache-2.0
// File: planned_best_root(): the hook table (registry name suffix -> tree kind).
#include "optcoll/algorithms/planners/best_root.h"

#include <array>
#include <string_view>
#include <utility>

#include "optcoll/algorithms/planners/gather_trees.h"

namespace optcoll::algorithms {

std::optional<Rank> planned_best_root(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                      const Params& /*params*/, const CostModel& model,
                                      bool allow_dp) {
  using planners::TreeKind;
  static constexpr std::array<std::pair<std::string_view, TreeKind>, 4> kTrees{{
      {"optimal", TreeKind::kOptimal},
      {"adaptive_binomial", TreeKind::kAdaptiveBinomial},
      {"oblivious_binomial", TreeKind::kObliviousBinomial},
      {"binary_optimal", TreeKind::kBinaryOptimal},
  }};
  const bool dp_too_costly = !allow_dp && spec.nranks > planners::kDpInEstimate;
  // Träff's Theorem 4 trees: the DP chooses the root (any root is optimal homogeneously).
  if (!dp_too_costly &&
      (spec.kind == CollectiveKind::kBcast || spec.kind == CollectiveKind::kReduce) &&
      info.collective == spec.kind && info.short_name() == "optimal_ordered") {
    CollectiveSpec rooted = spec;
    rooted.root = 0;
    const Layout layout(rooted);
    return planners::optimal_ordered_full_vector_tree(
               model, spec.nranks, layout.output_count(0), spec.elem_bytes, std::nullopt,
               spec.kind == CollectiveKind::kBcast ? planners::FullVectorOp::kBcast
                                                   : planners::FullVectorOp::kReduce)
        .shape.root;
  }
  const bool gather_scatter =
      spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv ||
      spec.kind == CollectiveKind::kScatter || spec.kind == CollectiveKind::kScatterv;
  if (!gather_scatter || info.collective != spec.kind) return std::nullopt;
  for (const auto& [name, kind] : kTrees) {
    if (info.short_name() != name) continue;
    if (dp_too_costly && (kind == TreeKind::kOptimal || kind == TreeKind::kBinaryOptimal)) {
      return std::nullopt;
    }
    // With pair matrices only the optimal tree's planner prices them (the others plan with
    // alpha and beta, so the caller searches every root).
    if (!model.homogeneous() && kind != TreeKind::kOptimal) return std::nullopt;
    CollectiveSpec rooted = spec;
    rooted.root = 0;
    const Layout layout(rooted);
    const bool gather =
        spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
    const auto problem = planners::gather_problem(
        layout, model, spec.elem_bytes,
        gather ? planners::TreeDirection::kGather : planners::TreeDirection::kScatter);
    return planners::plan_tree(kind, problem, std::nullopt).shape.root;
  }
  return std::nullopt;
}

}  // namespace optcoll::algorithms
