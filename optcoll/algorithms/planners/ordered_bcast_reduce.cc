// SPDX-License-Identifier: Apache-2.0
// File: Träff's Theorem 4 (docs/math/gather-scatter-trees.md §3.6): the optimal ordered broadcast
// and reduction trees are the gather DPs' trees when every non-empty subtree's message carries the
// full vector.
//
// The mapping. Give every rank one unit (none if n = 0) and let a message of any M > 0 units
// cost w = the full vector's edge cost, with no copies: then the gather DP's Definition 2 time
//   t(v) = fold over v's children c in order of  t = max(t, C(c)) + w(c, v)
// is exactly a reduction over the tree in which every inner node receives its first child's
// partial, reduces its own contribution in, and receive-reduces the rest (emit_ordered_reduce;
// w = alpha + beta·n + gamma·n, what the simulator charges a receive plus a reduce, or a
// receive-reduce), and, read backwards in time, a broadcast in which each node sends to its
// children in the reverse order (w = alpha + beta·n from parent to child). Without copies the
// DP's cases (5) and (6) coincide, so its tree class (every subtree a consecutive rank range,
// each node's range growing outward child by child) is searched completely: the homogeneous
// DP in O(p^3) time and O(p^2) space, the pair-matrix DP in O(p^4) to O(p^5) (its header).
//
// Why no local copy in the reduction: an inner node that first copied its contribution and
// then receive-reduced every child (emit_tree_reduce) would pay max(copy·n, C(first)) where
// receiving the first child directly pays C(first): never less, so the copy-free form is the
// one optimized (and the only one emitted here).
#include <algorithm>
#include <string>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_ordered_bcast_reduce.h"
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::planners {

GatherProblem full_vector_problem(const CostModel& model, Rank nranks, Count count,
                                  std::size_t elem_bytes, FullVectorOp op) {
  if (!model.homogeneous()) validate_for(model, nranks);  // the matrices must be p x p
  GatherProblem pb;
  pb.sizes.assign(static_cast<std::size_t>(nranks), count > 0 ? 1 : 0);
  pb.beta = 0;
  pb.copy = 0;
  const Time reduce = op == FullVectorOp::kReduce ? model.reduce_time(count, elem_bytes) : 0;
  // Rank 0 to rank 1 stands for every pair in the homogeneous case.
  pb.alpha = (nranks >= 2 ? model.transfer_time(0, 1, count, elem_bytes) : 0) + reduce;
  if (!model.homogeneous()) {
    const auto n = static_cast<std::size_t>(nranks);
    pb.pair_alpha.assign(n * n, 0);
    pb.pair_beta.assign(n * n, 0);
    for (Rank child = 0; child < nranks; ++child) {
      for (Rank parent = 0; parent < nranks; ++parent) {
        const Time transfer = op == FullVectorOp::kBcast
                                  ? model.transfer_time(parent, child, count, elem_bytes)
                                  : model.transfer_time(child, parent, count, elem_bytes);
        pb.pair_alpha[static_cast<std::size_t>(child) * n + static_cast<std::size_t>(parent)] =
            transfer + reduce;
      }
    }
  }
  return pb;
}

OrderedTree optimal_ordered_full_vector_tree(const CostModel& model, Rank nranks, Count count,
                                             std::size_t elem_bytes, std::optional<Rank> root,
                                             FullVectorOp op) {
  const GatherProblem pb = full_vector_problem(model, nranks, count, elem_bytes, op);
  OrderedTree tree =
      pb.homogeneous() ? optimal_tree(pb, root) : optimal_tree_nonhomogeneous(pb, root);
  if (op == FullVectorOp::kBcast) {
    for (auto& kids : tree.shape.children) std::reverse(kids.begin(), kids.end());
  }
  if (nranks == 1 && op == FullVectorOp::kReduce) tree.cost = model.copy_time(count, elem_bytes);
  return tree;
}

Schedule build_optimal_ordered_full_vector(const CollectiveSpec& spec, const CostModel& model) {
  const bool bcast = spec.kind == CollectiveKind::kBcast;
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/optimal_ordered");
  const Layout& layout = b.layout();
  const Count n = layout.output_count(spec.root);
  OrderedTree tree =
      optimal_ordered_full_vector_tree(model, spec.nranks, n, spec.elem_bytes, spec.root,
                                       bcast ? FullVectorOp::kBcast : FullVectorOp::kReduce);
  if (bcast) {
    patterns::emit_ordered_bcast(b, tree.shape, output_of(layout, spec.root));
  } else {
    patterns::emit_ordered_reduce(b, tree.shape, input_of(layout, spec.root),
                                  output_of(layout, spec.root));
  }
  b.set_tree(std::move(tree.shape));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms::planners
