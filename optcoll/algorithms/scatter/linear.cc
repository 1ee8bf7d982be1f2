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

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
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

// Estimate: the root's copy and its p - 1 messages (empty blocks cost nothing): m_root·copy
// + Σ_{q≠root, m_q>0}(α + m_q·β). Exact.
std::optional<Estimate> estimate_scatter_linear(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
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
