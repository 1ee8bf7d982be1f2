// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/pairwise (also reduce_scatter_block) — pairwise exchange: in step
// s = 1..p-1 rank r sends its contribution to block (r+s) mod p to that rank and receives
// rank (r-s) mod p's contribution to its own block. To keep rank order it combines the
// senders below it into its output (they arrive r-1, r-2, ..., 0: each on the left) and the
// senders above it into scratch (they arrive p-1, p-2, ..., r+1: each on the left), and
// finally output = op(output, scratch).
//
//   p = 3, rank 0:  s=1 from 2 → hi = x2;  s=2 from 1 → hi = x1·x2;  out = x0·(x1·x2)
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m):
//   (p-1)·(α + mβ + mγ) + m·copy
// Restrictions: none (any p, non-commutative operators, irregular and empty blocks).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (pairwise exchange reduce-scatter).

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_pairwise(const CollectiveSpec& spec, const Params& /*params*/,
                                       const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/pairwise");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  std::vector<Slice> above(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    b.copy(r, block_in(layout, Buf::kInput, r), output_of(layout, r));
    if (r + 1 < p) above[static_cast<std::size_t>(r)] = b.scratch(r, layout.block(r));
  }
  for (Rank s = 1; s < p; ++s) {
    for (Rank r = 0; r < p; ++r) {
      const Rank to = (r + s) % p;
      const Slice src = block_in(layout, Buf::kInput, to);
      if (r < to) {
        b.transfer_reduce(r, to, src, output_of(layout, to), Side::kLeft);
      } else if (r == p - 1) {  // the first sender above `to`
        b.transfer(r, to, src, above[static_cast<std::size_t>(to)]);
      } else {
        b.transfer_reduce(r, to, src, above[static_cast<std::size_t>(to)], Side::kLeft);
      }
    }
  }
  for (Rank r = 0; r + 1 < p; ++r) {
    b.reduce(r, above[static_cast<std::size_t>(r)], output_of(layout, r), Side::kRight);
  }
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
