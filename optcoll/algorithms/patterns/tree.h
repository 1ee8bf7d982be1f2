// SPDX-License-Identifier: Apache-2.0
// File: tree geometry (no schedules): binomial and flat trees as TreeShape, and the
// virtual-rank relabelling that puts any root at position 0.
#pragma once

#include <vector>

#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Which child a node talks to first. One-to-all trees (bcast, scatter) serve the largest
// subtree first; all-to-one trees (gather, reduce) take the smallest (earliest ready) first.
enum class ChildOrder : std::uint8_t { kLargestFirst, kSmallestFirst };

// Virtual rank of r when `root` is relabelled to 0: (r - root) mod p, and back.
inline Rank to_virtual(Rank r, Rank root, Rank p) { return (r - root + p) % p; }
inline Rank to_real(Rank v, Rank root, Rank p) { return (v + root) % p; }

// Binomial tree (MST) over virtual ranks v = (r - root) mod p:
//   parent(v) = v with its lowest set bit cleared; children(v) = v + 2^j for every 2^j below
//   v's lowest set bit (every 2^j for v = 0) with v + 2^j < p.
// Every subtree covers a contiguous range of virtual ranks [v, v + 2^j) ∩ [0, p).
//
//   p = 8, root 0 (children largest first):   0 ─┬─ 4 ─┬─ 6 ── 7
//                                                │     └─ 5
//                                                ├─ 2 ── 3
//                                                └─ 1
// Depth ceil(log2 p).
TreeShape binomial_tree(Rank nranks, Rank root, ChildOrder order);

// Flat tree (star): the root's children are every other rank in increasing rank order.
TreeShape flat_tree(Rank nranks, Rank root);

// Flat tree whose root meets its children largest block first (`blocks[r]`: rank r's block;
// ties in rank order). With k ports the root's messages, all ready at once, then form
// Graham's LPT list schedule.
TreeShape largest_first_flat_tree(const std::vector<Count>& blocks, Rank root);

// Flat tree whose root meets its children outward from itself: root-1, root-2, ..., 0, then
// root+1, ..., p-1. A reduction over it combines adjacent rank ranges only, so it keeps
// rank order for non-commutative operators.
TreeShape outward_flat_tree(Rank nranks, Rank root);

// Height of a tree (edges on the longest root-to-leaf path).
int tree_height(const TreeShape& tree);

}  // namespace optcoll::algorithms::patterns
