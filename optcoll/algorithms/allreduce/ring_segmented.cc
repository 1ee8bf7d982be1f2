// SPDX-License-Identifier: Apache-2.0
// allreduce/ring_segmented — the message is cut into segments of `segment` elements and each
// segment is allreduced by a ring (bucket reduce-scatter, then bucket allgather, over p
// pieces of the segment). Segments only wait for each other where they share a port or the
// processor, so with computation/communication overlap the reduction of one segment hides
// behind the transfers of the next. segment=auto: the whole message without overlap (extra
// segments only add α); with overlap the k = n/segment that minimizes
//   T(k) = 2(p-1)·kα + 2(p-1)/p·nβ + (p-1)/p·nγ/k   (the unhidden reduction: one segment's)
// i.e. k = sqrt(nγ / (2pα)), rounded, between 1 and n/p.
//
//   p = 3, n = 6, segment = 3: pieces of 1 element; segment [0,3) runs its 4 ring steps,
//   segment [3,6) follows one step behind on every port.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, one segment, p | n):
//   2(p-1)·α + 2(p-1)/p·nβ + (p-1)/p·nγ + n·copy     (k segments: + 2(p-1)(k-1)·α at most)
// Restrictions: commutative operator (ring); segment >= 1.
// Reference: Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 2009;
//            Open MPI's ring_segmented allreduce (ompi coll/tuned).

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/group_phases.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/restrictions.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {
namespace {

constexpr std::array kParams{
    ParamInfo{"segment", "auto",
              "elements per segment; auto: the whole message without overlap, otherwise "
              "n / sqrt(nγ / (2pα)) (the cost formula's optimum)"}};

Count auto_segment(const CollectiveSpec& spec, const CostModel& model) {
  const Count n = spec.count;
  if (!model.overlap || model.gamma <= 0 || model.alpha <= 0 || n == 0)
    return std::max<Count>(n, 1);
  const double units = model.units(n, spec.elem_bytes);
  const double k = std::sqrt(units * model.gamma / (2.0 * spec.nranks * model.alpha));
  const Count most = std::max<Count>(1, n / spec.nranks);
  const Count segments = std::clamp<Count>(static_cast<Count>(std::llround(k)), 1, most);
  return (n + segments - 1) / segments;
}

}  // namespace

std::span<const ParamInfo> ring_segmented_params() { return kParams; }

std::optional<std::string> ring_segmented_ok(const CollectiveSpec& spec, const Params& params) {
  if (auto reason = needs_commutative(spec, params)) return reason;
  if (!params.has("segment") || params.get("segment") == "auto") return std::nullopt;
  if (params.get_int("segment") < 1) {
    return fmt::format("segment={} must be at least 1", params.get("segment"));
  }
  return std::nullopt;
}

Schedule build_allreduce_ring_segmented(const CollectiveSpec& spec, const Params& params,
                                        const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/ring_segmented");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const bool automatic = !params.has("segment") || params.get("segment") == "auto";
  const Count segment = automatic ? auto_segment(spec, model) : params.get_int("segment");
  b.set_params(fmt::format("segment={}", segment));
  const auto members = patterns::all_ranks(p);
  std::vector<Slice> bases;
  for (Rank r = 0; r < p; ++r) {
    b.copy(r, input_of(layout, r), output_of(layout, r));
    bases.push_back(output_of(layout, r));
  }
  for (Count offset = 0; offset < n; offset += segment) {
    auto parts = patterns::even_parts(std::min(segment, n - offset), p);
    for (auto& part : parts) part.offset += offset;
    patterns::ring_reduce_scatter(b, members, bases, parts);
    patterns::ring_allgather(b, members, bases, parts);
  }
  return std::move(b).finish();
}

// Bound: a piece (at least one element) of the first segment makes 2(p - 1) hops, whatever
// the segment size.
std::optional<Time> bound_allreduce_ring_segmented(const CollectiveSpec& spec,
                                                   const CostModel& model) {
  return chain_bound(spec, model, 2 * (spec.nranks - 1), std::min<Count>(spec.count, 1));
}

// Estimate: the copy of the input, then per segment p - 1 reduce-scatter and p - 1
// allgather steps of its largest piece, the segments one after the other.
std::optional<Estimate> estimate_allreduce_ring_segmented(const CollectiveSpec& spec,
                                                          const Params& params,
                                                          const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const bool automatic = !params.has("segment") || params.get("segment") == "auto";
  const Count segment = automatic ? auto_segment(spec, model) : params.get_int("segment");
  Time time = c->copy_of(n);
  double segments = 0;
  for (Count offset = 0; offset < n; offset += segment) {
    const Count length = std::min(segment, n - offset);
    const Count piece = (length + p - 1) / p;
    time += patterns::ring_reduce_scatter_time(p, piece, *c) +
            patterns::ring_allgather_time(p, piece, *c);
    ++segments;
  }
  return make_estimate(spec, time, 2.0 * (p - 1) * static_cast<double>(n),
                       6.0 * p * p * std::max(1.0, segments), false,
                       fmt::format("segment={}", segment));
}

}  // namespace optcoll::algorithms
