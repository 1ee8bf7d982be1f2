// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/reduce_then_scatter (also reduce_scatter_block/reduce_then_scatter) —
// binomial reduce of the whole input vector to rank 0, then binomial scatter of the result.
//
//   p = 4:  reduce 1→0, 3→2, 2→0 (n each);  scatter 0→2 [2,3], 0→1 [1], 2→3 [3]
//
// Cost (alpha-beta-gamma, one port, no overlap, n = total, p a power of two, copy = 0):
//   2·log2(p)·α + (log2(p) + (p-1)/p)·nβ + log2(p)·nγ   (Chan et al.'s MST reduce-scatter)
// Restrictions: none (the tree is rooted at rank 0, where every subtree is a contiguous
//   rank range combined in rank order).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_reduce_then_scatter(const CollectiveSpec& spec,
                                                  const Params& /*params*/,
                                                  const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/reduce_then_scatter");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Slice reduced = b.scratch(0, layout.total());
  patterns::emit_tree_reduce(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst),
                             input_of(layout, 0), reduced);
  patterns::emit_tree_scatter(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kLargestFirst),
                              patterns::virtual_positions(p, 0), reduced);
  return std::move(b).finish();
}

// Estimate: the binomial reduce to rank 0 (patterns::tree_reduce_time), then the binomial
// scatter of the blocks (patterns::tree_scatter_time).
std::optional<Estimate> estimate_reduce_scatter_reduce_then_scatter(const CollectiveSpec& spec,
                                                                    const Params& /*params*/,
                                                                    const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  std::vector<Count> blocks;
  for (Rank r = 0; r < p; ++r) blocks.push_back(layout.block(r));
  const auto scatter_tree = patterns::binomial_tree(p, 0, patterns::ChildOrder::kLargestFirst);
  const Time time =
      patterns::tree_reduce_time(
          patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst), *c, layout.total()) +
      patterns::tree_scatter_time(scatter_tree, patterns::virtual_positions(p, 0), blocks, *c);
  const double elements = static_cast<double>(p - 1) * static_cast<double>(layout.total()) +
                          patterns::tree_subtree_elements(scatter_tree, blocks);
  return make_estimate(spec, time, elements, 6.0 * p, false);
}

}  // namespace optcoll::algorithms
