// SPDX-License-Identifier: Apache-2.0
// allreduce/dimension_wise — the dimension-by-dimension bucket allreduce without colours
// (the baseline of Jain & Sabharwal; Chan et al. 2006): the whole vector is reduce-scattered
// along dimension 0, then 1, ..., then allgathered in reverse; on bidirectional links half
// of it goes each way round. Only the links of one dimension are busy at a time.
//
//   4x4 torus: bucket reduce-scatter along the rows (n/4 left per rank), then along the
//   columns (n/16), then allgather along the columns and the rows.
//
// Cost (symmetric torus, alpha = 0, link-level simulation): phase k moves (d-1)/d of the
//   n/d^k elements left over one link per rank, so the reduce-scatter takes
//   Σ_k (d-1)/d^{k+1}·nβ = (p-1)/p·nβ (unidirectional; half that bidirectional), N times the
//   multicolor time; allreduce twice that plus (p-1)/p·nγ, with 2N(d-1)α start-ups.
//   Without a topology: as allreduce/multicolor_bucket (a 1-D ring).
// Restrictions: commutative operator; the torus as for allreduce/multicolor_bucket.
// Reference: E. Chan, R. van de Geijn, W. Gropp, R. Thakur, "Collective communication on
//   architectures that support simultaneous communication over multiple links", PPoPP 2006.

#include <optional>

#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_allreduce_dimension_wise(const CollectiveSpec& spec, const Params& params,
                                        const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/dimension_wise");
  const auto g = patterns::torus_geometry(model, spec.nranks);
  const auto plan = patterns::resolve_bucket_plan(params, model, 1, 0, b);
  patterns::emit_allreduce(b, g, plan);
  return std::move(b).finish();
}

// Bound and estimate: without a topology this is one bucket ring in rank order (the
// closed-form models have none): n·copy + 2(p-1)(pieces·α + ceil(n/p)β) + (p-1)ceil(n/p)γ.
std::optional<Time> bound_allreduce_dimension_wise(const CollectiveSpec& spec,
                                                   const CostModel& model) {
  return patterns::bucket_ring_allreduce_bound(spec, model);
}

std::optional<Estimate> estimate_allreduce_dimension_wise(const CollectiveSpec& spec,
                                                          const Params& params,
                                                          const CostModel& model) {
  return patterns::bucket_ring_allreduce_estimate(spec, params, model);
}

}  // namespace optcoll::algorithms
