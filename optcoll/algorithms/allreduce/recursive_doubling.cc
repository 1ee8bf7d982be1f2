// SPDX-License-Identifier: Apache-2.0
// allreduce/recursive_doubling — in step k = 0, 1, ... every rank exchanges its whole partial
// result with the rank at distance 2^k and combines (the lower ranks' partial on the left:
// partials always cover contiguous rank ranges, so rank order is kept). For p not a power of
// two the first 2·rem ranks fold pairwise (rank 2i sends to 2i+1 before and gets the result
// back after), rem = p - 2^floor(log2 p) (patterns/butterfly.h). A rank that did not fold
// sends its first partial straight from its input, so its first message waits for no copy
// (the copy into the output runs beside it and is folded into the first combine).
//
//   p = 4:  step 0: 0↔1, 2↔3 → x0x1, x2x3   step 1: 0↔2, 1↔3 → x0x1x2x3 everywhere
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap):
//   n·copy + floor(log2 p)·(α + nβ + nγ)  (+ (α + nβ + nγ) + (α + nβ) if p is not a power of two)
// Under a placement (and nothing else the formulas do not know): each step's message at the
//   intra-node costs where its partner shares the node, else the inter-node costs times its
//   turns at the node's NIC (patterns::ButterflyCosts; not exact).
// Restrictions: none (any p, non-commutative operators).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (recursive doubling allreduce).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_recursive_doubling(const CollectiveSpec& spec, const Params& /*params*/,
                                            const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/recursive_doubling");
  const Layout& layout = b.layout();
  std::vector<Slice> bases;
  std::vector<Slice> inputs;
  for (Rank r = 0; r < spec.nranks; ++r) {
    b.copy(r, input_of(layout, r), output_of(layout, r));
    bases.push_back(output_of(layout, r));
    inputs.push_back(input_of(layout, r));
  }
  // The first exchange sends the inputs themselves: it need not wait for the copies.
  patterns::doubling_allreduce(b, patterns::all_ranks(spec.nranks), bases, inputs);
  return std::move(b).finish();
}

// Estimate: n·copy + floor(log2 p)(α + nβ + nγ), plus for p not a power of two the fold
// (α + nβ + nγ) and the hand-back (α + nβ): exact. Under a placement (two_level_costs), the
// copy and the exchange rank by rank with each step's messages priced by their levels
// (patterns::doubling_exchange_finish; not exact).
std::optional<Estimate> estimate_allreduce_recursive_doubling(const CollectiveSpec& spec,
                                                              const Params& /*params*/,
                                                              const CostModel& model) {
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const auto pow2 = static_cast<double>(std::int64_t{1} << floor_log2(p));
  const double messages = pow2 * static_cast<double>(floor_log2(p)) + 2 * (p - pow2);
  const double elements = messages * static_cast<double>(n);
  if (const auto c = closed_form_costs(spec, model)) {
    const bool folds = !is_power_of_two(p);
    const Time time = c->copy_of(n) + static_cast<Time>(floor_log2(p)) * c->message_reduce(n) +
                      (folds ? c->message_reduce(n) + c->message(n) : 0);
    return make_estimate(spec, time, elements, 3 * messages + p, true);
  }
  const auto levels = two_level_costs(spec, model);
  if (!levels) return std::nullopt;
  const patterns::ButterflyCosts costs(*levels);
  const Time time =
      costs.intra().copy_of(n) + patterns::doubling_exchange_finish(p, n, costs, /*combine=*/true);
  return make_estimate(spec, time, elements, 3 * messages + p, false);
}

}  // namespace optcoll::algorithms
