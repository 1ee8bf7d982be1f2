// SPDX-License-Identifier: Apache-2.0
// bcast/pipelined_chain — the message is cut into S segments that flow down the chain
// root → root+1 → ... → root+p−1 (mod p): rank v forwards segment s while it receives s+1.
//
//   p = 4, S = 3, full duplex:  t=1: 0→1 s0   t=2: 0→1 s1, 1→2 s0   t=3: 0→1 s2, 1→2 s1,
//                               2→3 s0   t=4: 1→2 s2, 2→3 s1   t=5: 2→3 s2   (p−2+S slots)
//
// Cost (alpha-beta, one port, full duplex), segments of ceil(n/S) or floor(n/S) elements,
//   the larger ones first: (p−2)·(α + ceil(n/S)·β) + S·α + nβ   (p ≥ 2; = (p−2+S)(α + nβ/S)
//   when S divides n). segment=auto picks the S that minimizes it under the builder's model
//   (about sqrt((p−2)·nβ/α)); segment=<e> uses S = ceil(n/e).
// Restrictions: segment "auto" or a positive integer; any p, any root (relabelling).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007; Pješivac-Grbović et al.,
//            Cluster Computing 10(2), 2007 (segmented chain broadcast).

#include <algorithm>
#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_pipelined_chain(const CollectiveSpec& spec, const Params& params,
                                     const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/pipelined_chain");
  auto tree = patterns::virtual_chain(spec.nranks, spec.root);
  const Count segments =
      pipelined_segments(params, link_cost(model, spec), patterns::bcast_slots(tree),
                         patterns::max_fanout(tree), spec.count, /*reduce=*/false);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root), static_cast<int>(segments));
  b.set_tree(std::move(tree));
  b.set_params(segment_param_text(spec.count, segments));
  return std::move(b).finish();
}

// Bound: the first segment (at least one element) goes down the whole chain, p - 1 hops.
std::optional<Time> bound_bcast_pipelined_chain(const CollectiveSpec& spec,
                                                const CostModel& model) {
  return chain_bound(spec, model, spec.nranks - 1, std::min<Count>(spec.count, 1));
}

// Estimate: pipelined_tree_cost with the chain's p - 1 slots and fanout 1, for the segments
// the builder picks. Exact.
std::optional<Estimate> estimate_bcast_pipelined_chain(const CollectiveSpec& spec,
                                                       const Params& params,
                                                       const CostModel& model) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t slots = spec.nranks - 1;
  const std::int64_t fanout = spec.nranks > 1 ? 1 : 0;
  const Count segments = pipelined_segments(params, link, slots, fanout, spec.count, false);
  const double sends = static_cast<double>(slots);
  return make_estimate(
      spec,
      spec.count == 0 ? 0 : pipelined_tree_cost(link, slots, fanout, spec.count, segments, false),
      sends * spec.count, 2 * sends * static_cast<double>(segments), true,
      segment_param_text(spec.count, segments));
}

}  // namespace optcoll::algorithms
