// SPDX-License-Identifier: Apache-2.0
// File: RankSync (api/rank_sync.h): its barrier and maximum on every rank of thread worlds
// of several sizes, each rank running its own program of the registry's algorithms.
#include "optcoll/api/rank_sync.h"

#include <atomic>
#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

// A value per rank whose maximum is on neither the first nor the last rank for p >= 3.
double value_of(Rank r, Rank p) { return 10.0 * static_cast<double>((7 * r + 3) % p); }

TEST(RankSync, EveryRankLeavesABarrierAfterAllArrivedAndAgreesOnTheMaximum) {
  for (const Rank p : {1, 2, 3, 5, 8, 13}) {
    constexpr int kRounds = 3;
    ThreadWorld world(p);
    std::atomic<int> arrived{0};
    std::vector<std::vector<int>> seen(static_cast<std::size_t>(p));
    std::vector<double> maxima(static_cast<std::size_t>(p), -1);
    world.run([&](Transport& t) {
      RankSync sync(t, std::chrono::seconds(20));
      const auto me = static_cast<std::size_t>(t.rank());
      for (int round = 0; round < kRounds; ++round) {
        arrived.fetch_add(1);
        sync.barrier();
        seen[me].push_back(arrived.load());
      }
      maxima[me] = sync.max(value_of(t.rank(), p));
    });
    double expected = 0;
    for (Rank r = 0; r < p; ++r) expected = std::max(expected, value_of(r, p));
    for (std::size_t r = 0; r < seen.size(); ++r) {
      ASSERT_EQ(seen[r].size(), static_cast<std::size_t>(kRounds));
      for (int round = 0; round < kRounds; ++round) {
        EXPECT_GE(seen[r][static_cast<std::size_t>(round)], (round + 1) * p)
            << "p " << p << ", rank " << r << " left barrier " << round << " early";
      }
      EXPECT_EQ(maxima[r], expected) << "p " << p << ", rank " << r;
    }
  }
}

}  // namespace
}  // namespace optcoll
