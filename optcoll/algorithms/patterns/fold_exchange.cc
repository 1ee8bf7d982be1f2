// SPDX-License-Identifier: Apache-2.0
// File: the fold exchange (fold_exchange.h).
#include "optcoll/algorithms/patterns/fold_exchange.h"

#include <algorithm>
#include <vector>

#include "optcoll/algorithms/patterns/ring.h"

namespace optcoll::algorithms::patterns {

void emit_fold_exchange(ScheduleBuilder& b, const std::function<Slice(Rank, Rank)>& contribution,
                        const std::function<Slice(Rank)>& accumulator) {
  const Rank p = b.nranks();
  // received[r]: p-1 slots of |piece r| on rank r, slot of rank j at index j (j < r) or j-1.
  std::vector<Slice> received(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    received[static_cast<std::size_t>(r)] = b.scratch(r, (p - 1) * accumulator(r).count);
  }
  auto slot = [&](Rank at, Rank from) {
    const Count piece = accumulator(at).count;
    const Slice& base = received[static_cast<std::size_t>(at)];
    return Slice{base.buf, base.offset + (from < at ? from : from - 1) * piece, piece};
  };
  for (Rank step = 1; step < p; ++step) {
    for (Rank r = 0; r < p; ++r) {
      const Rank to = ring_mod(std::int64_t{r} + step, p);
      b.transfer(r, to, contribution(r, to), slot(to, r));
    }
  }
  for (Rank r = 0; r < p; ++r) {
    auto operand = [&](Rank j) { return j == r ? contribution(r, r) : slot(r, j); };
    const Slice acc = accumulator(r);
    b.copy(r, operand(0), acc);
    for (Rank j = 1; j < p; ++j) b.reduce(r, operand(j), acc, Side::kRight);
  }
}

Time fold_exchange_time(const LinkCosts& c, const std::vector<Count>& block) {
  const auto p = static_cast<Rank>(block.size());
  Time all_sends = 0;
  for (const Count m : block) all_sends += c.message(m);
  Time busiest = 0;
  Count largest = 0;
  for (Rank r = 0; r < p; ++r) {
    const Count m = block[static_cast<std::size_t>(r)];
    const Time receives = static_cast<Time>(p - 1) * c.message_reduce(m);
    busiest = std::max({busiest, receives, all_sends - c.message(m)});
    largest = std::max(largest, m);
  }
  return busiest + c.copy_of(largest);
}

}  // namespace optcoll::algorithms::patterns
