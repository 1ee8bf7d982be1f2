// SPDX-License-Identifier: Apache-2.0
// allgather/ring (also allgatherv/ring) — each rank forwards, in step s = 0..p-2, the block
// it received in step s-1 to its right neighbour, starting with its own block.
//
//   p = 4, after step 0:  r0:[0 . . 3]  r1:[0 1 . .]  r2:[. 1 2 .]  r3:[. . 2 3]
//
// Cost (alpha-beta, full duplex, one port, regular blocks m = n/p):
//   (p-1)·(α + mβ) + m·copy   (= (p-1)α + (p-1)/p·nβ: bandwidth-optimal)
// Restrictions: none (non-uniform and empty blocks; p = 1 is a local copy).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (bucket allgather);
//            Thakur, Rabenseifner, Gropp, IJHPCA 2005.

#include "optcoll/algorithms/patterns/ring.h"

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_ring(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/ring");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 0; r < p; ++r) b.copy(r, input_of(layout, r), block_in(layout, Buf::kOutput, r));
  for (Rank step = 0; step + 1 < p; ++step) {
    for (Rank r = 0; r < p; ++r) {
      const Rank owner = patterns::ring_mod(std::int64_t{r} - step, p);
      const Rank right = patterns::ring_right(r, p);
      const Slice block = block_in(layout, Buf::kOutput, owner);
      b.transfer(r, right, block, block);
    }
  }
  return std::move(b).finish();
}

// Bound: the largest block travels p - 1 hops, each forwarded after it arrived.
std::optional<Time> bound_allgather_ring(const CollectiveSpec& spec, const CostModel& model) {
  return chain_bound(spec, model, spec.nranks - 1, largest_block(spec));
}

// Estimate: the copy of the own block, then p - 1 steps as long as the largest block's
// message. Exact for equal blocks: (p-1)(α + mβ) + m·copy.
std::optional<Estimate> estimate_allgather_ring(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Count largest = largest_block(spec);
  const double elements =
      static_cast<double>(spec.nranks - 1) * static_cast<double>(layout.total());
  return make_estimate(
      spec, c->copy_of(largest) + patterns::ring_allgather_time(spec.nranks, largest, *c), elements,
      2.0 * spec.nranks * spec.nranks, spec.counts.empty());
}

}  // namespace optcoll::algorithms
