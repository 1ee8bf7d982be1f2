// SPDX-License-Identifier: Apache-2.0
// File: the step schedule of the two-tree algorithms (Sanders, Speck, Träff, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 35(12),
// 2009) over patterns::double_binary_trees, and its emitters for broadcast and reduction.
//
// Colouring. Every edge of the two trees (parent → child) gets a colour 0 or 1 so that the
// (at most two) edges into a rank differ and the (at most two) edges out of a rank differ.
// The edges form a bipartite graph between "sending sides" and "receiving sides" of the
// ranks with every degree <= 2: a union of paths and even cycles, coloured alternately.
//
// Steps. Segment s goes down tree `first` if s is even, the other tree if s is odd. Step t
// uses colour (t + shift) mod 2; an edge of colour c carries its tree's segments in order,
// each in the first step of its colour after the sender holds the segment and after the
// edge's previous segment. So in every step a rank sends at most once and receives at most
// once (its edges of that step's colour), and in steady state exactly once each.
//
//   p = 7, root 0, edge colours as superscripts; step 0 has colour 1, step 1 colour 0, ...
//     tree 1: 0 →¹ 4 → {2 → {1, 3}, 6 →¹ 5}   (4 →¹ 2, 4 →⁰ 6, 2 →⁰ 1, 2 →¹ 3)
//     tree 2: 0 →⁰ 3 → {5 → {6, 4}, 1 →⁰ 2}   (3 →⁰ 5, 3 →¹ 1, 5 →¹ 6, 5 →⁰ 4)
//   S = 4 (segments 0, 2 down tree 1; 1, 3 down tree 2), D(7) = 5, 8 steps:
//     0: 0→4 s0 | 1: 0→3 s1, 4→6 s0 | 2: 0→4 s2, 3→1 s1, 4→2 s0, 6→5 s0
//     3: 0→3 s3, 1→2 s1, 2→1 s0, 3→5 s1, 4→6 s2 | 4: 2→3 s0, 3→1 s3, 4→2 s2, 5→6 s1, 6→5 s2
//     5: 1→2 s3, 2→1 s2, 3→5 s3, 5→4 s1 | 6: 2→3 s2, 5→6 s3 | 7: 5→4 s3
//   (2 receives s0 in step 2 and forwards it to 1 in step 3, colour 0, and to 3 in step 4,
//   colour 1; from step 3 on 2 also receives s1 from 1 and s2 from 4 in alternate steps.)
//
// The number of steps is S − 1 + D(p), D(p) = the steps of one segment (two_tree_depth),  with
// whichever first tree gives fewer steps (the two trees' depths differ by at most one).
// D(p) = 2·floor(log2(p−1)) + [p−1 ≡ 2 (mod 4) or p−1 = 2^k − 1] for p ≥ 4 (checked by
// tests/algorithms/two_tree_test.cc up to p = 1200); D = 0, 1, 2 for p = 1, 2, 3, where p = 3
// uses the chain root → root+1 → root+2 as both trees (its double binary trees give D = 3).
//
// Emitters. Every op of a rank in step t waits for the rank's ops of its previous step
// (explicit dependencies), so a port never serves two transfers at once, nothing overtakes,
// and in the reduction a rank's reduction of step t runs after both its transfers of step t.
// No op then waits for a busy port or processor: the simulated time is the longest path of
// the dependencies, which tests/sim/double_tree_cost_test.cc and closed_form_test.cc find to
// be (D − 1)(α + ceil(n/S)·c) + Sα + n·c (c = β, or β + γ for the reduction), with the
// larger segments sent last (bcast) or first (reduce): the root's S messages plus D − 1 steps
// of the largest segment.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Colour (0 or 1) of each tree's edges: colours[t][v] is the colour of the edge into rank v
// in tree t (unused for the root). Adjacent edges (same sender or same receiver) differ.
using TwoTreeColours = std::array<std::vector<std::uint8_t>, 2>;
TwoTreeColours two_tree_colouring(const std::array<TreeShape, 2>& trees);

// One transfer of the broadcast direction: segment `segment` from `from` to `to` (its
// child in tree `tree`) in step `step`.
struct TwoTreeTransfer {
  std::int64_t step = 0;
  Rank from = kNoRank;
  Rank to = kNoRank;
  int tree = 0;
  Count segment = 0;
};

struct TwoTreeSchedule {
  std::array<TreeShape, 2> trees;
  TwoTreeColours colours;
  int first = 0;                           // the tree of the even segments
  Count segments = 0;                      // S
  std::int64_t steps = 0;                  // S − 1 + two_tree_depth(p) for p >= 2 (0 for p = 1)
  std::vector<TwoTreeTransfer> transfers;  // by step, then sender
};

// The broadcast step schedule of S >= 1 segments from `root` over double_binary_trees; of
// the two choices of `first` the one with fewer steps (ties: tree 1).
TwoTreeSchedule two_tree_schedule(Rank nranks, Rank root, Count segments);

// D(p): the steps of one segment (the deepest rank of the shallower tree, counting the
// colour waits); two_tree_schedule(p, root, S).steps = S − 1 + D(p) for p >= 2.
std::int64_t two_tree_depth(Rank nranks);
// The same from the closed form above, in O(log p) rather than a schedule's O(p) (the
// estimates' use; tests/algorithms/two_tree_test.cc checks both agree).
std::int64_t two_tree_depth_formula(Rank nranks);

// Elements [offset, offset + count) of segment s when `count` elements are cut into S
// segments of floor(count/S) elements, the last count mod S of them one larger.
struct SegmentBounds {
  Count offset = 0;
  Count count = 0;
};
SegmentBounds larger_last_segment(Count count, Count segments, Count s);

// One-to-all: the root holds `data`; afterwards every rank holds it at the same slice. The
// root's first send waits for its op `root_after` (kNoOp: none).
void emit_two_tree_bcast(ScheduleBuilder& b, const TwoTreeSchedule& plan, Slice data,
                         OpId root_after = kNoOp);

// All-to-one, the broadcast schedule reversed in time (step t becomes steps − 1 − t, every
// edge carries its segment child → parent): combines `contribution` into `result` on the
// root. Ranks inner in a tree accumulate in scratch (a copy of their contribution made before
// any segment). Children are combined on the side their ranks lie, so rank order is kept
// whenever every subtree of both trees is a contiguous rank range (root 0, p odd).
// Returns the root's last op (its last reduction; for p = 1 its copy; kNoOp if none).
OpId emit_two_tree_reduce(ScheduleBuilder& b, const TwoTreeSchedule& plan, Slice contribution,
                          Slice result);

}  // namespace optcoll::algorithms::patterns
