// SPDX-License-Identifier: Apache-2.0
// reduce_scatter_block/multicolor_bucket — Jain & Sabharwal's multicolor bucket
// reduce-scatter on an N-D torus (Algorithm 1): every block is split into N colours (2N
// colour-directions on bidirectional links); colour c reduce-scatters along dimensions
// c, c+1, ... (mod N), one 1-D bucket reduce-scatter per phase on every ring of that
// dimension. Blocks are first copied into scratch ordered by their owner's coordinates in the
// colour's dimension order, so that every phase cuts along block borders ("node-distribution
// respecting" colours) and each rank ends with its own block.
//
//   2x2 torus, uni, 2 colours: colour 0 reduces rows then columns, colour 1 columns then
//   rows; after phase 1 every rank holds half of each colour's data summed over its row
//   (column), after phase 2 its block summed over all.
//
// Cost: formulas (2)-(5) of the paper (docs/math/torus-bucket.md §4); symmetric torus, alpha = 0,
//   link-level simulation: (p-1)/p·nβ/(2N) bidirectional, /N unidirectional (n = p·m), the
//   lower bound, + (p-1)/p·nγ. Without a topology (1-D ring in rank order, one port, full
//   duplex): n·copy + (p-1)(α + mβ + mγ) + m·copy.
// Multicore (CostModel::cores_per_rank = c): the colour-directions' reductions run c at a
//   time: without overlap the γ term is (p-1)/p·nγ·ceil(S/c)/S, S = 2N (uni: N) streams.
// Restrictions: commutative operator; the topology (if any) must have p nodes.
// Reference: N. Jain, Y. Sabharwal, ICS 2010, Algorithm 1.

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/torus_bucket.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_block_multicolor_bucket(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  ScheduleBuilder b(spec, "reduce_scatter_block/multicolor_bucket");
  const auto g = patterns::torus_geometry(model, spec.nranks);
  const auto plan = patterns::resolve_bucket_plan(params, model, g.ndims(), 0, b);
  patterns::emit_reduce_scatter_block(b, g, plan);
  return std::move(b).finish();
}

// Bound, without a topology only (a 1-D ring): a piece of at least one element of a block
// travels p - 1 hops. None on a torus.
std::optional<Time> bound_reduce_scatter_multicolor_bucket(const CollectiveSpec& spec,
                                                           const CostModel& model) {
  if (model.topology) return std::nullopt;
  return chain_bound(spec, model, spec.nranks - 1, std::min<Count>(spec.count, 1));
}

// Estimate (no topology: one ring in rank order): the copy of the input, p - 1 steps of the
// block's `pieces` messages and reductions, and the copy of the result:
// n·copy + (p-1)(pieces·α + mβ + mγ) + m·copy.
std::optional<Estimate> estimate_reduce_scatter_block_multicolor_bucket(const CollectiveSpec& spec,
                                                                        const Params& params,
                                                                        const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t pieces = params.get_int("pieces");
  const std::string_view directions = params.get("directions");
  if (pieces < 1 || (directions != "auto" && directions != "1")) return std::nullopt;
  const double p = spec.nranks;
  const Count m = spec.count;
  const Time step = m == 0 ? 0 : static_cast<Time>(pieces) * c->alpha + (c->beta + c->gamma) * m;
  return make_estimate(spec, c->copy_of(m * spec.nranks) + (p - 1) * step + c->copy_of(m),
                       (p - 1) * p * m, 3 * p * p * pieces, pieces == 1,
                       fmt::format("directions=1,pieces={},sync=0", pieces));
}

}  // namespace optcoll::algorithms
