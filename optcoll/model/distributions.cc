// SPDX-License-Identifier: Apache-2.0
// File: block-size distributions (Träff, TPDS 2019, Section 5; formulas rebuilt in
// docs/math/gather-scatter-trees.md §5, the deterministic ones verified against the
// paper's tables).
#include "optcoll/model/distributions.h"

#include <algorithm>
#include <array>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

struct DistName {
  Distribution d;
  std::string_view name;
};

constexpr std::array<DistName, 11> kNames{{
    {Distribution::kSame, "same"},
    {Distribution::kRandom, "random"},
    {Distribution::kRandomDecreasing, "random-decreasing"},
    {Distribution::kRandomIncreasing, "random-increasing"},
    {Distribution::kBucket, "bucket"},
    {Distribution::kSpikes, "spikes"},
    {Distribution::kDecreasing, "decreasing"},
    {Distribution::kIncreasing, "increasing"},
    {Distribution::kAlternating, "alternating"},
    {Distribution::kSkewed, "skewed"},
    {Distribution::kTwoBlocks, "two-blocks"},
}};

constexpr std::array<Distribution, 11> kAll = [] {
  std::array<Distribution, 11> all{};
  for (std::size_t i = 0; i < kNames.size(); ++i) all[i] = kNames[i].d;
  return all;
}();

// Uniform integer in [0, range] from a 64-bit generator. The modulo bias (range << 2^64)
// is negligible, and unlike std::uniform_int_distribution the result is the same with every
// standard library.
Count uniform(std::mt19937_64& rng, Count range) {
  return static_cast<Count>(rng() % (static_cast<std::uint64_t>(range) + 1));
}

}  // namespace

std::string_view distribution_name(Distribution d) {
  for (const auto& entry : kNames) {
    if (entry.d == d) return entry.name;
  }
  return "unknown";
}

std::span<const Distribution> all_distributions() { return kAll; }

Distribution parse_distribution(std::string_view name) {
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.d;
  }
  std::string known;
  for (const auto& entry : kNames) known += (known.empty() ? "" : ", ") + std::string(entry.name);
  throw_invalid("unknown distribution '{}' (known: {})", name, known);
}

std::vector<Count> distribution_counts(Distribution d, Rank nranks, Count block, std::uint64_t seed,
                                       Count k) {
  if (nranks < 1) throw_invalid("distribution needs nranks >= 1, got {}", nranks);
  if (block < 0) throw_invalid("block size must be non-negative, got {}", block);
  if (k < 1) throw_invalid("distribution parameter k must be at least 1, got {}", k);
  const Count p = nranks;
  // Every block is at most b·p (two-blocks, skewed) or k·b (spikes): keep both in range.
  if (block > kMaxCount / std::max<Count>(p, k) / 2) {
    throw_invalid("block size {} is too large for {} ranks", block, p);
  }
  std::vector<Count> m(static_cast<std::size_t>(p));
  std::mt19937_64 rng(seed);
  for (Count i = 0; i < p; ++i) {
    auto& mi = m[static_cast<std::size_t>(i)];
    switch (d) {
      case Distribution::kSame:
        mi = block;
        break;
      case Distribution::kRandom:
      case Distribution::kRandomDecreasing:
      case Distribution::kRandomIncreasing:
        mi = uniform(rng, 2 * block);
        break;
      case Distribution::kBucket:
        mi = block / 2 + uniform(rng, block);
        break;
      case Distribution::kSpikes:
        mi = uniform(rng, k - 1) == 0 ? k * block : 1;
        break;
      case Distribution::kDecreasing:
        mi = 2 * block * (p - i) / p + 1;
        break;
      case Distribution::kIncreasing:
        mi = 2 * block * (i + 1) / p + 1;
        break;
      case Distribution::kAlternating:
        mi = i % 2 == 0 ? 3 * block / 2 : block / 2;
        break;
      case Distribution::kSkewed:
        mi = i < k ? block * p / k : 1;
        break;
      case Distribution::kTwoBlocks:
        mi = (i == 0 || i == p - 1) ? block * p / 2 : 0;
        break;
    }
  }
  if (d == Distribution::kRandomDecreasing) std::sort(m.begin(), m.end(), std::greater<>());
  if (d == Distribution::kRandomIncreasing) std::sort(m.begin(), m.end());
  return m;
}

}  // namespace optcoll
