// SPDX-License-Identifier: Apache-2.0
// File: the eleven block-size distributions of Träff's irregular gather/scatter experiments
// (docs/math/gather-scatter-trees.md §5), used by the CLI's --dist and the experiments.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

enum class Distribution : std::uint8_t {
  kSame,              // m_i = b
  kRandom,            // uniform in [0, 2b]
  kRandomDecreasing,  // kRandom sorted decreasing
  kRandomIncreasing,  // kRandom sorted increasing
  kBucket,            // b/2 + uniform in [0, b]
  kSpikes,            // k·b with probability 1/k, else 1
  kDecreasing,        // floor(2b(p-i)/p) + 1
  kIncreasing,        // floor(2b(i+1)/p) + 1
  kAlternating,       // even i: 3b/2, odd i: b/2
  kSkewed,            // the first k ranks b·p/k, the others 1
  kTwoBlocks,         // m_0 = m_{p-1} = b·p/2, the others 0
};

std::string_view distribution_name(Distribution d);  // "same", "random-decreasing", ...
std::span<const Distribution> all_distributions();
// Throws Error(kInvalidArgument) listing the known names.
Distribution parse_distribution(std::string_view name);

// Block sizes m_0..m_{p-1} for block size b, skew parameter k (the paper uses k = 5), and
// a seed for the random ones (std::mt19937_64; the same seed gives the same sizes on every
// platform). Throws Error(kInvalidArgument) for p < 1, b < 0, k < 1, or sizes that overflow.
std::vector<Count> distribution_counts(Distribution d, Rank nranks, Count block,
                                       std::uint64_t seed = 1, Count k = 5);

}  // namespace optcoll
