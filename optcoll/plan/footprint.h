// SPDX-License-Identifier: Apache-2.0
// File: how large a schedule will be, known before it is built: the algorithm is built at a
// few small rank counts (the same per-rank problem) and its op count extrapolated. Callers
// that must not run out of memory (the CLI's plan, simulate and run) refuse a schedule whose
// estimate is beyond their limit instead of building it for minutes and dying of it.
#pragma once

#include <optional>
#include <string>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll {

struct OpEstimate {
  double ops = 0;      // the schedule's ops at spec.nranks (extrapolated)
  std::string growth;  // the fitted law, "p^1.0" or "p^1.0 log2 p"
};

// The rank counts the estimate builds at; from above the largest, it extrapolates.
inline constexpr Rank kFootprintSampleRanks[] = {32, 64, 128};

// `info`'s op count for `spec` (params and model as for algorithms::build): exact when
// spec.nranks <= 128 (built), else fitted to c·p^a or c·p^a·log2 p through the counts at the
// sample ranks (whichever law matches the smallest sample better) and extrapolated.
// nullopt when the algorithm cannot be built at the sample ranks (its parameters, or a
// model with a topology or per-pair matrices, fix the rank count) or does not apply.
std::optional<OpEstimate> estimate_ops(const algorithms::AlgorithmInfo& info,
                                       const CollectiveSpec& spec, const algorithms::Params& params,
                                       const CostModel& model);

// `spec` for `p` ranks with the same per-rank problem: the same count (a message or a
// block), per-rank counts sampled evenly from spec's (alltoallv: rows and columns), the
// root kept below p.
CollectiveSpec scaled_spec(const CollectiveSpec& spec, Rank p);

}  // namespace optcoll
