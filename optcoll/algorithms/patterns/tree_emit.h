// SPDX-License-Identifier: Apache-2.0
// File: what every tree emitter (the tree_*_*.h files beside this one) takes and checks: a
// TreeShape that spans all ranks, and the `positions` that say in which order a subtree's
// blocks lie in scratch. Which emitter to use when: docs/design.md, "Builders and planners".
//
// Scatter and gather keep each subtree's blocks contiguous in a per-node scratch area,
// ordered by `positions` (a permutation of 0..p-1): every subtree's ranks must occupy a
// contiguous run of positions. Binomial trees use virtual ranks (r - root) mod p; trees
// over rank ranges use the ranks themselves.
//
//   p = 4, root 2: virtual_positions(4, 2) = {2, 3, 0, 1} (rank 2 first, rank 1 last);
//                  rank_positions(4)       = {0, 1, 2, 3}.
#pragma once

#include <vector>

#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// positions[r] = (r - root) mod p.
std::vector<Rank> virtual_positions(Rank nranks, Rank root);
// positions[r] = r.
std::vector<Rank> rank_positions(Rank nranks);

// Throws InternalError unless `tree` spans all p ranks exactly once from tree.root.
void check_tree(const TreeShape& tree, Rank nranks);

}  // namespace optcoll::algorithms::patterns
