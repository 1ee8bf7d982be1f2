// SPDX-License-Identifier: Apache-2.0
// File: hybrid (multi-dimensional) compositions of group phases over a Grid (grid.h), after
// Chan, Heimlich, Purkayastha, van de Geijn: a collective is performed dimension by
// dimension on the lines of a logical grid; "long" dimensions split the data (scatter /
// reduce-scatter going in, allgather / gather coming out) so later dimensions work on less,
// "short" dimensions move the whole current range (MST broadcast / reduce).
//
// `kinds` has one letter per dimension: 'l' (long) or 's' (short). Ranges: a rank at depth i
// works on R_i, the message split evenly along every long dimension j < i (piece = its
// coordinate j). `bases[r]` is rank r's working slice (the whole message).
#pragma once

#include <string>
#include <vector>

#include "optcoll/algorithms/patterns/grid.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms::patterns {

// Broadcast from `root`: down dimensions 0..k-1 (long: MST scatter of R_i, short: MST
// broadcast of R_i) on the lines through the ranks that hold data, then up k-1..0 (long:
// ring allgather of R_i on every line).
void hybrid_bcast(ScheduleBuilder& b, const Grid& grid, const std::string& kinds,
                  const std::vector<Slice>& bases, Rank root);
// The time reverse: up 0..k-1 (long: ring reduce-scatter of R_i on every line), then down
// k-1..0 (long: MST gather, short: MST reduce) towards `root`. Needs a commutative operator
// when any dimension is long (the ring), or the dimensions are not visited innermost first.
void hybrid_reduce(ScheduleBuilder& b, const Grid& grid, const std::string& kinds,
                   const std::vector<Slice>& bases, Rank root);

// Blocks in rank order (`sizes[r]` elements of rank r, consecutive in every base). The chunk
// of rank r at dimension i is the run of ranks sharing its coordinates 0..i.
// Allgather: ring allgather of chunks on every line, dimensions k-1 (innermost) .. 0.
void hybrid_allgather(ScheduleBuilder& b, const Grid& grid, const std::vector<Slice>& bases,
                      const std::vector<Count>& sizes);
// Reduce-scatter (in place, commutative): ring reduce-scatter of chunks on every line,
// dimensions 0 .. k-1; afterwards rank r's block in its base is reduced.
void hybrid_reduce_scatter(ScheduleBuilder& b, const Grid& grid, const std::vector<Slice>& bases,
                           const std::vector<Count>& sizes);

// Predicted time under `model` for a message of n units (model.units: elements or bytes)
// (alpha, beta, gamma; full duplex, one port, copy = 0, every
// factor a power of two dividing n), as in Chan et al.; used to resolve dims/kinds = auto.
// bcast: long dimension d on s elements: ceil(log2 d)α + (d-1)/d·sβ down, (d-1)(α + s/d·β)
// up; short: ceil(log2 d)(α + sβ). reduce (`reduce` set) adds (d-1)/d·sγ per long and sγ·
// ceil(log2 d) per short dimension.
Time hybrid_tree_cost(const std::vector<Rank>& dims, const std::string& kinds, double n,
                      bool reduce, const CostModel& model);
// Ring in every dimension: Σ(d_i - 1)α + (p-1)/p·nβ (+ (p-1)/p·nγ when reducing).
Time hybrid_ring_cost(const std::vector<Rank>& dims, double n, bool reduce, const CostModel& model);

// The grid with the least hybrid_tree_cost; ties go to the first candidate (fewer
// dimensions, then lexicographic dims, then kinds with 'l' first). Empty `dims` / `kinds`:
// free (at most 8 dimensions); otherwise fixed. A fixed kinds with no fixed dims allows the
// factorizations with exactly kinds.size() factors, 1 included (p prime: "p x 1").
struct GridChoice {
  std::vector<Rank> dims;
  std::string kinds;
};
GridChoice best_tree_grid(Rank p, double n, bool reduce, const CostModel& model,
                          const std::vector<Rank>& dims, const std::string& kinds);
// The dims with the least hybrid_ring_cost (the finest factorization, at most 8 factors).
std::vector<Rank> best_ring_grid(Rank p, double n, bool reduce, const CostModel& model);

}  // namespace optcoll::algorithms::patterns
