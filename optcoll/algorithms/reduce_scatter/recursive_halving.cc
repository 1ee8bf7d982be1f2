// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/recursive_halving (also reduce_scatter_block) — every rank copies its input
// into scratch with the blocks in bit-reversed order; in step k = 0, 1, ... it sends the half
// of its current range that the rank at distance 2^k keeps and combines the half it keeps
// with what that rank sends (lower ranks on the left, so rank order is kept). After log2 p
// steps rank v holds its own block (the bit reversal undoes itself). For p not a power of
// two the first 2·rem ranks fold pairwise first (rank 2i sends everything to 2i+1) and rank
// 2i+1 hands block 2i back at the end (patterns/butterfly.h).
//
//   p = 4, blocks in scratch order 0 2 1 3:  step 0: 0↔1, 2↔3 exchange halves ([0 2] | [1 3])
//                                            step 1: 0↔2, 1↔3 exchange quarters → rank v: v
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m, n = p·m):
//   p a power of two: log2(p)·α + (p-1)·m(β + γ) + (n + m)·copy
//   otherwise + (α + nβ + nγ) for the fold and (α + mβ) for the hand-back.
// Under a placement (and nothing else the formulas do not know): each step's message at the
//   intra-node costs where its partner shares the node, else the inter-node costs times its
//   turns at the node's NIC (patterns::ButterflyCosts; not exact).
// Restrictions: none (any p, non-commutative operators, irregular and empty blocks).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (recursive halving; the non-commutative
//            variant with bit-reversed block order).

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_recursive_halving(const CollectiveSpec& spec,
                                                const Params& /*params*/,
                                                const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/recursive_halving");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const patterns::Fold fold(p);
  const auto members = patterns::all_ranks(p);
  // Virtual block v: the blocks of the ranks it stands for; slot s holds virtual block
  // bitreverse(s).
  auto virtual_block = [&](Rank v) {
    const Count from = layout.displ(fold.first(v));
    const Rank last = fold.last(v);
    return patterns::Piece{from, layout.displ(last) + layout.block(last) - from};
  };
  std::vector<Count> slot_sizes;
  for (Rank s = 0; s < fold.pow2; ++s) {
    slot_sizes.push_back(virtual_block(patterns::bit_reverse(s, fold.bits)).count);
  }
  const auto slots = patterns::parts_of_sizes(slot_sizes);
  std::vector<Slice> bases;
  for (Rank r = 0; r < p; ++r) {
    bases.push_back(b.scratch(r, layout.total()));
    for (Rank s = 0; s < fold.pow2; ++s) {
      const auto block = virtual_block(patterns::bit_reverse(s, fold.bits));
      b.copy(r, {Buf::kInput, block.offset, block.count},
             patterns::at(bases.back(), slots[static_cast<std::size_t>(s)]));
    }
  }
  patterns::fold_reduce(b, fold, members, bases);
  patterns::halving_reduce_scatter(b, fold, members, bases, slots);
  for (Rank v = 0; v < fold.pow2; ++v) {
    const Rank player = fold.player(v);
    const Slice held =
        patterns::at(bases[static_cast<std::size_t>(player)],
                     slots[static_cast<std::size_t>(patterns::bit_reverse(v, fold.bits))]);
    if (fold.first(v) != player) {  // hand block 2v back to rank 2v
      b.transfer(player, fold.first(v), sub(held, 0, layout.block(fold.first(v))),
                 output_of(layout, fold.first(v)));
    }
    b.copy(player, sub(held, held.count - layout.block(player), layout.block(player)),
           output_of(layout, player));
  }
  return std::move(b).finish();
}

// Estimate: the copy of the input into the bit-reversed slots, the fold and recursive
// halving (patterns::halving_reduce_scatter_clock), then a folded-out rank's block
// handed back and the own block copied out.
std::optional<Estimate> estimate_reduce_scatter_recursive_halving(const CollectiveSpec& spec,
                                                                  const Params& /*params*/,
                                                                  const CostModel& model) {
  const auto b = patterns::butterfly_costs(spec, model);
  if (!b) return std::nullopt;
  const LinkCosts& c = b->intra();
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  const Count n = layout.total();
  const Count largest = largest_block(spec);
  const patterns::Fold fold(p);
  std::vector<Count> slots;  // slot s: virtual block bitreverse(s), the blocks it stands for
  for (Rank s = 0; s < fold.pow2; ++s) {
    const Rank v = patterns::bit_reverse(s, fold.bits);
    const Rank last = fold.last(v);
    slots.push_back(layout.displ(last) + layout.block(last) - layout.displ(fold.first(v)));
  }
  const auto clock = patterns::halving_reduce_scatter_clock(p, slots, n, *b, c.copy_of(n));
  const Time time = *std::max_element(clock.begin(), clock.end()) +
                    (fold.rem > 0 ? patterns::unfold_message(*b, p, largest) : 0) +
                    c.copy_of(largest);
  const double elements =
      static_cast<double>(fold.rem) * static_cast<double>(n) + patterns::halving_elements(p, n);
  // Ops: every rank's copies into the pow2 slots, then about three per step.
  return make_estimate(spec, time, elements, p * (3.0 * fold.bits + fold.pow2), false);
}

}  // namespace optcoll::algorithms
