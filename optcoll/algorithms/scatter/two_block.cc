// SPDX-License-Identifier: Apache-2.0
// scatterv/two_block — Träff's TWO_Scatterv (Lemma 2), the mirror image of gatherv/two_block:
// the ranks are split into a large-block and a small-block class; the root sends the other
// class's whole segment to that class's sub-root in ONE message, and both classes scatter
// concurrently over trees over their members in rank order. The split and the trees are
// gatherv/two_block's (planners/two_block.cc: thresholds searched with adaptive binomial class
// trees, then the optimal DP's trees for that split and for one class; the cheapest wins).
//
//   Lemma 2: p = 7, alpha = 10, beta = copy = 1, b_S = 3 everywhere but b_L = 200 at the root
//   j = 6: the root sends ranks 0..5 their 18 elements in one message (28), then copies its own
//   200 while they scatter among themselves: 228; scatterv/optimal needs 238. At j = 3 the
//   root sends the one message straight from the two runs of its input that hold ranks 0-2
//   and 4-6 (a SendSlices): 228 too.
//
// Cost: the gather's (time reversal): Träff's Definition 2 over the joined tree; a segment
//   whose blocks are not one slice of the root's buffer is one message sent from the runs it
//   forms there (SendSlices), priced as any message of its size; homogeneously never above
//   scatterv/optimal. Lower bound beta·Σ_{q≠root} m_q + copy·m_root. On Lemma 2's instance:
//   copy·b_L + alpha + beta(p-1)b_S wherever the root is. Measurements: gatherv/two_block.
// Model: Träff's (one port, no overlap, copy = CostModel::copy, empty messages free); items
//   chained in the model's order, so the simulated makespan equals the planned cost exactly.
// Restrictions: none (any p >= 1, any root, empty blocks).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Lemma 2 and TWO_Scatterv; docs/math/gather-scatter-trees.md §7.
#include "optcoll/algorithms/planners/two_block.h"

#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_scatterv_two_block(const CollectiveSpec& spec, const Params& /*params*/,
                                  const CostModel& model) {
  return planners::build_two_block_schedule(spec, model);
}

// Estimate: as gatherv/two_block's (planners::two_block_estimate).
std::optional<Estimate> estimate_scatterv_two_block(const CollectiveSpec& spec,
                                                    const Params& /*params*/,
                                                    const CostModel& model) {
  return planners::two_block_estimate(spec, model);
}

}  // namespace optcoll::algorithms
