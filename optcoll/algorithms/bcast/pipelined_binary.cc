// SPDX-License-Identifier: Apache-2.0
// bcast/pipelined_binary — bcast/binary's heap-ordered binary tree with the message cut
// into S segments: every inner rank forwards segment s to its two children while the next
// segment arrives.
//
//   p = 7, root 0, S = 2 (slot = one segment message):  0→1 s0 | 0→2 s0, 1→3 s0 |
//   0→1 s1, 1→4 s0, 2→5 s0 | 0→2 s1, 1→3 s1, 2→6 s0 | 1→4 s1, 2→5 s1 | 2→6 s1: 6 slots
//
// Cost (alpha-beta, one port, full duplex), W = bcast/binary's slot count (2 for p = 3,
//   4 for p = 7, about 2·log2 p), F = 2 (1 for p = 2), segments of ceil(n/S) or floor(n/S):
//   (W − F)·(α + ceil(n/S)·β) + F·(S·α + nβ)    (= (W − 2 + 2S)(α + nβ/S) when S divides n).
//   segment=auto picks the S minimizing it under the builder's model (about
//   sqrt((W−2)·nβ/(2α))); segment=<e> uses S = ceil(n/e).
// Restrictions: segment "auto" or a positive integer; any p, any root (relabelling).
// Reference: Pješivac-Grbović et al., Cluster Computing 10(2), 2007 (segmented binary
//            tree); Sanders, Speck, Träff, Parallel Computing 35(12), 2009 (two-tree
//            broadcast, which this is the single-tree half of).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_pipelined_binary(const CollectiveSpec& spec, const Params& params,
                                      const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/pipelined_binary");
  auto tree =
      patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  const Count segments =
      pipelined_segments(params, link_cost(model, spec), patterns::bcast_slots(tree),
                         patterns::max_fanout(tree), spec.count, /*reduce=*/false);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root), static_cast<int>(segments));
  b.set_tree(std::move(tree));
  b.set_params(segment_param_text(spec.count, segments));
  return std::move(b).finish();
}

// Estimate: pipelined_tree_cost with the heap tree's slots and fanout, for the segments the
// builder picks. Exact.
std::optional<Estimate> estimate_bcast_pipelined_binary(const CollectiveSpec& spec,
                                                        const Params& params,
                                                        const CostModel& model) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const auto tree =
      patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  const std::int64_t slots = patterns::bcast_slots(tree);
  const std::int64_t fanout = patterns::max_fanout(tree);
  const Count segments = pipelined_segments(params, link, slots, fanout, spec.count, false);
  const double sends = spec.nranks - 1;
  return make_estimate(
      spec,
      spec.count == 0 ? 0 : pipelined_tree_cost(link, slots, fanout, spec.count, segments, false),
      sends * spec.count, 2 * sends * static_cast<double>(segments), true,
      segment_param_text(spec.count, segments));
}

}  // namespace optcoll::algorithms
