// SPDX-License-Identifier: Apache-2.0
// allreduce/circulant — reduce/circulant to rank 0, then bcast/circulant from rank 0, both
// with the same S blocks; rank 0 starts the broadcast when it holds the whole result, so the
// two phases never compete for a port and their round counts add: 2(S − 1 + q) rounds,
// q = ceil(log2 p).
//
//   p = 5, S = 2: reduce/circulant's 4 rounds, then bcast/circulant's 4.
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0):
//   T(S) = (q − 1)(2α + ceil(n/S)(2β+γ)) + 2S·α + n(2β+γ),
//   the reduction's time plus the broadcast's; segment=auto takes the minimizing S.
//   Checked in tests/sim/circulant_bcast_test.cc and closed_form_test.cc.
//   α = 100, β = 1, γ = 0, n = 1e5 (optcoll simulate allreduce -p P --count 100000
//   --abstract --alpha 100 --beta 1 --ports 1 --duplex full -a allreduce/circulant):
//   p = 16: 222,512 (allreduce/double_binary 232,188); p = 64: 229,290 (242,000).
// Restrictions: segment "auto" or a positive integer; a commutative operator for p > 2 (as
//   reduce/circulant).
// Reference: J. L. Träff, "Optimal broadcast schedules in logarithmic time with applications
//            to broadcast, all-broadcast, reduction and all-reduction", arXiv:2407.18004,
//            2024.

#include "optcoll/algorithms/patterns/circulant.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {
namespace {

// The S minimizing T_reduce(S) + T_bcast(S), both pipelined_tree_cost with q slots.
Count allreduce_blocks(const Params& params, const LinkCost& link, std::int64_t q, Count n) {
  const auto cost = [&](Count s) {
    return pipelined_tree_cost(link, q, 1, n, s, true) +
           pipelined_tree_cost(link, q, 1, n, s, false);
  };
  const double hint =
      std::sqrt(static_cast<double>(std::max<std::int64_t>(0, q - 1)) * static_cast<double>(n) *
                (2 * link.beta + link.gamma) / std::max(2 * link.alpha, 1e-300));
  return resolve_segments(params, n, cost, hint);
}

}  // namespace

// Its why_not is reduce/circulant's (circulant_reduce_why_not, algorithms.def): the reduction
// half carries the restriction.
Schedule build_allreduce_circulant(const CollectiveSpec& spec, const Params& params,
                                   const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/circulant");
  const Count n = spec.count;
  const Count blocks = allreduce_blocks(params, link_cost(model, spec), ceil_log2(spec.nranks), n);
  const Slice data = output_of(b.layout(), 0);
  const OpId reduced = patterns::emit_circulant_reduce(b, 0, blocks, input_of(b.layout(), 0), data);
  // Why: the broadcast starts when rank 0 holds the whole result, so it never competes
  // with the reduction for a port and the two round counts add up (see the header).
  patterns::emit_circulant_bcast(b, 0, blocks, data, reduced);
  b.set_params(segment_param_text(n, blocks));
  return std::move(b).finish();
}

// Estimate: the contribution's copy, the reduction and the broadcast, for the S the builder
// picks.
std::optional<Estimate> estimate_allreduce_circulant(const CollectiveSpec& spec,
                                                     const Params& params, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t q = ceil_log2(spec.nranks);
  const Count n = spec.count;
  const Count blocks = allreduce_blocks(params, link, q, n);
  const Time phases = q == 0 ? 0
                             : pipelined_tree_cost(link, q, 1, n, blocks, true) +
                                   pipelined_tree_cost(link, q, 1, n, blocks, false);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, n == 0 ? 0 : c->copy_of(n) + phases, 2 * sends * n,
                       5 * sends * static_cast<double>(blocks) + spec.nranks, false,
                       segment_param_text(n, blocks));
}

}  // namespace optcoll::algorithms
