// SPDX-License-Identifier: Apache-2.0
// bcast/binary — complete binary tree in heap order over virtual ranks v = (r - root) mod p:
// v receives the whole message from (v-1)/2 and sends it to 2v+1, then 2v+2.
//
//   p = 7, root 0:  t=1: 0→1   t=2: 0→2 1→3   t=3: 1→4 2→5   t=4: 2→6
//
// Cost (alpha-beta, one port): W(p)·(α + nβ), W(p) = max_{1≤x≤p} (floor(log2 x) + popcount(x) − 1)
//   (rank v = x−1 is reached after floor(log2 x) hops, waiting one extra slot on every hop to
//   a second child): W = 2 for p = 3, 4; 4 for p = 7; 6 for p = 16; about 2·log2 p — worse
//   than binomial with one port; it is the unpipelined base of bcast/pipelined_binary.
// Restrictions: none (any p, any root by relabelling).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007; Pješivac-Grbović et al.,
//            "Performance analysis of MPI collective operations", Cluster Computing 2007.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_binary(const CollectiveSpec& spec, const Params& /*params*/,
                            const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/binary");
  auto tree =
      patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: the heap tree's one-port slots times α + nβ (patterns::bcast_slots). Exact.
std::optional<Estimate> estimate_bcast_binary(const CollectiveSpec& spec, const Params& /*params*/,
                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto tree =
      patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, patterns::tree_bcast_time(tree, *c, spec.count), sends * spec.count,
                       2 * sends, true);
}

}  // namespace optcoll::algorithms
