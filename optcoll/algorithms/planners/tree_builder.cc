// SPDX-License-Identifier: Apache-2.0
// File: plan_tree() and the gather/scatter schedule over a planned ordered tree.
#include <string>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/patterns/tree_ordered_gather_scatter.h"
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::planners {

OrderedTree plan_tree(TreeKind kind, const GatherProblem& pb, std::optional<Rank> root) {
  switch (kind) {
    case TreeKind::kLinear:
      return root ? linear_tree(pb, *root) : best_root_by_search(pb, linear_tree);
    case TreeKind::kObliviousBinomial:
      return root ? oblivious_binomial_tree(pb, *root)
                  : best_root_by_search(pb, oblivious_binomial_tree);
    case TreeKind::kAdaptiveBinomial:
      return adaptive_binomial_tree(pb, root);
    case TreeKind::kBinaryOptimal:
      return binary_optimal_tree(pb, root);
    case TreeKind::kOptimal:
      return pb.homogeneous() ? optimal_tree(pb, root) : optimal_tree_nonhomogeneous(pb, root);
  }
  throw InternalError("unknown tree kind");  // errors.md: internal (an unhandled enum value)
}

Schedule build_ordered_tree_schedule(const CollectiveSpec& spec, const CostModel& model,
                                     TreeKind kind, std::string_view name) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/" + std::string(name));
  const bool gather = spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
  const GatherProblem pb =
      gather_problem(b.layout(), model, spec.elem_bytes,
                     gather ? TreeDirection::kGather : TreeDirection::kScatter);
  OrderedTree tree = plan_tree(kind, pb, spec.root);
  if (gather) {
    patterns::emit_ordered_gather(b, tree.shape, tree.copy_slot, output_of(b.layout(), spec.root));
  } else {
    patterns::emit_ordered_scatter(b, tree.shape, tree.copy_slot, input_of(b.layout(), spec.root));
  }
  b.set_tree(std::move(tree.shape));
  return std::move(b).finish();
}

namespace {

// Ops of the schedule over a tree of p ranks, and op-equivalents of planning it.
double tree_work(TreeKind kind, Rank nranks) {
  const double p = nranks;
  switch (kind) {
    case TreeKind::kOptimal:
      return 3 * p + p * p * p / 4096;
    case TreeKind::kBinaryOptimal:
      return 3 * p + p * p * p / 512;
    default:
      return 3 * p + p * ceil_log2(nranks);
  }
}

}  // namespace

OrderedTree cheapest_ordered_tree(const GatherProblem& pb, Rank root) {
  OrderedTree best = linear_tree(pb, root);
  for (auto&& tree : {oblivious_binomial_tree(pb, root), adaptive_binomial_tree(pb, root)}) {
    if (tree.cost < best.cost) best = tree;
  }
  return best;
}

std::optional<Estimate> ordered_tree_estimate(const CollectiveSpec& spec, const CostModel& model,
                                              TreeKind kind) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const bool gather = spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
  const GatherProblem pb = gather_problem(
      layout, model, spec.elem_bytes, gather ? TreeDirection::kGather : TreeDirection::kScatter);
  const bool dp = kind == TreeKind::kOptimal || kind == TreeKind::kBinaryOptimal;
  const bool planned = !dp || spec.nranks <= kDpInEstimate;
  OrderedTree tree;
  if (planned) {
    tree = plan_tree(kind, pb, spec.root);
  } else if (kind == TreeKind::kOptimal) {
    tree = cheapest_ordered_tree(pb, spec.root);
  } else {
    tree.shape = patterns::inorder_binary_tree(spec.nranks, spec.root);
    tree.copy_slot.assign(static_cast<std::size_t>(spec.nranks), 0);
    tree.cost = completion_time(tree.shape, tree.copy_slot, pb);
  }
  return make_estimate(spec, tree.cost,
                       patterns::tree_subtree_elements(tree.shape, blocks_of(layout)),
                       tree_work(kind, spec.nranks), planned);
}

}  // namespace optcoll::algorithms::planners
