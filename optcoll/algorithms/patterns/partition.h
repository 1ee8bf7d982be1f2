// SPDX-License-Identifier: Apache-2.0
// File: splitting a message of n elements into p nearly equal pieces (the first n mod p
// pieces one element larger), as ring and recursive algorithms on whole messages need.
#pragma once

#include <algorithm>

#include "optcoll/model/types.h"

namespace optcoll::algorithms::patterns {

struct Piece {
  Count offset = 0;
  Count count = 0;
};

inline Piece even_piece(Count n, Rank parts, Rank i) {
  const Count base = n / parts;
  const Count extra = n % parts;
  return {i * base + std::min<Count>(i, extra), base + (i < extra ? 1 : 0)};
}

}  // namespace optcoll::algorithms::patterns
