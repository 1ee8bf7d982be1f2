// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/ring (also reduce_scatter_block/ring) — bucket reduce-scatter: in step
// s = 0..p-2 rank r sends its partial sum of block (r-s-1) mod p to its right neighbour,
// which adds its own contribution; after p-1 steps rank r holds the full sum of block r.
//
//   p = 3 (blocks a, b, c):  step 0: r0 sends c0, r1 sends a1, r2 sends b2
//                            step 1: r0 sends b2+b0, r1 sends c0+c1, r2 sends a1+a2
//                            → r0: a1+a2+a0, r1: b2+b0+b1, r2: c0+c1+c2
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m = n/p):
//   (p-1)·(α + mβ + mγ) + (p-1)·m·copy   (= (p-1)α + (p-1)/p·n(β+γ) with copy = 0)
// Restrictions: needs a commutative operator (block b is combined starting at rank b+1,
//   wrapping around past rank p-1).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (bucket reduce-scatter).

#include "optcoll/algorithms/patterns/ring.h"

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_ring(const CollectiveSpec& spec, const Params& /*params*/,
                                   const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/ring");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  // Rank r accumulates block q (q != r) in scratch at displ(q), and block r in its output.
  std::vector<Slice> partials(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) partials[static_cast<std::size_t>(r)] = b.scratch(r, layout.total());
  auto partial = [&](Rank at, Rank q) {
    return q == at ? output_of(layout, at)
                   : block_at(layout, partials[static_cast<std::size_t>(at)], q);
  };
  for (Rank r = 0; r < p; ++r) {
    // Every block a rank will combine starts as its own contribution (all but block r-1,
    // which it only ever sends, straight from its input).
    for (Rank q = 0; q < p; ++q) {
      // (With p = 1 there are no sends: the one block is copied.)
      if (p == 1 || q != patterns::ring_left(r, p)) {
        b.copy(r, block_in(layout, Buf::kInput, q), partial(r, q));
      }
    }
  }
  for (Rank step = 0; step + 1 < p; ++step) {
    for (Rank r = 0; r < p; ++r) {
      const Rank q = patterns::ring_mod(std::int64_t{r} - step - 1, p);
      const Rank right = patterns::ring_right(r, p);
      const Slice from = step == 0 ? block_in(layout, Buf::kInput, q) : partial(r, q);
      b.transfer_reduce(r, right, from, partial(right, q), Side::kLeft);
    }
  }
  return std::move(b).finish();
}

// Bound: the partial sums of the largest block travel p - 1 hops, each sent after the
// previous one was received and combined.
std::optional<Time> bound_reduce_scatter_ring(const CollectiveSpec& spec, const CostModel& model) {
  return chain_bound(spec, model, spec.nranks - 1, largest_block(spec));
}

// Estimate: every rank's copies of the blocks it combines, then p - 1 steps as long as the
// largest block's message and reduction. Exact for equal blocks:
// (p-1)(α + mβ + mγ) + (p-1)m·copy.
std::optional<Estimate> estimate_reduce_scatter_ring(const CollectiveSpec& spec,
                                                     const Params& /*params*/,
                                                     const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  Count copied = p == 1 ? layout.total() : 0;  // the most a rank copies: all but block r - 1
  for (Rank r = 0; r < p && p > 1; ++r) {
    copied = std::max(copied, layout.total() - layout.block((r + p - 1) % p));
  }
  const Count largest = largest_block(spec);
  const double elements = static_cast<double>(p - 1) * static_cast<double>(layout.total());
  return make_estimate(spec,
                       c->copy_of(copied) + patterns::ring_reduce_scatter_time(p, largest, *c),
                       elements, 3.0 * p * p, spec.counts.empty());
}

}  // namespace optcoll::algorithms
