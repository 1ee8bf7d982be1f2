// SPDX-License-Identifier: Apache-2.0
// bcast/double_binary — double (two-tree) pipelined broadcast: the message is cut into S
// segments; even segments go down tree 1, odd ones down tree 2 (patterns::
// double_binary_trees). Every non-root rank is an inner node in one tree and a leaf in the
// other (one exception for odd p − 1), so each rank forwards only half the segments, twice:
// in steady state every rank sends and receives one segment per segment time, where one
// pipelined binary tree makes inner ranks send two.
//
//   p = 7, root 0:  tree 1: 0 → 4 → {2 → {1, 3}, 6 → 5};  tree 2: 0 → 3 → {5 → {6, 4}, 1 → 2}
//                   segments 0, 2, 4, ... use tree 1; 1, 3, 5, ... tree 2.
//
// Cost (alpha-beta, one port, full duplex), W = the larger one-port slot count of the two
//   trees (root edge included), segments of ceil(n/S) or floor(n/S) elements:
//   estimate E(S) = (W − 1)·(α + ceil(n/S)·β) + S·α + nβ (one tree's pipeline fill, then
//   one message per segment), which segment=auto minimizes under the builder's model.
//   Not exact: the two trees' transfers are not edge-coloured (Sanders et al. colour them so
//   every rank sends and receives exactly once per step), so ports sometimes collide; the
//   simulator measures E(S) + up to about 0.16 segment times per segment (α = 100, β = 1:
//   p = 16, n = 1e5: +10 at S = 77; p = 64: +16 at S = 100). Still faster than
//   pipelined_chain and pipelined_binary there (138,600 against about 156,000 at p = 64).
//   Checked bound (closed_form_test.cc): ≤ 2·W·(α + nβ).
// Restrictions: segment "auto" or a positive integer; any p, any root (ranks relabelled).
// Reference: Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
//            reduction and scan", Parallel Computing 35(12), 2009.

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

}  // namespace optcoll::algorithms
