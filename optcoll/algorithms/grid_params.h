// SPDX-License-Identifier: Apache-2.0
// File: the parameters of the hybrid (grid) algorithms: dims ("auto" or "4x8": a
// factorization of p) and kinds ("auto" or one letter per dimension, l = long:
// scatter/allgather, s = short: MST), their why_not checks, and their resolution.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

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

}  // namespace optcoll::algorithms
