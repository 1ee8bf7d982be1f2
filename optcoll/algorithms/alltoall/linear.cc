// SPDX-License-Identifier: Apache-2.0
// alltoall/linear (also alltoallv/linear) — every rank posts all its sends at once, to
// ranks 0, 1, ..., p-1 in that order, and copies its own block. Every rank starts by
// sending to rank 0: the simulator shows the resulting hot spot.
//
//   p = 3:  r0: copy, 0→1, 0→2   r1: 1→0, copy, 1→2   r2: 2→0, 2→1, copy
//
// Cost (alpha-beta, full duplex, one port, regular blocks m): at least (p-1)·(α + mβ) + m·copy;
//   more where several ranks send to the same rank at once.
// Restrictions: none.
// Reference: the "basic linear" alltoall(v) of Open MPI and MPICH.

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_alltoall_linear(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 0; r < p; ++r) {
    for (Rank to = 0; to < p; ++to) {
      const Slice src{Buf::kInput, layout.send_displ(r, to), layout.pair_count(r, to)};
      const Slice dst{Buf::kOutput, layout.recv_displ(to, r), layout.pair_count(r, to)};
      if (to == r) {
        b.copy(r, src, dst);
      } else {
        b.transfer(r, to, src, dst);
      }
    }
  }
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
