// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's Algorithm 2: a reduction tree *and fixed transfer start times* for n
// machines when at most K transfers may be in progress at any instant (the report's §6.1, a
// network whose aggregate bandwidth is limited), in the overlap model of greedy_reduction.h
// (d per transfer, c per reduction, one port, receiving overlaps reducing).
//
// How: Algorithm 1 in reversed time, with each new (reversed) transfer i starting no earlier
//   than the end of transfer i − K; t[i] is the reversed end of i's transfer. Indices are
//   0-based (machine 0 is the sink), argmin ties go to the lowest index:
//     s[0] ← 0
//     for i ← 1 .. n−1:
//       M ← argmin_{j < i} s[j];  parent[i] ← M
//       t[i] ← max(s[M] + c, t[i − K] (0 if i − K < 1)) + d
//       s[i] ← t[i];  s[M] ← max(s[M] + c, t[i] − c)
//     L ← t[n−1];  machine i starts its send at L − t[i]
//   The report's last loop writes t_n − t_i + c: the "+ c" is wrong (every send c late,
//   makespan L + c; docs/math/reduction-overlap.md §2). Children are received in decreasing
//   index, which is increasing start time.
//
// Example: n = 5, d = 1, c = 2, K = 1 gives L = 7: m4 → m0 [0,1], m3 → m1 [1,2], m2 → m0
//   [2,3], m1 → m0 [4,5]; m0 reduces [1,3] [3,5] [5,7], m1 [2,4]. One transfer at a time.
//   Sending as soon as possible instead would run m4 → m0 and m3 → m1 both at [0,1], which is
//   why the start times are part of the answer: an emitted schedule carries them as release
//   times (Op::not_before), and then simulates to exactly L. (Algorithm 3 with K = 1 reducer,
//   what transfers=K ran before, needs d + 3·max(d, c) + c = 9.)
//
// Cost: Θ(n log n) (a heap for the argmin). The length L is t[n−1]; t never decreases
//   (checked). Bounds: Lemma 5's ceil(log2 n)·max(d, c) from below, and the corrected bound
//   (a + ceil((n − 2^a)/K))(d + c), a = floor(log2 K) + 1, from above (the report's Prop. 8
//   is false; limited_upper_bound in greedy_reduction.h).
//
// Restrictions: K >= 1 (K >= floor(n/2) limits nothing, since one port per machine lets at
//   most floor(n/2) transfers run at once: that is Algorithm 1). The model must overlap
//   reduction with communication: without overlap the report's reduction to d' = 0,
//   c' = d + c makes transfers instantaneous, and a transfer limit then means nothing, so
//   reduce/greedy_overlap refuses transfers=K there. The start times are model times: under
//   another model than the one planned for they are only lower bounds. Optimality (Thm 7) is
//   the report's claim; tests/algorithms/greedy_transfers_test.cc checks it against an
//   exhaustive search for n <= 8.
//
// Reference: L.-C. Canon, G. Antoniu, "Scheduling Associative Reductions with Homogeneous
//   Costs when Overlapping Communications and Computations", INRIA RR-7898 (2012), §6.1,
//   Algorithm 2 and Theorem 7, with the corrections of docs/math/reduction-overlap.md.
#pragma once

#include <cstdint>

#include "optcoll/algorithms/planners/greedy_reduction.h"

namespace optcoll::algorithms::planners {

// Algorithm 2 for n machines and at most `transfers` (K >= 1) transfers at once: the tree,
// tree.send_start[i] (the forward start of machine i's send; 0 for the sink) and tree.length
// (L, the makespan of that fixed-time schedule).
ReductionTree greedy_transfers(std::int64_t n, const ReductionCosts& costs, std::int64_t transfers);

}  // namespace optcoll::algorithms::planners
