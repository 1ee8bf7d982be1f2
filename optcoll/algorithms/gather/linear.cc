// SPDX-License-Identifier: Apache-2.0
// gather/linear (also gatherv/linear) — the root copies its own block, then receives every
// other rank's block directly into place, in rank order. Empty blocks send nothing.
//
//   p = 4, root 0:  copy [0], then 1→0 [1], 2→0 [2], 3→0 [3]
//
// Cost (alpha-beta, one port): m_root·copy + Σ_{q≠root, m_q>0} (α + m_q·β)
// Restrictions: none.
// Reference: the linear MPI_Gatherv of Open MPI, MPICH and Intel MPI (Träff, TPDS 2019).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
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

// Estimate: the root's copy and its p - 1 messages (empty blocks cost nothing): m_root·copy
// + Σ_{q≠root, m_q>0}(α + m_q·β). Exact.
std::optional<Estimate> estimate_gather_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  Time time = c->copy_of(layout.block(spec.root));
  for (Rank q = 0; q < spec.nranks; ++q) {
    if (q != spec.root) time += c->message(layout.block(q));
  }
  const double elements =
      static_cast<double>(layout.total()) - static_cast<double>(layout.block(spec.root));
  return make_estimate(spec, time, elements, 2.0 * spec.nranks, true);
}

}  // namespace optcoll::algorithms
