// SPDX-License-Identifier: Apache-2.0
// File: tree geometry for the tree algorithm families (no schedules): complete binary trees
// in heap order, in-order (rank-contiguous) binary trees, k-nomial trees and chains, as
// TreeShape for patterns::emit_tree_bcast / emit_tree_reduce.
//
// Two kinds of labelling:
//   * virtual: the tree is built over v = (r - root) mod p and relabelled, so any root is
//     virtual 0 (heap_binary_tree, knomial_tree, virtual_chain). Subtrees are contiguous
//     ranges of *virtual* ranks only, so a reduction over them needs a commutative operator
//     unless root = 0 (knomial_tree, virtual_chain) .
//   * rank order: every subtree is a contiguous range of real ranks and children are listed
//     outward from their parent (left neighbour range first), so emit_tree_reduce combines
//     in rank order (inorder_binary_tree, split_chain). Any root.
#pragma once

#include <array>
#include <cstdint>

#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Complete binary tree in heap order over virtual ranks: children of v are 2v+1 and 2v+2
// (< p). kLargestFirst lists 2v+1 first (its subtree is never smaller), kSmallestFirst 2v+2.
//
//   p = 7, root 0:   0 ─┬─ 1 ─┬─ 3      Height floor(log2 p).
//                       │     └─ 4
//                       └─ 2 ─┬─ 5
//                             └─ 6
TreeShape heap_binary_tree(Rank nranks, Rank root, ChildOrder order);

// In-order binary tree with the given root: the root's children are the middles of
// [0, root) and (root, p), listed in that order; a node that is the middle m of [lo, hi]
// has the middles of [lo, m) and (m, hi] as children. Every subtree is a contiguous rank
// range; the left child's range lies below the node, the right child's above it.
//
//   p = 7, root 3:   3 ─┬─ 1 ─┬─ 0      p = 4, root 0:  0 ── 2 ─┬─ 1
//                       │     └─ 2                              └─ 3
//                       └─ 5 ─┬─ 4
//                             └─ 6
// Height: 1 + the larger of the two sides' heights ceil(log2(size + 1)) - 1.
TreeShape inorder_binary_tree(Rank nranks, Rank root);

// k-nomial tree (radix k >= 2) over virtual ranks: parent(v) = v with its lowest non-zero
// base-k digit cleared; children of v are v + j·k^i for every digit position i below v's
// lowest non-zero digit (every i for v = 0) and j = 1..k-1, with v + j·k^i < p. The
// subtree of v + j·k^i is the virtual range [v + j·k^i, v + (j+1)·k^i) ∩ [0, p).
// kLargestFirst: i descending (then j ascending); kSmallestFirst: i ascending, j ascending
// (so with root 0 children come in increasing rank order). k = 2 is the binomial tree.
TreeShape knomial_tree(Rank nranks, Rank root, Rank radix, ChildOrder order);

// Chain over virtual ranks: root → root+1 → ... → root+p-1 (mod p).
TreeShape virtual_chain(Rank nranks, Rank root);

// Two chains into the root: root-1 → ... → 0 and root+1 → ... → p-1 (the root's children
// are root-1 then root+1). Rank order: every subtree is a contiguous range.
TreeShape split_chain(Rank nranks, Rank root);

// Two binary trees for the double-tree broadcast (Sanders, Speck, Träff 2009), both rooted
// at `root`, whose only child is each tree's top. The other q = p − 1 ranks take positions
// x = 1..q (rank (root + x) mod p). Tree 1 is the in-order tree of the positions: x with
// lowest set bit h > 1 has children x − h/2 and x + s for the largest s in {h/2, h/4, ..., 1}
// with x + s <= q (if any); odd positions are leaves, even positions inner nodes, the top
// is the largest power of two <= q. Tree 2 is tree 1 over relabelled positions: mirrored
// (x -> q + 1 − x) for even q, so that every non-root rank is a leaf in exactly one tree;
// shifted (x -> x mod q + 1) for odd q, where position 1 is a leaf in both.
//
//   p = 7 (q = 6), root 0, positions = ranks:
//     tree 1: 0 ── 4 ─┬─ 2 ─┬─ 1        tree 2: 0 ── 3 ─┬─ 5 ─┬─ 6
//                     │     └─ 3                        │     └─ 4
//                     └─ 6 ── 5                         └─ 1 ── 2
// patterns/two_tree.h colours their edges and schedules them in steps.
std::array<TreeShape, 2> double_binary_trees(Rank nranks, Rank root);

// One-port slot counts of an unpipelined tree (a slot = one message of the whole data):
//   bcast:  max over ranks of the sum, along the path from the root, of each edge's 1-based
//           position in its parent's child list (a parent sends to its children in order);
//   reduce: fold over the children in order, t = max(t, slots(child)) + 1 (leaves: 0).
std::int64_t bcast_slots(const TreeShape& tree);
std::int64_t reduce_slots(const TreeShape& tree);
// Largest number of children of any rank.
std::int64_t max_fanout(const TreeShape& tree);

}  // namespace optcoll::algorithms::patterns
