// SPDX-License-Identifier: Apache-2.0
// allreduce/multicolor_bucket — Jain & Sabharwal's multicolor bucket allreduce for an N-D
// torus: the vector is split into N colours (2N colour-directions on bidirectional links);
// colour c reduce-scatters along dimensions c, c+1, ..., c+N-1 (mod N) in N phases, each
// phase a 1-D bucket reduce-scatter on every ring of that dimension, then allgathers in the
// reverse order. In any phase the colours use different dimensions (a Latin square of
// dimension orders), so they never share a link.
//
//   4x4 torus, bidirectional: 4 streams of n/4: colour 0 (+,-) runs rows then columns,
//   colour 1 (+,-) columns then rows; after the reduce-scatter each rank holds 1/16 of each
//   stream fully reduced; the allgather undoes the phases.
//
// Cost (symmetric torus d^N = p, link-level simulation with with_topology(), alpha = 0,
//   per stream one ring at a time): reduce-scatter (p-1)/p·nβ/(2N) bidirectional, /N
//   unidirectional, the lower bound; allreduce twice that, plus (p-1)/p·nγ. Paper formula
//   (3): T_RS = 2N²(d-1)α + (p-1)/p·nγ + (p-1)/p·nβ/(2N); the simulator overlaps the start-ups
//   of different links and charges Σ(d_i-1)α per phase chain. Asymmetric tori: formula (2).
//   Without a topology: a 1-D bucket ring in rank order, n·copy + 2(p-1)α + 2(p-1)/p·nβ +
//   (p-1)/p·nγ (p | n, full duplex, one port).
// Multicore (CostModel::cores_per_rank = c; the paper's §4, "Parallelization with
//   multi-cores"): the S = 2N (unidirectional: N) colour-direction streams reduce
//   independently, so c of their reductions run at once, as if each core drove its own
//   colours: without overlap the γ term is (p-1)/p·nγ·ceil(S/c)/S (γ/N on N cores, γ/(2N)
//   on 2N), tests/sim/torus_test.cc, MulticoreColourDivisionMatchesThePaperFormula.
// Restrictions: commutative operator (contributions combine in ring order). The torus comes
//   from the model's topology (its node count must be p); without one, p is a 1-D torus.
// Reference: N. Jain, Y. Sabharwal, "Optimal bucket algorithms for large MPI collectives on
//   torus interconnects", ICS 2010, Algorithm 1.

#include <optional>

#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

std::span<const ParamInfo> torus_bucket_params() { return patterns::bucket_params(); }
std::span<const ParamInfo> ring_bucket_params() { return patterns::ring_params(); }

Schedule build_allreduce_multicolor_bucket(const CollectiveSpec& spec, const Params& params,
                                           const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/multicolor_bucket");
  const auto g = patterns::torus_geometry(model, spec.nranks);
  const auto plan = patterns::resolve_bucket_plan(params, model, g.ndims(), 0, b);
  patterns::emit_allreduce(b, g, plan);
  return std::move(b).finish();
}

// Bound and estimate: without a topology this is one bucket ring in rank order (the
// closed-form models have none): n·copy + 2(p-1)(pieces·α + ceil(n/p)β) + (p-1)ceil(n/p)γ.
std::optional<Time> bound_allreduce_multicolor_bucket(const CollectiveSpec& spec,
                                                      const CostModel& model) {
  return patterns::bucket_ring_allreduce_bound(spec, model);
}

std::optional<Estimate> estimate_allreduce_multicolor_bucket(const CollectiveSpec& spec,
                                                             const Params& params,
                                                             const CostModel& model) {
  return patterns::bucket_ring_allreduce_estimate(spec, params, model);
}

}  // namespace optcoll::algorithms
