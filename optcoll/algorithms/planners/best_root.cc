// SPDX-License-Identifier: Apache-2.0
// File: planned_best_root() and the hooks that the OPTCOLL_BEST_ROOT lines of algorithms.def
// give the algorithms whose planner knows its best root.
#include "optcoll/algorithms/planners/best_root.h"

#include "optcoll/algorithms/planners/gather_trees.h"

namespace optcoll::algorithms {

namespace {

// The root planners::plan_tree chooses for the gather(v) or scatter(v) `spec` over `kind`.
std::optional<Rank> tree_best_root(planners::TreeKind kind, const CollectiveSpec& spec,
                                   const CostModel& model, bool allow_dp) {
  using planners::TreeKind;
  const bool gather = spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
  const bool scatter =
      spec.kind == CollectiveKind::kScatter || spec.kind == CollectiveKind::kScatterv;
  if (!gather && !scatter) return std::nullopt;
  const bool dp_too_costly = !allow_dp && spec.nranks > planners::kDpInEstimate;
  if (dp_too_costly && (kind == TreeKind::kOptimal || kind == TreeKind::kBinaryOptimal)) {
    return std::nullopt;
  }
  // With pair matrices only the optimal tree's planner prices them (the others plan with
  // alpha and beta, so the caller searches every root).
  if (!model.homogeneous() && kind != TreeKind::kOptimal) return std::nullopt;
  CollectiveSpec rooted = spec;
  rooted.root = 0;
  const Layout layout = Layout::borrowing(rooted);
  const auto problem = planners::gather_problem(
      layout, model, spec.elem_bytes,
      gather ? planners::TreeDirection::kGather : planners::TreeDirection::kScatter);
  return planners::plan_tree(kind, problem, std::nullopt).shape.root;
}

}  // namespace

// Träff's Theorem 4 trees (bcast/reduce optimal_ordered): the DP chooses the root (any root
// is optimal homogeneously).
std::optional<Rank> best_root_optimal_ordered(const CollectiveSpec& spec, const Params& /*params*/,
                                              const CostModel& model, bool allow_dp) {
  const bool dp_too_costly = !allow_dp && spec.nranks > planners::kDpInEstimate;
  if (dp_too_costly ||
      (spec.kind != CollectiveKind::kBcast && spec.kind != CollectiveKind::kReduce)) {
    return std::nullopt;
  }
  CollectiveSpec rooted = spec;
  rooted.root = 0;
  const Layout layout = Layout::borrowing(rooted);
  return planners::optimal_ordered_full_vector_tree(
             model, spec.nranks, layout.output_count(0), spec.elem_bytes, std::nullopt,
             spec.kind == CollectiveKind::kBcast ? planners::FullVectorOp::kBcast
                                                 : planners::FullVectorOp::kReduce)
      .shape.root;
}

// Träff's gather and scatter trees (gather/, scatter/, gatherv/, scatterv/).
std::optional<Rank> best_root_optimal_tree(const CollectiveSpec& spec, const Params& /*params*/,
                                           const CostModel& model, bool allow_dp) {
  return tree_best_root(planners::TreeKind::kOptimal, spec, model, allow_dp);
}
std::optional<Rank> best_root_adaptive_binomial_tree(const CollectiveSpec& spec,
                                                     const Params& /*params*/,
                                                     const CostModel& model, bool allow_dp) {
  return tree_best_root(planners::TreeKind::kAdaptiveBinomial, spec, model, allow_dp);
}
std::optional<Rank> best_root_oblivious_binomial_tree(const CollectiveSpec& spec,
                                                      const Params& /*params*/,
                                                      const CostModel& model, bool allow_dp) {
  return tree_best_root(planners::TreeKind::kObliviousBinomial, spec, model, allow_dp);
}
std::optional<Rank> best_root_binary_optimal_tree(const CollectiveSpec& spec,
                                                  const Params& /*params*/, const CostModel& model,
                                                  bool allow_dp) {
  return tree_best_root(planners::TreeKind::kBinaryOptimal, spec, model, allow_dp);
}

std::optional<Rank> planned_best_root(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                      const Params& params, const CostModel& model, bool allow_dp) {
  if (info.best_root == nullptr || info.collective != spec.kind) return std::nullopt;
  return info.best_root(spec, params, model, allow_dp);
}

}  // namespace optcoll::algorithms
