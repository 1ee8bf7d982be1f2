// SPDX-License-Identifier: Apache-2.0
// File: ring geometry.
#pragma once

#include "optcoll/model/types.h"

namespace optcoll::algorithms::patterns {

// x mod p in [0, p), for any (possibly negative) x.
inline Rank ring_mod(std::int64_t x, Rank p) {
  const auto m = static_cast<Rank>(x % p);
  return m < 0 ? m + p : m;
}
inline Rank ring_right(Rank r, Rank p) { return ring_mod(std::int64_t{r} + 1, p); }
inline Rank ring_left(Rank r, Rank p) { return ring_mod(std::int64_t{r} - 1, p); }

}  // namespace optcoll::algorithms::patterns
