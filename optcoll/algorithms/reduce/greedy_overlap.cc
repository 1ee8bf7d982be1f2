// SPDX-License-Identifier: Apache-2.0
// reduce/greedy_overlap — Canon & Antoniu's optimal reduction tree when machines receive
// while they reduce (Algorithm 1), or a variant for a limit: at most K transfers in progress
// at once (Algorithm 2, transfers=K), at most K receiving machines (Algorithm 3, reducers=K).
// The schedule records which ran: params "transfers=K,reducers=R,greedy=A", A = 1, 2 or 3.
//
//   p = 8, d = c (α + nβ = nγ), root 0: the order-4 Fibonacci tree, length 5d:
//     m0 receives m3, m5, m2, m1 (reductions [1,2] [2,3] [3,4] [4,5]); m1 receives m4, m6
//     and sends at 3; m2 receives m7 and sends at 2; the others are leaves.
//   Each receive lands in a scratch slot (Recv) and is reduced into the accumulator (Reduce),
//   so the next element arrives while the previous one is reduced.
//   transfers=1, p = 5, d = 1, c = 2: m4 → m0 [0,1], m3 → m1 [1,2], m2 → m0 [2,3], m1 → m0
//     [4,5], length 7, one transfer at a time: each send carries its start time as a release
//     time (Op::not_before), since m3 → m1 could otherwise start at 0 beside m4 → m0.
//
// Cost (overlap, one port, half duplex, copy = 0; d = α + nβ, c = nγ): the length L(p) that
//   Algorithm 1 computes (Thm 4: optimal among all trees and receive orders), with
//   ceil(log2 p)·max(d, c) <= L <= ceil(log2 p)·(d + c) (Lemma 5, Prop. 6); the planner's L
//   equals the simulated makespan. With transfers=K: Algorithm 2's length (Thm 7: optimal
//   under the limit; planners/greedy_transfers.h), its fixed start times simulated exactly.
//   With reducers=K: Algorithm 3's length (Thm 9). Without overlap the tree is planned for
//   d' = 0, c' = d + c (the paper's no-overlap sub-case), a binomial-shaped tree of
//   ceil(log2 p)(α + nβ + nγ). Non-commutative operators: + α + nβ when no rank-order
//   labelling of the tree puts the sink at the root (the subset of the sink's subtrees must
//   sum to the root's rank).
// Restrictions: none. Machines are labelled with ranks in pre-order (receive order), so every
//   subtree is a contiguous rank range and non-commutative operators reduce in rank order.
//   transfers and reducers cannot both be set; greedy, if given, must be the algorithm they
//   call for; transfers=K needs a model with overlap (without it transfers take no time in
//   the paper's reduction and the limit means nothing: an error says so, no other tree runs).
// Reference: L.-C. Canon, G. Antoniu, "Scheduling Associative Reductions with Homogeneous
//   Costs when Overlapping Communications and Computations", INRIA RR-7898 (2012), with the
//   corrections of docs/math/reduction-overlap.md.

#include <array>
#include <span>
#include <string>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/planners/greedy_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

std::span<const ParamInfo> greedy_overlap_params() {
  static constexpr std::array<ParamInfo, 3> kParams{{
      {"transfers", "0",
       "at most this many transfers in progress at once (Algorithm 2, fixed start times); 0: no "
       "limit"},
      {"reducers", "0", "at most this many receiving machines (Algorithm 3); 0: no limit"},
      {"greedy", "auto",
       "which of Canon & Antoniu's algorithms builds the tree: 1 (no limit), 2 (transfers=K), 3 "
       "(reducers=K); auto: the one the limits call for, recorded"},
  }};
  return kParams;
}

std::optional<std::string> greedy_overlap_why_not(const CollectiveSpec& /*spec*/,
                                                  const Params& params) {
  const auto transfers = params.get_int("transfers");
  const auto reducers = params.get_int("reducers");
  if (transfers < 0 || reducers < 0) return "transfers and reducers must be >= 0";
  if (transfers > 0 && reducers > 0) return "limit either transfers or reducers, not both";
  return planners::greedy_param_mismatch(transfers, reducers, params.get("greedy"));
}

namespace {
planners::GreedyOverlapTree greedy_tree(const CollectiveSpec& spec, const Params& params,
                                        const CostModel& model) {
  return planners::plan_greedy_overlap(spec, model, params.get_int("transfers"),
                                       params.get_int("reducers"), params.get("greedy"));
}
}  // namespace

Schedule build_reduce_greedy_overlap(const CollectiveSpec& spec, const Params& params,
                                     const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/greedy_overlap");
  const Layout& layout = b.layout();
  const auto planned = greedy_tree(spec, params, model);
  planners::emit_greedy_reduce(b, planned.tree, input_of(layout, spec.root),
                               output_of(layout, spec.root), spec.root);
  b.set_params(planned.params);
  return std::move(b).finish();
}

// Estimate (exact): the planner's own predicted length (the tree is planned for the model: without
// overlap each edge costs α + nβ + nγ), plus the result's message to a root that a
// non-commutative operator keeps from the sink.
std::optional<Estimate> estimate_reduce_greedy_overlap(const CollectiveSpec& spec,
                                                       const Params& params,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto planned = greedy_tree(spec, params, model);
  const bool forward = planners::greedy_reduce_forwards(planned.tree, spec.root, spec.commutative);
  const double sends = spec.nranks - 1 + (forward ? 1 : 0);
  const Time own = spec.nranks == 1 ? c->copy_of(spec.count) : 0;  // the root alone copies
  return make_estimate(spec, own + planned.tree.length + (forward ? c->message(spec.count) : 0),
                       sends * spec.count, 2 * sends + spec.nranks, true, planned.params);
}

}  // namespace optcoll::algorithms
