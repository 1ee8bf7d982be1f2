// SPDX-License-Identifier: Apache-2.0
// reduce/rabenseifner — recursive-halving reduce-scatter of the message cut into
// p' = 2^floor(log2 p) pieces, then a binomial gather of the pieces to the root along the
// same butterfly (the halving steps undone in reverse, only towards the root). Partners are
// met at increasing distance during the halving, so partials cover contiguous rank ranges
// (lower ranks on the left): rank order is kept. For p not a power of two the first 2·rem
// ranks fold pairwise first (rank 2i sends everything to 2i+1); if the root is one of the
// folded-out ranks, its partner forwards the result (patterns/butterfly.h).
//
//   p = 4, root 0, pieces a b c d:  halving → rank 0: a, 2: b, 1: c, 3: d
//                                   gather: 1→0 (c), 3→2 (d); then 2→0 (b d) → a b c d on 0
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, p' | n):
//   n·copy + 2·log2(p')·α + 2(p'-1)/p'·nβ + (p'-1)/p'·nγ
//   (+ (α + nβ + nγ) if p is not a power of two, + (α + nβ) if the root is folded out)
// Under a placement (and nothing else the formulas do not know): each step's message at the
//   intra-node costs where its partner shares the node, else the inter-node costs times its
//   turns at the node's NIC (patterns::ButterflyCosts; not exact).
// Restrictions: none (any p, any root, non-commutative operators, any n).
// Reference: Rabenseifner, "Optimization of collective reduction operations", ICCS 2004;
//            Thakur, Rabenseifner, Gropp, IJHPCA 2005.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_rabenseifner(const CollectiveSpec& spec, const Params& /*params*/,
                                   const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/rabenseifner");
  const Layout& layout = b.layout();
  const Rank root = spec.root;
  const patterns::Fold fold(spec.nranks);
  const auto members = patterns::all_ranks(spec.nranks);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) {
    bases.push_back(r == root ? output_of(layout, r) : b.scratch(r, spec.count));
    b.copy(r, input_of(layout, r), bases.back());
  }
  const auto slots = patterns::even_parts(spec.count, fold.pow2);
  patterns::fold_reduce(b, fold, members, bases);
  patterns::halving_reduce_scatter(b, fold, members, bases, slots);
  const Rank target =
      fold.virtual_of(root) >= 0 ? fold.virtual_of(root) : fold.virtual_of(root + 1);
  patterns::halving_gather(b, fold, members, bases, slots, target);
  if (fold.player(target) != root) {
    b.transfer(fold.player(target), root, bases[static_cast<std::size_t>(fold.player(target))],
               output_of(layout, root));
  }
  return std::move(b).finish();
}

// Estimate: the copy of the contribution, the fold and recursive halving, the binomial
// gather of the slots, and the result's message to a root that is not a player.
std::optional<Estimate> estimate_reduce_rabenseifner(const CollectiveSpec& spec,
                                                     const Params& /*params*/,
                                                     const CostModel& model) {
  const auto b = patterns::butterfly_costs(spec, model);
  if (!b) return std::nullopt;
  const LinkCosts& c = b->intra();
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const patterns::Fold fold(p);
  const Rank target =
      fold.virtual_of(spec.root) >= 0 ? fold.virtual_of(spec.root) : fold.virtual_of(spec.root + 1);
  const bool forward = fold.player(target) != spec.root;
  const auto slots = patterns::even_sizes(n, fold.pow2);
  const Time time = patterns::halving_gather_finish(
                        p, patterns::halving_reduce_scatter_clock(p, slots, n, *b, c.copy_of(n)),
                        slots, target, *b) +
                    (forward ? b->slowest({{fold.player(target), spec.root, n}}) : 0);
  const double elements = static_cast<double>(fold.rem + (forward ? 1 : 0)) * n +
                          patterns::halving_elements(p, n) + static_cast<double>(n);
  return make_estimate(spec, time, elements, p * (2.0 * fold.bits + 4), false);
}

}  // namespace optcoll::algorithms
