// SPDX-License-Identifier: Apache-2.0
// reduce/double_binary — two-tree pipelined reduction: bcast/double_binary's step schedule
// run backwards (step t becomes steps − 1 − t, every edge child → parent). S segments; even
// ones are combined up one tree, odd ones up the other; a rank inner in a tree accumulates
// there (scratch), elsewhere it sends its contribution as it is. Each received segment lands
// in scratch and is reduced after the rank's send of the same step, and every op of a step
// waits for the rank's previous step, so each step costs one message plus one reduction.
//
//   p = 7, root 0:  tree 1: {1, 3} → 2, 5 → 6, {2, 6} → 4 → 0   (segments 0, 2, ...)
//                   tree 2: {6, 4} → 5, 2 → 1, {5, 1} → 3 → 0   (segments 1, 3, ...)
//                   S = 4: 8 steps, the reversal of bcast/double_binary's.
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0, exact), D = D(p) as
//   in bcast/double_binary:
//   T(S) = (D − 1)(α + ceil(n/S)(β+γ)) + S·α + n(β+γ)
//   (the larger segments go first); segment=auto takes the minimizing S. Checked like
//   bcast/double_binary (tests/sim/double_tree_cost_test.cc, closed_form_test.cc).
//   α = 100, β = 1, n = 1e5 (optcoll simulate reduce ... --gamma G):
//     γ = 0: p = 16: 116,094 (before: 169,240); p = 64: 121,000 (before: 174,900);
//            pipelined_chain 125,070 and 156,000, pipelined_binary 218,292 and 226,104.
//     γ = 3: p = 16: 431,588 (S = 157; before: 500,962); p = 64: 441,000 (S = 200; before:
//            573,900); pipelined_chain 448,732 and 505,800, pipelined_binary 836,184 and
//            851,400.
// Restrictions: segment "auto" or a positive integer. Non-commutative operators only with
//   root 0 and p odd: then both trees' subtrees are rank ranges (tree 2 is tree 1 mirrored;
//   p = 3: a chain); otherwise tree 2 (shifted) or the relabelling around the root wraps past
//   rank p−1.
// Reference: Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
//            reduction and scan", Parallel Computing 35(12), 2009.

#include <fmt/format.h>

#include "optcoll/algorithms/estimate.h"
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

// Estimate: the copy of the contribution, then (D − 1)(α + ceil(n/S)(β+γ)) + Sα + n(β+γ)
// for the S the builder picks.
std::optional<Estimate> estimate_reduce_double_binary(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t depth = patterns::two_tree_depth_formula(spec.nranks);
  const Count segments = pipelined_segments(params, link, depth, 1, spec.count, true);
  const double sends = spec.nranks - 1;
  return make_estimate(spec,
                       spec.count == 0
                           ? 0
                           : c->copy_of(spec.count) +
                                 pipelined_tree_cost(link, depth, 1, spec.count, segments, true),
                       sends * spec.count, 2 * sends * static_cast<double>(segments) + spec.nranks,
                       false, segment_param_text(spec.count, segments));
}

}  // namespace optcoll::algorithms
