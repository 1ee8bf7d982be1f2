// SPDX-License-Identifier: Apache-2.0
// bcast/scatter_doubling_allgather — the message is cut into p pieces, an MST scatter gives
// rank q piece q, then a recursive-doubling allgather (any p: the first 2·rem ranks fold
// pairwise, patterns/butterfly.h) assembles the message everywhere.
//
//   p = 4, root 0, pieces a b c d:  scatter: 0→2 (c d), then 0→1 (b), 2→3 (d)
//                                   doubling: 0↔1, 2↔3 (one piece), 0↔2, 1↔3 (two pieces)
//
// Cost (alpha-beta, full duplex, one port, p a power of two dividing n):
//   2·log2(p)·α + 2(p-1)/p·nβ
//   (p not a power of two: + (α + n/p·β) for the fold and (α + nβ) for the hand-back, with
//   the doubling over 2^floor(log2 p) ranks whose first rem hold two pieces)
// Restrictions: none (any p, any root, any n).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (scatter + recursive-doubling allgather
//            broadcast, Van de Geijn's long-message algorithm).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_scatter_doubling_allgather(const CollectiveSpec& spec,
                                                const Params& /*params*/,
                                                const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/scatter_doubling_allgather");
  const auto members = patterns::all_ranks(spec.nranks);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) bases.push_back(output_of(b.layout(), r));
  const auto parts = patterns::even_parts(spec.count, spec.nranks);
  // Messages that would bring a rank only what it holds (the root's parts, the ranges a rank
  // forwarded in the scatter) are not sent.
  patterns::Held held(spec.nranks);
  held.add(spec.root, bases[static_cast<std::size_t>(spec.root)]);
  patterns::mst_scatter(b, members, bases, parts, spec.root, &held);
  patterns::doubling_allgather(b, members, bases, parts, &held);
  return std::move(b).finish();
}

// Estimate: the MST scatter of the p pieces, then the recursive-doubling allgather (fold,
// steps as long as their largest message, unfold).
std::optional<Estimate> estimate_bcast_scatter_doubling_allgather(const CollectiveSpec& spec,
                                                                  const Params& /*params*/,
                                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const auto parts = patterns::even_sizes(spec.count, p);
  const Time time = patterns::mst_scatter_time(parts, spec.root, *c) +
                    patterns::doubling_allgather_time(parts, *c);
  const double n = static_cast<double>(spec.count);
  const double log = static_cast<double>(ceil_log2(p));
  return make_estimate(spec, time, n * log / 2 + (p - 1) * n, 4.0 * p * (log + 1), false);
}

}  // namespace optcoll::algorithms
