// SPDX-License-Identifier: Apache-2.0
// gather/lpt_star (also gatherv/lpt_star) — the root copies its own block, then receives
// every other rank's block directly into place on k receive lists (the model's `ports`):
// Graham's LPT list schedule, the largest block first (ties in rank order) onto the list
// that ends first under the model's α and β. Each list is a chain (a receive starts after
// the one before it on its list), so the order holds in the simulator, which would start
// ready transfers by sender rank, and in the executors. Empty blocks send nothing.
//
//   blocks 0,3,3,2,2,2 (root 0), 2 ports, α = 0, β = 1: LPT puts 3+2+2 on one port and 3+2
//   on the other: 7. The best star takes 6 (3+3 | 2+2+2).
//
// Cost (alpha-beta, k ports): m_root·copy + LPT_k({α + m_q·β : q ≠ root, m_q > 0}), at most
//   (4/3 − 1/(3k)) times the best assignment of the messages to the k ports (Graham 1969);
//   with one port it is gather/linear's Σ (α + m_q·β).
// Restrictions: none. Why not better: a star on k ports with α = 0 is multiprocessor
//   scheduling, so the best star, and the best k-ported gather tree, is NP-hard to find
//   (Träff, Theorem 6); Proposition 2's optimal substructure, which the one-ported DP
//   (gather/optimal) rests on, does not hold with k ports (Träff, Section 3.1's discussion).
// Reference: J. L. Träff, "Optimal trees for irregular gather and scatter collectives", IEEE
//   TPDS 30(9), 2019, Theorem 6; R. L. Graham, "Bounds on multiprocessing timing anomalies",
//   SIAM J. Appl. Math. 17(2), 1969.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {
Schedule build_gather_lpt_star(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& model) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/lpt_star");
  const Layout& layout = b.layout();
  const Slice out = output_of(layout, spec.root);
  const OpId copy =
      b.copy(spec.root, input_of(layout, spec.root), block_at(layout, out, spec.root));
  const auto blocks = blocks_of(layout);
  for (const auto& list : patterns::lpt_port_lists(
           blocks, spec.root, patterns::base_link_costs(spec, model), model.ports)) {
    OpId before = copy;
    for (const Rank q : list) {
      const auto t = b.transfer(q, spec.root, input_of(layout, q), block_at(layout, out, q));
      // The list's order (the copy first, then LPT): no data hazard implies it.
      b.add_dependency(spec.root, before, t.recv);
      before = t.recv;
    }
  }
  b.set_tree(patterns::largest_first_flat_tree(blocks, spec.root));
  return std::move(b).finish();
}

// Estimate: the root's copy, then its longest list: m_root·copy + LPT_k. Exact.
std::optional<Estimate> estimate_gather_lpt_star(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  return patterns::lpt_star_estimate(spec, model);
}

}  // namespace optcoll::algorithms
