// SPDX-License-Identifier: Apache-2.0
// reduce/double_binary — two-tree pipelined reduction: the message is cut into S segments;
// even segments are reduced up tree 1, odd ones up tree 2 of patterns::double_binary_trees
// (bcast/double_binary's trees, edges reversed). Every non-root rank combines in one tree
// and only sends its contribution in the other, so in steady state each rank receives,
// reduces and sends about one segment per segment time.
//
//   p = 7, root 0:  tree 1: {1, 3} → 2, 5 → 6, {2, 6} → 4 → 0   (segments 0, 2, ...)
//                   tree 2: {6, 4} → 5, 2 → 1, {5, 1} → 3 → 0   (segments 1, 3, ...)
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0), W = the larger
//   one-port reduce slot count of the two trees (root edge included), segments of
//   ceil(n/S) or floor(n/S) elements: estimate (W − 1)·(α + ceil(n/S)(β+γ)) + S·α + n(β+γ),
//   which segment=auto minimizes. Not exact (the trees' transfers are not edge-coloured,
//   see bcast/double_binary); checked bound (closed_form_test.cc): ≤ 2·W·(α + n(β+γ)).
// Restrictions: segment "auto" or a positive integer. Non-commutative operators only with
//   root 0 and p odd: then both trees' subtrees are rank ranges (tree 2 is tree 1 mirrored);
//   otherwise tree 2 (shifted) or the relabelling around the root wraps past rank p−1.
// Reference: Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
//            reduction and scan", Parallel Computing 35(12), 2009.

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/two_tree.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

std::optional<std::string> double_tree_why_not(const CollectiveSpec& spec, const Params& params) {
  if (auto reason = segment_why_not(spec, params)) return reason;
  if (spec.commutative || (spec.root == 0 && spec.nranks % 2 == 1)) return std::nullopt;
  return fmt::format(
      "needs a commutative operator unless root = 0 and p is odd (p = {}, root = {}): the "
      "second tree's subtrees are not rank ranges otherwise",
      spec.nranks, spec.root);
}

Schedule build_reduce_double_binary(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/double_binary");
  // T(S) = (D − 1)(α + ceil(n/S)(β+γ)) + Sα + n(β+γ): pipelined_tree_cost with D slots.
  const std::int64_t depth = patterns::two_tree_depth(spec.nranks);
  const Count segments = pipelined_segments(params, link_cost(model, spec), depth,
                                            /*fanout=*/1, spec.count, /*reduce=*/true);
  const auto plan = patterns::two_tree_schedule(spec.nranks, spec.root, segments);
  patterns::emit_two_tree_reduce(b, plan, input_of(b.layout(), spec.root),
                                 output_of(b.layout(), spec.root));
  b.set_params(segment_param_text(spec.count, segments));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
