// SPDX-License-Identifier: Apache-2.0
// allreduce/double_binary — reduce/double_binary to rank 0, then bcast/double_binary from
// rank 0, both with the same S segments and the same edge-coloured step schedule. Rank 0
// starts the broadcast when it holds the whole result.
//
//   p = 7: segments 0, 2, ...: {1, 3} → 2, 5 → 6, {2, 6} → 4 → 0, then 0 → 4 → {2 → {1, 3},
//          6 → 5}; segments 1, 3, ...: the same over tree 2 (mirrored). S = 4: 8 + 8 steps.
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0, exact), D = D(p) as
//   in bcast/double_binary:
//   T(S) = (D − 1)(2α + ceil(n/S)(2β+γ)) + 2S·α + n(2β+γ),
//   the reduction's time plus the broadcast's; segment=auto takes the minimizing S.
//   Why not overlapped: rank 0 completes segment 0, the broadcast's first, last, so
//   starting each segment's broadcast as soon as it is reduced changes nothing (measured
//   equal); broadcasting in the order rank 0 completes the segments lets the two pipelines
//   contend for the ports that both keep busy every step, and measured slower (p = 64,
//   γ = 0, segment=auto: 324,500 against 242,000).
//   α = 100, β = 1, n = 1e5 (optcoll simulate allreduce ... --gamma G):
//     γ = 0: p = 16: 232,188 (before: 324,498); p = 64: 242,000 (before: 344,300);
//            allreduce/rabenseifner 188,300 and 198,138, allreduce/ring 190,500 and 265,982.
//     γ = 3: p = 16: 550,200 (before: 689,166); p = 64: 565,250 (before: 715,254);
//            rabenseifner 469,550 and 493,545, ring 471,750 and 504,945.
//   compose(reduce/double_binary, bcast/double_binary) is the same schedule with one S per
//   phase: equal at γ = 0, 0.5–0.6% faster at γ = 3 (p = 16: 547,682; p = 64: 562,000).
// Restrictions: segment "auto" or a positive integer; non-commutative operators only for
//   odd p (the reduction is rooted at 0; tree 2 is tree 1 mirrored, both over rank ranges).
// Reference: Sanders, Speck, Träff, Parallel Computing 35(12), 2009 (two-tree reduction and
//            broadcast); NCCL's double binary tree allreduce.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/algorithms/estimate.h"
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

// Estimate: the double-tree reduce to rank 0 and the double-tree bcast, both
// pipelined_tree_cost over D slots with the S the builder picks, after the contribution's
// copy.
std::optional<Estimate> estimate_allreduce_double_binary(const CollectiveSpec& spec,
                                                         const Params& params,
                                                         const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t depth = patterns::two_tree_depth_formula(spec.nranks);
  const LinkCost link = link_cost(model, spec);
  const Count n = spec.count;
  const auto cost = [&](Count s) {
    return pipelined_tree_cost(link, depth, 1, n, s, true) +
           pipelined_tree_cost(link, depth, 1, n, s, false);
  };
  const double hint =
      std::sqrt(static_cast<double>(std::max<std::int64_t>(0, depth - 1)) * static_cast<double>(n) *
                (2 * link.beta + link.gamma) / std::max(2 * link.alpha, 1e-300));
  const Count segments = resolve_segments(params, n, cost, hint);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, n == 0 ? 0 : c->copy_of(n) + cost(segments), 2 * sends * n,
                       4 * sends * static_cast<double>(segments) + spec.nranks, false,
                       segment_param_text(n, segments));
}

}  // namespace optcoll::algorithms
