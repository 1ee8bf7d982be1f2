// SPDX-License-Identifier: Apache-2.0
// File: the scalar vocabulary shared by every layer: ranks, element counts, model time.
#pragma once

#include <cstdint>

namespace optcoll {

using Rank = std::int32_t;   // participant id 0..p-1 (`nranks` in code, p in formulas)
using Count = std::int64_t;  // a number of elements, never bytes
using Time = double;         // model time units (abstract, or seconds once calibrated)

inline constexpr Rank kNoRank = -1;

// Upper limit on any element count or buffer length, so that sums, byte sizes and model
// times never overflow (2^48 elements; times 2^12-byte elements still fits in int64).
inline constexpr Count kMaxCount = Count{1} << 48;

// The three buffers of a rank. Input and output are the caller's; scratch is optcoll's.
enum class Buf : std::uint8_t { kInput, kOutput, kScratch };

}  // namespace optcoll
