// SPDX-License-Identifier: Apache-2.0
// reduce/circulant — bcast/circulant's rounds run backwards: S blocks, S − 1 + q rounds,
// q = ceil(log2 p). Every rank copies its contribution into an accumulator; in the reversal
// of the round in which the broadcast gave it block j, it sends its accumulated block j back
// to the rank it came from, which lands it in scratch and combines it after its own send of
// that round. In the broadcast every rank receives each block once, so each block's
// transfers form a tree rooted at the root; reversed, every rank combines its subtree of
// each block before passing it on. One send, one receive and one reduction per rank and
// round (patterns/circulant.h: emit_circulant_reduce).
//
//   p = 5, root 0, S = 2 (bcast/circulant's example, its rounds 3, 2, 1, 0 reversed):
//     0: 3→0 b1, 4→1 b1, 2→4 b0 | 1: 2→0 b1, 1→4 b0 | 2: 1→0 b1, 4→3 b0 | 3: 3→0 b0
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0): each round costs one
//   message plus one reduction, the larger blocks going first:
//   T(S) = (q − 1)(α + ceil(n/S)(β+γ)) + S·α + n(β+γ);
//   segment=auto takes the minimizing S. Checked against the simulator in
//   tests/sim/circulant_bcast_test.cc (every p up to 40 and some to 100, several S) and
//   closed_form_test.cc.
//   α = 100, β = 1, n = 1e5, γ = 0 (optcoll simulate reduce -p P --count 100000 --abstract
//   --alpha 100 --beta 1 --ports 1 --duplex full -a reduce/circulant): as bcast/circulant,
//   p = 16: 111,256 (reduce/double_binary 116,094); p = 64: 114,645 (121,000).
// Restrictions: segment "auto" or a positive integer; a commutative operator for p > 2 (the
//   block trees are not rank ranges: their combination order is not rank order).
// Reference: J. L. Träff, "Optimal broadcast schedules in logarithmic time with applications
//            to broadcast, all-broadcast, reduction and all-reduction", arXiv:2407.18004,
//            2024 (the broadcast schedule reversed for reduction).

#include "optcoll/algorithms/patterns/circulant.h"

#include <fmt/format.h>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

std::optional<std::string> circulant_reduce_why_not(const CollectiveSpec& spec,
                                                    const Params& params) {
  if (auto reason = segment_why_not(spec, params)) return reason;
  if (spec.commutative || spec.nranks <= 2) return std::nullopt;
  return fmt::format(
      "needs a commutative operator for p > 2 (p = {}): the circulant's block trees are not "
      "rank ranges, so partial results are not combined in rank order",
      spec.nranks);
}

Schedule build_reduce_circulant(const CollectiveSpec& spec, const Params& params,
                                const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/circulant");
  const Count n = spec.count;
  // T(S) = (q − 1)(α + ceil(n/S)(β+γ)) + Sα + n(β+γ): pipelined_tree_cost with q slots.
  const Count blocks = pipelined_segments(params, link_cost(model, spec), ceil_log2(spec.nranks),
                                          /*fanout=*/1, n, /*reduce=*/true);
  patterns::emit_circulant_reduce(b, spec.root, blocks, input_of(b.layout(), spec.root),
                                  output_of(b.layout(), spec.root));
  b.set_params(segment_param_text(n, blocks));
  return std::move(b).finish();
}

// Estimate: the copy of the contribution, then (q − 1)(α + ceil(n/S)(β+γ)) + Sα + n(β+γ)
// for the S the builder picks.
std::optional<Estimate> estimate_reduce_circulant(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t q = ceil_log2(spec.nranks);
  const Count blocks = pipelined_segments(params, link, q, 1, spec.count, true);
  const double sends = spec.nranks - 1;
  return make_estimate(
      spec,
      spec.count == 0
          ? 0
          : c->copy_of(spec.count) +
                (q == 0 ? 0 : pipelined_tree_cost(link, q, 1, spec.count, blocks, true)),
      sends * spec.count, 3 * sends * static_cast<double>(blocks) + spec.nranks, false,
      segment_param_text(spec.count, blocks));
}

}  // namespace optcoll::algorithms
