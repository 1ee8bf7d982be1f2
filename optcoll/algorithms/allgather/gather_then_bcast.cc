// SPDX-License-Identifier: Apache-2.0
// allgather/gather_then_bcast (also allgatherv/gather_then_bcast) — binomial gather of every
// block to rank 0, then binomial broadcast of the assembled vector from rank 0.
//
//   p = 4:  gather 1→0, 3→2, 2→0 [2,3];  bcast 0→2 [0..3], 0→1, 2→3
//
// Cost (alpha-beta, one port, regular blocks m, n = p·m, p a power of two, copy = 0):
//   2·log2(p)·α + (log2(p) + (p-1)/p)·nβ   (Chan et al.'s MST allgather)
// Restrictions: none.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (allgather = gather + bcast).

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_gather_then_bcast(const CollectiveSpec& spec, const Params& /*params*/,
                                           const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/gather_then_bcast");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Slice assembled = output_of(layout, 0);
  patterns::emit_tree_gather(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst),
                             patterns::virtual_positions(p, 0), assembled);
  patterns::emit_tree_bcast(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kLargestFirst),
                            assembled);
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
