// SPDX-License-Identifier: Apache-2.0
// File: the times of the group phases (group_phases.h, butterfly.h) on all p ranks under the
// closed-form models (estimate.h), without building them: what the estimates of the
// algorithms composed of them (scatter + allgather broadcasts, Rabenseifner, buckets,
// recursive doubling and halving) add up. Each phase is timed on its own from time 0, as if
// every rank entered it at once; a composition adds its phases' times (an estimate: ranks
// that finish a phase early start the next one early).
#pragma once

#include <optional>
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

// The recursive halving machinery (butterfly.h) on q ranks whose q' = 2^floor(log2 q)
// players hold the slots `slots` (sizes, q' entries) of n elements. Each exchange starts when
// both partners have finished their previous step and lasts as long as the longer of their
// two messages, plus the reduction of what arrived (no overlap); ranks move at their own pace.
// fold_reduce (the q - q' extra ranks hand their whole vectors over, from `start`) and
// halving_reduce_scatter: when each player (by virtual rank) is done.
std::vector<Time> halving_reduce_scatter_clock(Rank q, const std::vector<Count>& slots, Count n,
                                               const LinkCosts& costs, Time start);
// Then halving_allgather (every player's finish, the latest) or halving_gather towards
// virtual rank `target` (its finish), without the unfold.
Time halving_allgather_finish(std::vector<Time> clock, const std::vector<Count>& slots,
                              const LinkCosts& costs);
Time halving_gather_finish(std::vector<Time> clock, const std::vector<Count>& slots, Rank target,
                           const LinkCosts& costs);
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
