// SPDX-License-Identifier: Apache-2.0
// allreduce/linear — every rank sends its whole vector to every other rank, and each rank
// combines all p vectors itself, in rank order, moving outward from its own.
//
//   p = 3:  r1: out = x1; out = x0⊕out; out = out⊕x2   (likewise on r0 and r2)
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap): n·copy + (p-1)·(α + nβ + nγ)
// Restrictions: none (non-commutative operators are combined in rank order).
// Reference: the direct all-to-all allreduce; the baseline of Thakur et al., IJHPCA 2005.

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_linear(const CollectiveSpec& spec, const Params& /*params*/) {
  ScheduleBuilder b(spec, "allreduce/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 0; r < p; ++r) {
    const Slice result = output_of(layout, r);
    b.copy(r, input_of(layout, r), result);
    for (Rank from = r - 1; from >= 0; --from) {
      b.transfer_reduce(from, r, input_of(layout, from), result, Side::kLeft);
    }
    for (Rank from = r + 1; from < p; ++from) {
      b.transfer_reduce(from, r, input_of(layout, from), result, Side::kRight);
    }
  }
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
