// SPDX-License-Identifier: Apache-2.0
// allgather/multicolor_bucket — Jain & Sabharwal's multicolor bucket allgather on an N-D
// torus: reduce_scatter_block/multicolor_bucket run backwards without computation. Every
// block is split into N colours (2N colour-directions on bidirectional links); colour c
// gathers along dimensions c+N-1, ..., c+1, c (mod N), one 1-D bucket allgather per phase,
// in a scratch region ordered by the owners' coordinates; then the blocks are copied out in
// rank order.
//
//   2x2 torus, uni: colour 0 gathers columns then rows, colour 1 rows then columns.
//
// Cost: as reduce_scatter_block/multicolor_bucket with γ = 0 (n = p·m). Without a topology
//   (1-D ring in rank order, one port, full duplex): m·copy + (p-1)(α + mβ) + n·copy.
// Restrictions: none; the topology (if any) must have p nodes.
// Reference: N. Jain, Y. Sabharwal, ICS 2010, §4.

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_allgather_multicolor_bucket(const CollectiveSpec& spec, const Params& params,
                                           const CostModel& model) {
  ScheduleBuilder b(spec, "allgather/multicolor_bucket");
  const auto g = patterns::torus_geometry(model, spec.nranks);
  const auto plan = patterns::resolve_bucket_plan(params, model, g.ndims(), 0, b);
  patterns::emit_allgather(b, g, plan);
  return std::move(b).finish();
}

// Bound, without a topology only (a 1-D ring): a piece of at least one element of a block
// travels p - 1 hops. None on a torus.
std::optional<Time> bound_allgather_multicolor_bucket(const CollectiveSpec& spec,
                                                      const CostModel& model) {
  if (model.topology) return std::nullopt;
  return chain_bound(spec, model, spec.nranks - 1, std::min<Count>(spec.count, 1));
}

// Estimate (no topology: one ring in rank order, the closed-form models have none): the
// copies of the own block and of the result, and p - 1 steps in which every rank sends its
// `pieces` messages of the step's block: m·copy + (p-1)(pieces·α + mβ) + n·copy.
std::optional<Estimate> estimate_allgather_multicolor_bucket(const CollectiveSpec& spec,
                                                             const Params& params,
                                                             const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t pieces = params.get_int("pieces");
  const std::string_view directions = params.get("directions");
  if (pieces < 1 || (directions != "auto" && directions != "1")) return std::nullopt;
  const double p = spec.nranks;
  const Count m = spec.count;
  const Time step = m == 0 ? 0 : static_cast<Time>(pieces) * c->alpha + c->beta * m;
  return make_estimate(spec, c->copy_of(m) + (p - 1) * step + c->copy_of(m * spec.nranks),
                       (p - 1) * p * m, 2 * p * p * pieces, pieces == 1,
                       fmt::format("directions=1,pieces={},sync=0", pieces));
}

}  // namespace optcoll::algorithms
