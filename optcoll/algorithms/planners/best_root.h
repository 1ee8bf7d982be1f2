// SPDX-License-Identifier: Apache-2.0
// File: the optional best-root hook of selection (`--root best`). Algorithms whose planner
// knows its best root (Träff's trees: the DPs choose it, the adaptive tree ends at it, the
// others search roots in O(p) each without building schedules) have an OPTCOLL_BEST_ROOT line
// in algorithms.def (AlgorithmInfo::best_root) and answer here, so that plan_best_root
// (optcoll/plan/select.cc) builds one schedule instead of p.
#pragma once

#include <optional>

#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

// The root `info` would pick for `spec` (spec.root ignored) under `model`, or std::nullopt if
// the algorithm has no hook or cannot answer for this model (pair matrices: only the optimal
// tree's planner prices them; for the others the caller searches every root). Without
// `allow_dp`, the hooks that run an O(p^3) dynamic program answer only up to
// planners::kDpInEstimate ranks (std::nullopt above): a search that only needs candidate
// roots cheaply.
std::optional<Rank> planned_best_root(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                      const Params& params, const CostModel& model,
                                      bool allow_dp = true);

}  // namespace optcoll::algorithms
