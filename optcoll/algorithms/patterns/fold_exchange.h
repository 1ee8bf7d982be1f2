// SPDX-License-Identifier: Apache-2.0
// File: the fold exchange, the core of the reproducible reductions. The message is cut into
// p pieces; rank r collects the raw contribution of every rank to piece r (a pairwise
// exchange: in step k = 1..p-1 rank r sends its piece (r+k) mod p to rank (r+k) mod p and
// receives piece r of rank (r-k) mod p), then folds them left to right in rank order:
//   acc = x_0[r];  acc = acc ⊕ x_1[r];  ...;  acc = acc ⊕ x_{p-1}[r].
// Only raw contributions travel, so the association of every result element is that left
// fold whatever the exchange's order or timing. Each fold step waits only for its operand
// (the builder infers the dependencies), so folding overlaps the exchange where it can.
// Memory: rank r holds p-1 received pieces of |piece r| elements in scratch.
#pragma once

#include <functional>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::patterns {

// `contribution(j, q)`: the slice on rank j holding its contribution to piece q.
// `accumulator(r)`: the slice on rank r that receives the folded piece r (as many elements).
void emit_fold_exchange(ScheduleBuilder& b, const std::function<Slice(Rank, Rank)>& contribution,
                        const std::function<Slice(Rank)>& accumulator);

// Its time under the closed-form models (estimate.h) when rank r folds block[r]: the busier
// of a rank's p - 1 sends and its p - 1 receives with their reductions, then the copy of the
// first operand. Exact for equal blocks.
Time fold_exchange_time(const LinkCosts& costs, const std::vector<Count>& block);

}  // namespace optcoll::algorithms::patterns
