// SPDX-License-Identifier: Apache-2.0
// allreduce/bidirectional_ring — two counter-rotating bucket rings over all p ranks in
// snake order, n/2 each: on bidirectional links both directions of the Hamiltonian cycle
// are busy (2 of the 4N directed links per rank). Baseline of Jain & Sabharwal.
//
//   p = 4, pieces a..h: ring + reduce-scatters a b c d rightwards, ring - e f g h leftwards.
//
// Cost (bidirectional torus, alpha = 0): 2·(p-1)/p·(n/2)β + (p-1)/p·nγ per allreduce
//   (2(p-1)α start-ups); with one port per rank (no topology) the two rings share the
//   ports, so it is no faster than one ring.
// Restrictions: commutative operator; the topology (if any) must have p nodes.
// Reference: N. Jain, Y. Sabharwal, ICS 2010, §2.2; docs/math/torus-bucket.md §5.

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_allreduce_bidirectional_ring(const CollectiveSpec& spec, const Params& params,
                                            const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/bidirectional_ring");
  const auto g = patterns::single_ring(patterns::snake_order(model, spec.nranks));
  const auto plan = patterns::resolve_bucket_plan(params, model, 1, 2, b);
  patterns::emit_allreduce(b, g, plan);
  return std::move(b).finish();
}

// Bound: each ring spans all p ranks, so a piece of at least one element makes 2(p - 1) hops.
std::optional<Time> bound_allreduce_bidirectional_ring(const CollectiveSpec& spec,
                                                       const CostModel& model) {
  return chain_bound(spec, model, 2 * (spec.nranks - 1), std::min<Count>(spec.count, 1));
}

// Estimate: two rings on half the message each, in opposite directions: with one port a
// rank's two sends of a step go one after the other, so each step costs two messages of
// the half's piece: n·copy + 2(p-1)(2(pieces·α) + 2·ceil(n/2p)β) + 2(p-1)ceil(n/2p)γ.
std::optional<Estimate> estimate_allreduce_bidirectional_ring(const CollectiveSpec& spec,
                                                              const Params& params,
                                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t pieces = params.get_int("pieces");
  if (pieces < 1) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const Count half = (n + 1) / 2;
  const Count piece = (half + p - 1) / p;
  const Time alpha = static_cast<Time>(pieces) * c->alpha;
  const Time step = piece == 0 ? 0 : alpha + c->beta * piece;
  const Time time = c->copy_of(n) + static_cast<Time>(p - 1) * 2 * (2 * step + c->reduce(piece));
  return make_estimate(spec, time, 2.0 * (p - 1) * static_cast<double>(n),
                       12.0 * p * p * static_cast<double>(pieces), false,
                       fmt::format("pieces={}", pieces));
}

}  // namespace optcoll::algorithms
