// SPDX-License-Identifier: Apache-2.0
// gather/linear (also gatherv/linear) — the root copies its own block, then receives every
// other rank's block directly into place, in rank order. Empty blocks send nothing.
//
//   p = 4, root 0:  copy [0], then 1→0 [1], 2→0 [2], 3→0 [3]
//
// Cost (alpha-beta, one port): m_root·copy + Σ_{q≠root, m_q>0} (α + m_q·β)
// Restrictions: none.
// Reference: the linear MPI_Gatherv of Open MPI, MPICH and Intel MPI (Träff, TPDS 2019).

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_gather_linear(const CollectiveSpec& spec, const Params& /*params*/,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  auto tree = patterns::flat_tree(spec.nranks, spec.root);
  patterns::emit_tree_gather(b, tree, patterns::rank_positions(spec.nranks),
                             output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
