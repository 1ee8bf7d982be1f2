// SPDX-License-Identifier: Apache-2.0
// allreduce/ring_snake — the bucket (ring) allreduce over all p ranks, in snake order: the
// reflected mixed-radix Gray code over the model's torus dimensions, a Hamiltonian cycle
// whose edges are single links when the first dimension is even, so the ring never
// contends for a link (docs/math/torus-bucket.md §5). Baseline of Jain & Sabharwal.
//
//   2x3 torus (rows x columns): snake (0,0) (0,1) (0,2) (1,2) (1,1) (1,0), back to (0,0).
//
// Cost (one direction, n | p): 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ + n·copy, whatever the
//   topology if the cycle has no conflicts (1 of the 2N links per rank busy: 3-6x the torus
//   bound). Without a topology: the ring in rank order.
// Restrictions: commutative operator; the topology (if any) must have p nodes.
// Reference: N. Jain, Y. Sabharwal, ICS 2010, §2.2 (1-D bucket algorithm, eq. 1).

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_allreduce_ring_snake(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/ring_snake");
  const auto g = patterns::single_ring(patterns::snake_order(model, spec.nranks));
  const auto plan = patterns::resolve_bucket_plan(params, model, 1, 1, b);
  patterns::emit_allreduce(b, g, plan);
  return std::move(b).finish();
}

// Bound: a ring over all p ranks (in any order), so a piece of at least one element makes
// 2(p - 1) hops.
std::optional<Time> bound_allreduce_ring_snake(const CollectiveSpec& spec, const CostModel& model) {
  return chain_bound(spec, model, 2 * (spec.nranks - 1), std::min<Count>(spec.count, 1));
}

// Estimate (no topology: one ring in rank order, the closed-form models have none): the copy
// of the input, then p - 1 reduce-scatter and p - 1 allgather steps of the largest piece,
// each of `pieces` messages: n·copy + 2(p-1)(pieces·α + ceil(n/p)β) + (p-1)ceil(n/p)γ.
std::optional<Estimate> estimate_allreduce_ring_snake(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t pieces = params.get_int("pieces");
  if (pieces < 1) return std::nullopt;

  return patterns::ring_allreduce_estimate(spec, *c, pieces, fmt::format("pieces={}", pieces));
}

}  // namespace optcoll::algorithms
