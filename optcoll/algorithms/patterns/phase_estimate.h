// SPDX-License-Identifier: Apache-2.0
// File: the times of the group phases (group_phases.h, butterfly.h) on all p ranks under the
// closed-form models (estimate.h), without building them: what the estimates of the
// algorithms composed of them (scatter + allgather broadcasts, Rabenseifner, buckets,
// recursive doubling and halving) add up. Each phase is timed on its own from time 0, as if
// every rank entered it at once; a composition adds its phases' times (an estimate: ranks
// that finish a phase early start the next one early).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/params.h"

namespace optcoll::algorithms::patterns {

// Prefix sums of part sizes (p + 1 entries).
std::vector<Count> prefix_of(const std::vector<Count>& parts);
// Sizes of n elements cut into q nearly equal parts (even_parts).
std::vector<Count> even_sizes(Count n, Rank q);

// mst_scatter / mst_gather of `parts` over ranks 0..q-1 from / to `root`: every rank's
// sends (receives) one after the other in the phase's edge order. Exact for one phase alone.
Time mst_scatter_time(const std::vector<Count>& parts, Rank root, const LinkCosts& costs);
Time mst_gather_time(const std::vector<Count>& parts, Rank root, const LinkCosts& costs);

// ring_allgather / ring_reduce_scatter over q parts: q - 1 steps, each as long as the
// largest part's message (plus its reduction).
Time ring_allgather_time(Rank q, Count largest_part, const LinkCosts& costs);
Time ring_reduce_scatter_time(Rank q, Count largest_part, const LinkCosts& costs);

// doubling_allgather of `parts` (any q: fold, log2 q' exchange steps, unfold of the whole
// result): each step as long as its largest message.
Time doubling_allgather_time(const std::vector<Count>& parts, const LinkCosts& costs);

// What the messages of the recursive halving machinery (butterfly.h) cost: under one level
// the same for every pair; under two levels (TwoLevelCosts) a message within a node the
// intra costs, one between nodes the inter costs times the turns it takes on its NIC: the
// messages that leave its node in the same step (every player sends to its partner at
// once), over the node's channels. A node's incoming messages of an exchange step are as
// many (the partners are mutual), so their channels give no other turns. Ranks that finish
// a step early do not start the next before the others' turns: a step is priced as if the
// node's messages went together (tests/sim/level_formula_test.cc: within 5% of the
// simulator where nodes and their ranks are powers of two, 0.7-1.4x elsewhere).
class ButterflyCosts {
 public:
  // A message of m elements from one rank to another (real ranks), sent with the step's others.
  struct Send {
    Rank from = 0;
    Rank to = 0;
    Count m = 0;
  };
  explicit ButterflyCosts(const LinkCosts& costs);
  explicit ButterflyCosts(const TwoLevelCosts& levels);
  // Each of a step's messages' time: within a node the intra costs; between nodes the inter
  // costs times its turns on its node's NIC (the step's nonempty messages that leave that
  // node, over its channels; the same for every such message of the node).
  std::vector<Time> times(const std::vector<Send>& sends) const;
  Time slowest(const std::vector<Send>& sends) const;
  const LinkCosts& intra() const { return intra_; }

 private:
  LinkCosts intra_;
  LinkCosts inter_;
  std::optional<TwoLevelCosts> levels_;
};

// The butterfly's costs under `model`: one level where the closed forms describe it, two
// where a placement is all it adds (two_level_costs); std::nullopt otherwise.
std::optional<ButterflyCosts> butterfly_costs(const CollectiveSpec& spec, const CostModel& model);

// The recursive halving machinery on q ranks whose q' = 2^floor(log2 q)
// players hold the slots `slots` (sizes, q' entries) of n elements. Each exchange starts when
// both partners have finished their previous step and lasts as long as the longer of their
// two messages, plus the reduction of what arrived (no overlap); ranks move at their own pace.
// fold_reduce (the q - q' extra ranks hand their whole vectors over, from `start`) and
// halving_reduce_scatter: when each player (by virtual rank) is done.
std::vector<Time> halving_reduce_scatter_clock(Rank q, const std::vector<Count>& slots, Count n,
                                               const ButterflyCosts& costs, Time start);
// Then halving_allgather (every player's finish, the latest) or halving_gather towards
// virtual rank `target` (its finish), without the unfold (slots: q' entries).
Time halving_allgather_finish(Rank q, std::vector<Time> clock, const std::vector<Count>& slots,
                              const ButterflyCosts& costs);
Time halving_gather_finish(Rank q, std::vector<Time> clock, const std::vector<Count>& slots,
                           Rank target, const ButterflyCosts& costs);
// The recursive doubling exchange on q ranks (butterfly.h): the fold (index 2i hands its m
// elements to 2i+1, which combines them where `combine`), floor(log2 q) steps in which every
// player exchanges m elements with its partner at distance 2^k (and combines what arrived
// where `combine`), then the unfold (2i+1 hands the m-element result to 2i): when the last
// rank is done, from 0. Ranks move at their own pace, as in halving_reduce_scatter_clock.
Time doubling_exchange_finish(Rank q, Count m, const ButterflyCosts& costs, bool combine);
// The fold's slowest message (index 2i hands m elements to 2i+1, i < rem of Fold(q)) and the
// unfold's (2i+1 to 2i): 0 where q is a power of two.
Time fold_message(const ButterflyCosts& costs, Rank q, Count m);
Time unfold_message(const ButterflyCosts& costs, Rank q, Count m);
// The bucket allreduce on one ring of p ranks (ring_snake, dimension_wise and
// multicolor_bucket where the closed-form models have no topology): the copy of the input,
// then p - 1 reduce-scatter and p - 1 allgather steps of the largest piece, each of `pieces`
// messages: n·copy + 2(p-1)(pieces·α + ceil(n/p)β) + (p-1)ceil(n/p)γ; exact for one piece
// when p divides n. `params` is the parameter text the builder writes.
Estimate ring_allreduce_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                                 std::int64_t pieces, std::string params);
// dimension_wise's and multicolor_bucket's where the model has no topology (then both are
// one bucket ring in rank order): the bound, a piece of at least one element making
// 2(p - 1) hops (none on a torus), and ring_allreduce_estimate with the `pieces` parameter
// (none for a torus, or for directions other than auto and 1).
std::optional<Time> bucket_ring_allreduce_bound(const CollectiveSpec& spec, const CostModel& model);
std::optional<Estimate> bucket_ring_allreduce_estimate(const CollectiveSpec& spec,
                                                       const Params& params,
                                                       const CostModel& model);

// Elements the halving reduce-scatter (and as many the halving allgather) moves on q' ranks.
double halving_elements(Rank q, Count n);

}  // namespace optcoll::algorithms::patterns
