// SPDX-License-Identifier: Apache-2.0
// reduce/greedy_segmented — reduce/greedy_overlap with the vector cut into S segments that
// are pipelined through Canon & Antoniu's optimal tree, planned for one segment's costs.
//
//   p = 4, S = 2, d = c: the tree for one segment is 0 <- {2, 1}, 1 <- 3; rank 0 receives
//   segment 0 from 2 and 1, then segment 1 from 2 and 1, reducing segment 0 while segment 1
//   arrives; rank 1 sends segment 0 while rank 3's segment 1 is still to come.
//
// Cost (overlap, one port, half duplex; per segment d_S = α + β·n/S, c_S = γ·n/S): about
//   L_S + (S - 1)·B_S, L_S the optimal single-segment length (Algorithm 1) and B_S the busiest
//   machine's time per segment: max((children + 1)·d_S, children·c_S). S = segments, or for
//   "auto" the S in {1, 2, 3, 4, 6, ..., 256} (at most n) that minimizes this estimate; 1
//   without overlap, where the cost is reduce/greedy_overlap's. The simulator's makespan is
//   the reference: the estimate is what auto minimizes, not an exact prediction for S > 1.
// Restrictions: none (labelling as reduce/greedy_overlap; + α + n/S·β for a non-commutative
//   operator when the sink cannot sit at the root in rank order).
// Reference: L.-C. Canon, G. Antoniu, INRIA RR-7898 (2012) for the tree; segmenting as in
//   pipelined tree reductions (e.g. Sanders, Speck, Träff 2009).

#include <array>
#include <span>
#include <string>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/planners/greedy_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

std::span<const ParamInfo> greedy_segmented_params() {
  static constexpr std::array<ParamInfo, 1> kParams{{
      {"segments", "auto", "pieces pipelined through the tree; auto: chosen from the model"},
  }};
  return kParams;
}

std::optional<std::string> greedy_segmented_why_not(const CollectiveSpec& /*spec*/,
                                                    const Params& params) {
  if (params.get("segments") == "auto") return std::nullopt;
  const auto segments = params.get_int("segments");
  if (segments < 1 || segments > 65536) return "segments must be auto or 1..65536";
  return std::nullopt;
}

Schedule build_reduce_greedy_segmented(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/greedy_segmented");
  const Layout& layout = b.layout();
  const bool automatic = params.get("segments") == "auto";
  const int segments = automatic ? planners::choose_segments(spec, spec.count, model)
                                 : static_cast<int>(params.get_int("segments"));
  OPTCOLL_CHECK(segments >= 1, "segments {} (why_not and choose_segments keep it >= 1)", segments);
  const Count piece = (spec.count + segments - 1) / segments;
  const auto tree =
      planners::greedy_optimal(spec.nranks, planners::reduction_costs(spec, piece, model));
  planners::emit_greedy_reduce(b, tree, input_of(layout, spec.root), output_of(layout, spec.root),
                               spec.root, segments);
  b.set_params(fmt::format("segments={}", segments));
  return std::move(b).finish();
}

// Estimate (exact): the planner's own predicted length (the tree is planned for the model: without
// overlap each edge costs α + nβ + nγ), plus the result's message to a root that a
// non-commutative operator keeps from the sink.
std::optional<Estimate> estimate_reduce_greedy_segmented(const CollectiveSpec& spec,
                                                         const Params& params,
                                                         const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  if (params.get("segments") != "auto" && params.get_int("segments") != 1) return std::nullopt;
  const auto tree =
      planners::greedy_optimal(spec.nranks, planners::reduction_costs(spec, spec.count, model));
  const bool forward = planners::greedy_reduce_forwards(tree, spec.root, spec.commutative);
  const double sends = spec.nranks - 1 + (forward ? 1 : 0);
  const Time own = spec.nranks == 1 ? c->copy_of(spec.count) : 0;  // the root alone copies
  return make_estimate(spec, own + tree.length + (forward ? c->message(spec.count) : 0),
                       sends * spec.count, 2 * sends + spec.nranks, true, "segments=1");
}

}  // namespace optcoll::algorithms
