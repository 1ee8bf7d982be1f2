// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/linear (also reduce_scatter_block/linear) — every rank sends block q of its
// input straight to rank q; rank q combines the p contributions in rank order, moving
// outward from its own.
//
//   p = 3:  r0 gets x1[0], x2[0];  r1 gets x0[1], x2[1];  r2 gets x0[2], x1[2]
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m):
//   m·copy + (p-1)·(α + mβ + mγ)
// Restrictions: none (non-commutative operators are combined in rank order).
// Reference: the direct reduce-scatter, as in Bruck et al.'s and Thakur et al.'s baselines.

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_linear(const CollectiveSpec& spec, const Params& /*params*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank q = 0; q < p; ++q) {
    const Slice result = output_of(layout, q);
    b.copy(q, block_in(layout, Buf::kInput, q), result);
    for (Rank from = q - 1; from >= 0; --from) {
      b.transfer_reduce(from, q, block_in(layout, Buf::kInput, q), result, Side::kLeft);
    }
    for (Rank from = q + 1; from < p; ++from) {
      b.transfer_reduce(from, q, block_in(layout, Buf::kInput, q), result, Side::kRight);
    }
  }
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
