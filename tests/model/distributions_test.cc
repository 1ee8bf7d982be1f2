// SPDX-License-Identifier: Apache-2.0
// File: the distributions reproduce the instances of Träff's tables (p = 2000, b = 1000,
// k = 5): totals and sample blocks given in docs/math/gather-scatter-trees.md §5.
#include "optcoll/model/distributions.h"

#include <numeric>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

Count total(const std::vector<Count>& m) { return std::accumulate(m.begin(), m.end(), Count{0}); }

TEST(Distributions, DeterministicInstancesOfThePaper) {
  const Rank p = 2000;
  const Count b = 1000;
  const auto same = distribution_counts(Distribution::kSame, p, b);
  EXPECT_EQ(total(same), 2000000);
  const auto dec = distribution_counts(Distribution::kDecreasing, p, b);
  EXPECT_EQ(dec.front(), 2001);
  EXPECT_EQ(dec.back(), 2);
  EXPECT_EQ(total(dec), 2003000);
  const auto inc = distribution_counts(Distribution::kIncreasing, p, b);
  EXPECT_EQ(inc.front(), 2);
  EXPECT_EQ(inc.back(), 2001);
  EXPECT_EQ(total(inc), 2003000);
  const auto alt = distribution_counts(Distribution::kAlternating, p, b);
  EXPECT_EQ(alt[0], 1500);
  EXPECT_EQ(alt[1], 500);
  EXPECT_EQ(total(alt), 2000000);
  const auto skew = distribution_counts(Distribution::kSkewed, p, b);
  EXPECT_EQ(skew[4], 400000);
  EXPECT_EQ(skew[5], 1);
  EXPECT_EQ(total(skew), 2001995);
  const auto two = distribution_counts(Distribution::kTwoBlocks, p, b);
  EXPECT_EQ(two[0], 1000000);
  EXPECT_EQ(two[1999], 1000000);
  EXPECT_EQ(total(two), 2000000);
}

TEST(Distributions, RandomOnesAreSeededAndInRange) {
  const auto a = distribution_counts(Distribution::kRandom, 500, 100, 7);
  EXPECT_EQ(a, distribution_counts(Distribution::kRandom, 500, 100, 7));
  EXPECT_NE(a, distribution_counts(Distribution::kRandom, 500, 100, 8));
  for (const Count c : a) {
    EXPECT_GE(c, 0);
    EXPECT_LE(c, 200);
  }
  const auto inc = distribution_counts(Distribution::kRandomIncreasing, 500, 100, 7);
  EXPECT_TRUE(std::is_sorted(inc.begin(), inc.end()));
  EXPECT_EQ(total(inc), total(a));  // the same draws, sorted
  for (const Count c : distribution_counts(Distribution::kBucket, 500, 100, 3)) {
    EXPECT_GE(c, 50);
    EXPECT_LE(c, 150);
  }
  for (const Count c : distribution_counts(Distribution::kSpikes, 500, 100, 3)) {
    EXPECT_TRUE(c == 1 || c == 500) << c;
  }
}

TEST(Distributions, NamesRoundTripAndUnknownNamesAreListed) {
  EXPECT_EQ(all_distributions().size(), 11u);
  for (const auto d : all_distributions()) EXPECT_EQ(parse_distribution(distribution_name(d)), d);
  try {
    parse_distribution("gaussian");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown distribution 'gaussian' (known: same, random"),
              std::string::npos)
        << e.what();
  }
  // docs/errors.md: each argument check, with its message.
  auto expect_invalid = [](Rank p, Count block, Count k, const std::string& fragment) {
    try {
      distribution_counts(Distribution::kSpikes, p, block, 1, k);
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_invalid(0, 10, 2, "distribution needs nranks >= 1, got 0");
  expect_invalid(4, -1, 2, "block size must be non-negative, got -1");
  expect_invalid(4, 10, 0, "distribution parameter k must be at least 1, got 0");
  expect_invalid(4, kMaxCount, 2, "block size 281474976710656 is too large for 4 ranks");
  EXPECT_THROW(distribution_counts(Distribution::kSame, 0, 10), Error);
  EXPECT_THROW(distribution_counts(Distribution::kSame, 4, -1), Error);
  EXPECT_THROW(distribution_counts(Distribution::kTwoBlocks, 4, kMaxCount), Error);
}

}  // namespace
}  // namespace optcoll
