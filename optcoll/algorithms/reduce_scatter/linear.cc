// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/linear (also reduce_scatter_block/linear) — linear reduce of the whole
// input vector to rank 0 (which combines the p vectors in rank order), then linear scatter
// of the result's blocks from rank 0.
//
//   p = 3:  r0: t = x0; t = t⊕x1; t = t⊕x2;  then copy t[0], 0→1 t[1], 0→2 t[2]
//
// Cost (alpha-beta-gamma, one port, no overlap, n = total, m_q = block of q):
//   n·copy + (p-1)·(α + nβ + nγ) + Σ_{q≠0, m_q>0}(α + m_q·β) + m_0·copy
// Restrictions: none (non-commutative operators are combined in rank order).
// Reference: the "basic linear" reduce_scatter of Open MPI (reduce, then scatterv).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                     const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Slice reduced = b.scratch(0, layout.total());
  patterns::emit_tree_reduce(b, patterns::outward_flat_tree(p, 0), input_of(layout, 0), reduced);
  patterns::emit_tree_scatter(b, patterns::flat_tree(p, 0), patterns::rank_positions(p), reduced);
  return std::move(b).finish();
}

// Estimate: the linear reduce to rank 0, n·copy + (p-1)(α + nβ + nγ), then its sends of
// the other blocks and the copy of its own: Σ_{q≠0, m_q>0}(α + m_q·β) + m_0·copy. Exact.
std::optional<Estimate> estimate_reduce_scatter_linear(const CollectiveSpec& spec,
                                                       const Params& /*params*/,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  const Count n = layout.total();
  Time time =
      c->copy_of(n) + static_cast<Time>(p - 1) * c->message_reduce(n) + c->copy_of(layout.block(0));
  for (Rank q = 1; q < p; ++q) time += c->message(layout.block(q));
  const double elements = static_cast<double>(p - 1) * static_cast<double>(n) +
                          static_cast<double>(n - layout.block(0));
  return make_estimate(spec, time, elements, 4.0 * p, true);
}

}  // namespace optcoll::algorithms
