// SPDX-License-Identifier: Apache-2.0
// bcast/double_binary — two-tree pipelined broadcast (Sanders, Speck, Träff): the message is
// cut into S segments; even segments go down one tree, odd ones down the other (patterns::
// double_binary_trees: every non-root rank is inner in at most one tree). The trees' edges
// are coloured 0/1 so that each rank's two incoming and two outgoing edges differ, and step
// t uses only edges of colour (t + shift) mod 2: every rank sends at most once and receives
// at most once per step, in steady state exactly once each (patterns/two_tree.h).
//
//   p = 7, root 0:  tree 1: 0 → 4 → {2 → {1, 3}, 6 → 5};  tree 2: 0 → 3 → {5 → {6, 4}, 1 → 2}
//                   S = 4: 8 steps (the step table is in patterns/two_tree.h), the root
//                   sending in steps 0–3, rank 4 receiving segment 3 last in step 7.
//
// Cost (alpha-beta, one port, full duplex, exact): with D = D(p) the steps of one segment,
//   T(S) = (D − 1)(α + ceil(n/S)·β) + S·α + n·β,
//   i.e. (S + D − 1)(α + (n/S)β) when S divides n (the larger segments go last, so the
//   root's S messages plus D − 1 steps of the largest segment are the critical path);
//   D(p) = 2·floor(log2(p−1)) + [p−1 ≡ 2 (mod 4) or p−1 = 2^k − 1] for p ≥ 4, D = 0, 1, 2
//   for p = 1, 2, 3 (p = 3 uses the chain 0 → 1 → 2 as both trees); segment=auto takes the
//   S that minimizes T(S). Checked at every p up to 70 and some up to 200, any root, S
//   dividing n or not (tests/sim/double_tree_cost_test.cc), and at p in {4, 7, 16, 64} with
//   segment=auto (closed_form_test.cc).
//   α = 100, β = 1, n = 1e5 (optcoll simulate bcast -p P --count 100000 --abstract
//   --alpha 100 --beta 1 --ports 1 --duplex full -a ...):
//     p = 16 (D = 7, S = 77): 116,094; before the colouring 130,081; pipelined_chain 125,070,
//       pipelined_binary 218,292.
//     p = 64 (D = 11, S = 100): 121,000; before 138,600; pipelined_chain 156,000,
//       pipelined_binary 226,104.
// Restrictions: segment "auto" or a positive integer; any p, any root (ranks relabelled).
// Reference: Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
//            reduction and scan", Parallel Computing 35(12), 2009.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/two_tree.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_double_binary(const CollectiveSpec& spec, const Params& params,
                                   const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/double_binary");
  const Count n = spec.count;
  // T(S) = (D − 1)(α + ceil(n/S)β) + Sα + nβ: pipelined_tree_cost with D slots, fanout 1.
  const std::int64_t depth = patterns::two_tree_depth(spec.nranks);
  const Count segments =
      pipelined_segments(params, link_cost(model, spec), depth, /*fanout=*/1, n, false);
  const auto plan = patterns::two_tree_schedule(spec.nranks, spec.root, segments);
  patterns::emit_two_tree_bcast(b, plan, output_of(b.layout(), spec.root));
  b.set_params(segment_param_text(n, segments));
  return std::move(b).finish();
}

// Estimate: (D − 1)(α + ceil(n/S)β) + Sα + nβ for the S the builder picks. Exact.
std::optional<Estimate> estimate_bcast_double_binary(const CollectiveSpec& spec,
                                                     const Params& params, const CostModel& model) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t depth = patterns::two_tree_depth_formula(spec.nranks);
  const Count segments = pipelined_segments(params, link, depth, 1, spec.count, false);
  const double sends = spec.nranks - 1;
  return make_estimate(
      spec, spec.count == 0 ? 0 : pipelined_tree_cost(link, depth, 1, spec.count, segments, false),
      sends * spec.count, 2 * sends * static_cast<double>(segments), true,
      segment_param_text(spec.count, segments));
}

}  // namespace optcoll::algorithms
