// SPDX-License-Identifier: Apache-2.0
// allreduce/double_binary — reduce/double_binary to rank 0, then bcast/double_binary from
// rank 0, with the same S segments: segment s goes up and then down tree s mod 2, and the
// broadcast of a segment starts as soon as rank 0 has reduced it (the builder's hazard
// tracking orders each segment's bcast after its own reduction only), so the two pipelines
// overlap.
//
//   p = 7: segments 0, 2, ...: {1, 3} → 2, 5 → 6, {2, 6} → 4 → 0, then 0 → 4 → {2 → {1, 3},
//          6 → 5}; segments 1, 3, ...: the same over tree 2 (mirrored).
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0), W_r and W_b the
//   trees' reduce and bcast slot counts (root edge included): estimate
//   (W_r − 1)(α + ceil(n/S)(β+γ)) + (W_b − 1)(α + ceil(n/S)β) + 2S·α + n(2β+γ), which
//   segment=auto minimizes; not exact (see bcast/double_binary). Checked bound
//   (closed_form_test.cc): ≤ 2·W_r·(α + n(β+γ)) + 2·W_b·(α + nβ).
// Restrictions: segment "auto" or a positive integer; non-commutative operators only for
//   odd p (the reduction is rooted at 0; tree 2 is tree 1 mirrored, both over rank ranges).
// Reference: Sanders, Speck, Träff, Parallel Computing 35(12), 2009 (two-tree reduction and
//            broadcast); NCCL's double binary tree allreduce.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/two_tree.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

std::optional<std::string> allreduce_double_tree_why_not(const CollectiveSpec& spec,
                                                         const Params& params) {
  if (auto reason = segment_why_not(spec, params)) return reason;
  if (spec.commutative || spec.nranks % 2 == 1) return std::nullopt;
  return fmt::format(
      "needs a commutative operator unless p is odd (p = {}): the second tree's subtrees are "
      "not rank ranges otherwise",
      spec.nranks);
}

Schedule build_allreduce_double_binary(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/double_binary");
  const std::int64_t depth = patterns::two_tree_depth(spec.nranks);
  const LinkCost link = link_cost(model, spec);
  const Count n = spec.count;
  // T(S) = T_reduce(S) + T_bcast(S), both pipelined_tree_cost with D slots.
  const auto cost = [&](Count s) {
    return pipelined_tree_cost(link, depth, 1, n, s, true) +
           pipelined_tree_cost(link, depth, 1, n, s, false);
  };
  const double hint =
      std::sqrt(static_cast<double>(std::max<std::int64_t>(0, depth - 1)) * static_cast<double>(n) *
                (2 * link.beta + link.gamma) / std::max(2 * link.alpha, 1e-300));
  const Count segments = resolve_segments(params, n, cost, hint);
  const auto plan = patterns::two_tree_schedule(spec.nranks, 0, segments);
  const Slice data = output_of(b.layout(), 0);
  const OpId reduced = patterns::emit_two_tree_reduce(b, plan, input_of(b.layout(), 0), data);
  // Why: the broadcast starts when rank 0 holds the whole result, so it never competes
  // with the reduction for a port and the two step counts add up (see the header).
  patterns::emit_two_tree_bcast(b, plan, data, reduced);
  b.set_params(segment_param_text(n, segments));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
