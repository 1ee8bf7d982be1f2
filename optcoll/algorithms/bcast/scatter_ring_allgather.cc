// SPDX-License-Identifier: Apache-2.0
// bcast/scatter_ring_allgather — Chan et al.'s long-vector broadcast: the message is cut into
// p pieces, an MST scatter gives rank q piece q (the root sends the other half's pieces to
// that half, recursively), then a bucket (ring) allgather circulates the pieces.
//
//   p = 4, root 0, pieces a b c d:  scatter: 0→2 (c d), then 0→1 (b), 2→3 (d)
//                                   ring: 3 steps of one piece each → a b c d everywhere
//
// Cost (alpha-beta, full duplex, one port, p a power of two dividing n):
//   (log2(p) + p - 1)·α + 2(p-1)/p·nβ
// Restrictions: none (any p, any root, any n; pieces differ by at most one element).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (broadcast = MST scatter +
//            bucket allgather); Solomonik, CS 598 lecture 1 ("ring" broadcast).

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/group_phases.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_scatter_ring_allgather(const CollectiveSpec& spec, const Params& /*params*/,
                                            const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/scatter_ring_allgather");
  const auto members = patterns::all_ranks(spec.nranks);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) bases.push_back(output_of(b.layout(), r));
  const auto parts = patterns::even_parts(spec.count, spec.nranks);
  // Messages that would bring a rank only what it holds (the root's parts, the ranges a rank
  // forwarded in the scatter) are not sent.
  patterns::Held held(spec.nranks);
  held.add(spec.root, bases[static_cast<std::size_t>(spec.root)]);
  patterns::mst_scatter(b, members, bases, parts, spec.root, &held);
  patterns::ring_allgather(b, members, bases, parts, &held);
  return std::move(b).finish();
}

// Bound: the last rank in the scatter's order is a leaf of its tree, so it holds one piece
// and receives the other p - 1 in separate ring messages of at least floor(n/p) elements.
std::optional<Time> bound_bcast_scatter_ring_allgather(const CollectiveSpec& spec,
                                                       const CostModel& model) {
  return fan_in_bound(spec, model, spec.nranks - 1, spec.count / spec.nranks);
}

// Estimate: the MST scatter of the p pieces, then p - 1 ring steps of the largest piece
// (an upper estimate: messages a rank would receive of what it holds are not sent).
std::optional<Estimate> estimate_bcast_scatter_ring_allgather(const CollectiveSpec& spec,
                                                              const Params& /*params*/,
                                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const auto parts = patterns::even_sizes(spec.count, p);
  const Count largest = parts.empty() ? 0 : parts[0];
  const Time time = patterns::mst_scatter_time(parts, spec.root, *c) +
                    patterns::ring_allgather_time(p, largest, *c);
  const double n = static_cast<double>(spec.count);
  return make_estimate(spec, time, n * ceil_log2(p) / 2 + (p - 1) * n, 2.0 * p * (p + ceil_log2(p)),
                       false);
}

}  // namespace optcoll::algorithms
