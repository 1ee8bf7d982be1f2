// SPDX-License-Identifier: Apache-2.0
// File: turns any TreeShape into broadcast, reduce, scatter(v) or gather(v) steps on a
// ScheduleBuilder. Registry algorithms (binomial, linear, compositions) and planners share
// it, so a tree's schedule is written once.
//
// Scatter and gather keep each subtree's blocks contiguous in a per-node scratch area,
// ordered by `positions` (a permutation of 0..p-1): every subtree's ranks must occupy a
// contiguous run of positions. Binomial trees use virtual ranks (r - root) mod p; trees
// over rank ranges use the ranks themselves. Where a child's subtree is not one run of
// consecutive real ranks (the wrap-around at rank p-1 of a relabelled tree), the root sends
// or receives it as one message per run.
#pragma once

#include <vector>

#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// positions[r] = (r - root) mod p.
std::vector<Rank> virtual_positions(Rank nranks, Rank root);
// positions[r] = r.
std::vector<Rank> rank_positions(Rank nranks);

// Throws InternalError unless `tree` spans all p ranks exactly once from tree.root.
void check_tree(const TreeShape& tree, Rank nranks);

// One-to-all: the root holds `data` beforehand; afterwards every rank holds it at the same
// slice. Each edge carries it in `segments` pieces (pipelining; 1 = whole message).
void emit_tree_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data, int segments = 1);

// All-to-one: combines `contribution` (the same slice on every rank) up the tree into
// `result` on the root. Inner ranks accumulate in scratch; each child's partial is
// received with RecvReduce on the side its ranks lie (so rank order is kept whenever every
// subtree spans a contiguous rank range and children are met outward in rank order).
void emit_tree_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution, Slice result,
                      int segments = 1);

// Gather of each rank's input block (input[0, block(r))) to `root_dest` (layout.total()
// elements in rank order on the root; block r at displ(r)).
void emit_tree_gather(ScheduleBuilder& b, const TreeShape& tree, const std::vector<Rank>& positions,
                      Slice root_dest);

// Scatter of `root_source` (layout.total() elements in rank order on the root) so that
// every rank r ends with its block in output[0, block(r)).
void emit_tree_scatter(ScheduleBuilder& b, const TreeShape& tree,
                       const std::vector<Rank>& positions, Slice root_source);

// Träff's ordered trees (optcoll/algorithms/planners/gather_trees.h): every subtree spans a
// contiguous rank range, and each node works through its items in the order the model fixes:
// its children in tree order with its local copy after the first copy_slot[v] of them (the
// root always copies; other leaves send their input as it is). Each node's items are chained
// by explicit dependencies, so the simulated time is Träff's Definition 2 exactly (one port,
// no overlap, either duplex). Scatter runs each node's items in reverse order.
void emit_ordered_gather(ScheduleBuilder& b, const TreeShape& tree,
                         const std::vector<int>& copy_slot, Slice root_dest);
void emit_ordered_scatter(ScheduleBuilder& b, const TreeShape& tree,
                          const std::vector<int>& copy_slot, Slice root_source);

// The same over a permutation (non-ordered trees such as gatherv/two_block's): every subtree
// must be a contiguous run of `positions`, and inner nodes hold their subtree in position
// order; items are chained in the model's order as above. At the root, a child whose non-empty
// blocks are, in position order, consecutive in the root's buffer (rank order) is received
// (scatter: sent) in place. Any other child is received into root scratch in ONE message and
// its blocks are then copied into place, one Copy per run of consecutive ranks, right after
// the receive (scatter: copied out first, then sent): copy·|T_c| more for the root.
// child_in_place() says which case applies.
void emit_positioned_gather(ScheduleBuilder& b, const TreeShape& tree,
                            const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                            Slice root_dest);
void emit_positioned_scatter(ScheduleBuilder& b, const TreeShape& tree,
                             const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                             Slice root_source);

// index[r]: r's place among the ranks with a non-empty block (rank order), or -1.
std::vector<Rank> nonempty_index(const std::vector<bool>& nonempty);
// True if the members of a subtree, listed in position order, have their non-empty blocks at
// consecutive places of the rank-ordered buffer (no other non-empty block between them, and
// in rank order): then the subtree's segment is one slice of the root's buffer.
bool lands_in_place(const std::vector<Rank>& members_by_position, const std::vector<Rank>& index);

// Broadcast and reduction over an ordered tree (Träff's Theorem 4 trees): each node's
// operations are chained in the tree's child order, so the simulated time is the tree's
// completion time exactly. Bcast: a node sends `data` to its children in order, after its
// own receive. Reduce: a leaf sends its contribution; an inner node receives its first
// child's partial into its accumulator with a plain receive, reduces its own contribution
// into it (on the correct side), then receive-reduces the other children in order, each on
// the side its ranks lie (no local copy: every edge costs alpha + beta·n + gamma·n). Rank
// order is kept for non-commutative operators whenever every subtree is a consecutive rank
// range and each child's range is adjacent to what its parent has combined so far. The root
// alone (p = 1) copies its contribution.
void emit_ordered_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data);
void emit_ordered_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                         Slice result);

}  // namespace optcoll::algorithms::patterns
