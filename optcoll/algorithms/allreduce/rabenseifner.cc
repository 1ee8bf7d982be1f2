// SPDX-License-Identifier: Apache-2.0
// allreduce/rabenseifner — recursive-halving reduce-scatter of the message cut into
// p' = 2^floor(log2 p) pieces, then the reverse recursive-doubling allgather. Partners are
// met at increasing distance during the halving, so every partial covers a contiguous rank
// range (lower ranks combined on the left): rank order is kept. For p not a power of two the
// first 2·rem ranks fold pairwise (rank 2i sends everything to 2i+1 first and gets the result
// back last), rem = p - p' (patterns/butterfly.h).
//
//   p = 4, pieces a b c d:  halving: 0↔1 (halves), 0↔2 (quarters) → rank 0: a, 2: b, 1: c, 3: d
//                           doubling: 0↔2, then 0↔1 → a b c d everywhere
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, p' | n):
//   n·copy + 2·log2(p')·α + 2(p'-1)/p'·nβ + (p'-1)/p'·nγ
//   (+ (α + nβ + nγ) + (α + nβ) if p is not a power of two)
// Under a placement (and nothing else the formulas do not know): each step's message at the
//   intra-node costs where its partner shares the node, else the inter-node costs times its
//   turns at the node's NIC (patterns::ButterflyCosts; not exact).
// Restrictions: none (any p, non-commutative operators, any n).
// Reference: Rabenseifner, "Optimization of collective reduction operations", ICCS 2004;
//            Thakur, Rabenseifner, Gropp, IJHPCA 2005.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_rabenseifner(const CollectiveSpec& spec, const Params& /*params*/,
                                      const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/rabenseifner");
  const Layout& layout = b.layout();
  const patterns::Fold fold(spec.nranks);
  const auto members = patterns::all_ranks(spec.nranks);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) {
    b.copy(r, input_of(layout, r), output_of(layout, r));
    bases.push_back(output_of(layout, r));
  }
  const auto slots = patterns::even_parts(spec.count, fold.pow2);
  patterns::fold_reduce(b, fold, members, bases);
  patterns::halving_reduce_scatter(b, fold, members, bases, slots);
  patterns::halving_allgather(b, fold, members, bases, slots);
  patterns::unfold_result(b, fold, members, bases);
  return std::move(b).finish();
}

// Estimate: the copy of the input, the fold and recursive halving, the recursive doubling
// of the slots, and the unfold's whole result for p not a power of two.
std::optional<Estimate> estimate_allreduce_rabenseifner(const CollectiveSpec& spec,
                                                        const Params& /*params*/,
                                                        const CostModel& model) {
  const auto b = patterns::butterfly_costs(spec, model);
  if (!b) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const patterns::Fold fold(p);
  const auto slots = patterns::even_sizes(n, fold.pow2);
  const Time time =
      patterns::halving_allgather_finish(
          p, patterns::halving_reduce_scatter_clock(p, slots, n, *b, b->intra().copy_of(n)), slots,
          *b) +
      (fold.rem > 0 ? patterns::unfold_message(*b, p, n) : 0);
  const double elements =
      2.0 * fold.rem * static_cast<double>(n) + 2 * patterns::halving_elements(p, n);
  return make_estimate(spec, time, elements, p * (4.0 * fold.bits + 4), false);
}

}  // namespace optcoll::algorithms
