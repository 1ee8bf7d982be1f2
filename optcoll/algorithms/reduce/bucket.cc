// SPDX-License-Identifier: Apache-2.0
// reduce/bucket — Chan et al.'s long-vector reduce: a bucket (ring) reduce-scatter of the
// message cut into p pieces (p-1 steps; rank r ends with piece r reduced), then an MST gather
// of the pieces to the root.
//
//   p = 4, root 0, pieces a b c d:  ring → rank q holds piece q reduced;
//                                   MST gather: 2→0 (c d after 3→2 (d)), 1→0 (b)
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, p | n):
//   n·copy + (p-1)·(α + n/p·β + n/p·γ) + ceil(log2 p)·α + (p-1)/p·nβ   (p a power of two;
//   the gather costs ceil(log2 p)·α + β·Σ_rounds largest message otherwise)
// Restrictions: needs a commutative operator (piece q is combined starting at rank q+1,
//   wrapping around past rank p-1).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (reduce = bucket
//            reduce-scatter + MST gather).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/group_phases.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_bucket(const CollectiveSpec& spec, const Params& /*params*/,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/bucket");
  const Layout& layout = b.layout();
  const auto members = patterns::all_ranks(spec.nranks);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) {
    bases.push_back(r == spec.root ? output_of(layout, r) : b.scratch(r, spec.count));
    b.copy(r, input_of(layout, r), bases.back());
  }
  const auto parts = patterns::even_parts(spec.count, spec.nranks);
  patterns::ring_reduce_scatter(b, members, bases, parts);
  patterns::mst_gather(b, members, bases, parts, spec.root);
  return std::move(b).finish();
}

// Estimate: the copy of the contribution, p - 1 ring steps of the largest piece, then the
// MST gather of the pieces to the root.
std::optional<Estimate> estimate_reduce_bucket(const CollectiveSpec& spec, const Params& /*params*/,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const auto parts = patterns::even_sizes(spec.count, p);
  const Time time = c->copy_of(spec.count) +
                    patterns::ring_reduce_scatter_time(p, parts.empty() ? 0 : parts[0], *c) +
                    patterns::mst_gather_time(parts, spec.root, *c);
  const double n = static_cast<double>(spec.count);
  return make_estimate(spec, time, (p - 1) * n + n * ceil_log2(p) / 2, 2.0 * p * p + 3.0 * p,
                       false);
}

}  // namespace optcoll::algorithms
