// SPDX-License-Identifier: Apache-2.0
// File: plan_tree() and the gather/scatter schedule over a planned ordered tree.
#include <string>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_schedule.h"
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
  const GatherProblem pb = gather_problem(b.layout(), model, spec.elem_bytes,
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

}  // namespace optcoll::algorithms::planners
