// SPDX-License-Identifier: Apache-2.0
// File: the parameters of the hybrid (grid) algorithms: dims ("auto" or "4x8": a
// factorization of p) and kinds ("auto" or one letter per dimension, l = long:
// scatter/allgather, s = short: MST), their why_not checks, and their resolution.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/params.h"
#include "optcoll/algorithms/patterns/hybrid.h"
#include "optcoll/model/collective.h"

namespace optcoll::algorithms {

std::span<const ParamInfo> grid_dims_params();     // dims
std::span<const ParamInfo> grid_tree_params();     // dims, kinds
std::span<const ParamInfo> grid_dims_2d_params();  // dims (two factors)

std::optional<std::string> grid_dims_ok(const CollectiveSpec& spec, const Params& params);
std::optional<std::string> grid_dims_ok_commutative(const CollectiveSpec& spec,
                                                    const Params& params);
std::optional<std::string> grid_tree_ok(const CollectiveSpec& spec, const Params& params);
std::optional<std::string> grid_tree_ok_commutative(const CollectiveSpec& spec,
                                                    const Params& params);
std::optional<std::string> grid_dims_2d_ok(const CollectiveSpec& spec, const Params& params);

// dims (and kinds) for a tree-shaped hybrid (bcast, reduce): explicit values as given,
// "auto" resolved with patterns::best_tree_grid. `kinds_fixed`: the 2-D options' pattern.
patterns::GridChoice resolve_tree_grid(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model, bool reduce,
                                       const std::string& kinds_fixed = {});
// dims for a ring hybrid (allgather, reduce_scatter, allreduce).
std::vector<Rank> resolve_ring_grid(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model, Count n, bool reduce);

// Estimates (estimate.h) of the hybrids over a resolved grid. Tree-shaped (bcast, or reduce
// with `reduce`): per long dimension of d on s elements the MST scatter (gather) of d pieces
// and d - 1 ring steps of the largest, per short one ceil(log2 d) whole-range messages,
// phases added up; a reduction first copies its contribution. Ring-shaped: per dimension
// d - 1 ring steps of the largest chunk (the runs of blocks of the ranks sharing the
// coordinates up to it), plus `copy_elements` of local copies per rank.
Estimate tree_grid_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                            const patterns::GridChoice& choice, bool reduce, std::string params);
Estimate ring_grid_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                            const std::vector<Rank>& dims, const std::vector<Count>& sizes,
                            bool reduce, Count copy_elements);

}  // namespace optcoll::algorithms
