// SPDX-License-Identifier: Apache-2.0
// scatter/linear (also scatterv/linear) — the root sends every other rank its block
// directly, in rank order, then copies its own block. Empty blocks send nothing.
//
//   p = 4, root 0:  0→1 [1], 0→2 [2], 0→3 [3], then copy [0]
//
// Cost (alpha-beta, one port): Σ_{q≠root, m_q>0} (α + m_q·β) + m_root·copy
// Restrictions: none.
// Reference: the linear MPI_Scatterv of Open MPI, MPICH and Intel MPI (Träff, TPDS 2019,
//            calls it the trivial algorithm).

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_scatter_linear(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  auto tree = patterns::flat_tree(spec.nranks, spec.root);
  patterns::emit_tree_scatter(b, tree, patterns::rank_positions(spec.nranks),
                              input_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms
