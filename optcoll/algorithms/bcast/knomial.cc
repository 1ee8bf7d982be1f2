// SPDX-License-Identifier: Apache-2.0
// bcast/knomial — k-nomial tree (radix k) over virtual ranks: the root sends to the roots
// of k−1 subtrees of size k^(L−1), then k−1 of size k^(L−2), ...; every rank forwards to its
// own subtrees, largest first. k = 2 is the binomial tree.
//
//   p = 9, k = 3, root 0:  0 → 3, 6 (subtrees {3,4,5}, {6,7,8}), then 0 → 1, 2; 3 → 4, 5;
//                          6 → 7, 8: with one port 4 slots.
//
// Cost (alpha-beta, one port): ceil(log_k p)·(k−1)·(α + nβ) for p a power of k; an upper
//   bound otherwise. With one port the binomial tree (k = 2) is never slower; k > 2 pays off
//   only where a rank can drive several ports.
// Restrictions: radix an integer in [2, 2^20]; any p, any root (relabelling).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (MST); k-nomial trees as
//            in Bruck et al., IEEE TPDS 8(11), 1997.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_knomial(const CollectiveSpec& spec, const Params& params,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/knomial");
  const auto radix = static_cast<Rank>(params.get_int("radix"));
  auto tree =
      patterns::knomial_tree(spec.nranks, spec.root, radix, patterns::ChildOrder::kLargestFirst);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  b.set_params("radix=" + std::to_string(radix));
  return std::move(b).finish();
}

// Estimate: the k-nomial tree's one-port slots times α + nβ. Exact.
std::optional<Estimate> estimate_bcast_knomial(const CollectiveSpec& spec, const Params& params,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto radix = static_cast<Rank>(params.get_int("radix"));
  const auto tree =
      patterns::knomial_tree(spec.nranks, spec.root, radix, patterns::ChildOrder::kLargestFirst);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, patterns::tree_bcast_time(tree, *c, spec.count), sends * spec.count,
                       2 * sends, true, "radix=" + std::to_string(radix));
}

}  // namespace optcoll::algorithms
