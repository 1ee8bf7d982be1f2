// SPDX-License-Identifier: Apache-2.0
// File: the spin budget's inputs (optcoll/exec/spin_wait.h): reading /proc/loadavg's
// runnable tasks, the budget that follows from the node's state, and spin_wait's stop rules.
#include "optcoll/exec/spin_wait.h"

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

namespace optcoll {
namespace {

TEST(SpinWait, RunnableTasksAreTheFourthFieldsNumerator) {
  EXPECT_EQ(runnable_tasks("0.53 0.44 0.40 3/251 12345\n"), 3);
  EXPECT_EQ(runnable_tasks("12.00 8.10 4.02 17/1024 99"), 17);
  EXPECT_EQ(runnable_tasks(""), std::nullopt);
  EXPECT_EQ(runnable_tasks("0.53 0.44 0.40 3 251"), std::nullopt);      // no slash
  EXPECT_EQ(runnable_tasks("0.53 0.44 3/251 12345"), std::nullopt);     // a load missing
  EXPECT_EQ(runnable_tasks("0.53 0.44 0.40 300/251 1"), std::nullopt);  // more than all
}

// A node of 8 CPUs or more tolerates one runnable task beyond them (a job with a rank on
// every CPU is there by itself); a smaller one none.
TEST(SpinWait, ABigNodeToleratesOneTaskMore) {
  EXPECT_FALSE(oversubscribes(2, 2));
  EXPECT_TRUE(oversubscribes(3, 2));
  EXPECT_FALSE(oversubscribes(7, 7));
  EXPECT_TRUE(oversubscribes(8, 7));
  EXPECT_FALSE(oversubscribes(9, 8));
  EXPECT_TRUE(oversubscribes(10, 8));
  EXPECT_FALSE(oversubscribes(17, 16));
  EXPECT_TRUE(oversubscribes(18, 16));
}

TEST(SpinWait, TheBudgetIsLongUnlessTheNodeIsOversubscribed) {
  const SpinBudget budget(std::chrono::microseconds{20});
  const auto now = std::chrono::steady_clock::now();
  const auto expected =
      node_oversubscribed(now) ? std::chrono::microseconds{20} : SpinBudget::kLongSpin;
  EXPECT_EQ(budget.at(now), expected);
}

TEST(SpinWait, StopsWhenReadyAndAtItsLimit) {
  const SpinBudget budget(std::chrono::microseconds{20});
  int calls = 0;
  EXPECT_TRUE(spin_wait([&] { return ++calls == 3; }, budget, std::chrono::seconds{10}));
  EXPECT_EQ(calls, 3);
  // Never ready: it gives up once the limit (here shorter than either budget) has passed.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(spin_wait([] { return false; }, budget, std::chrono::microseconds{5}));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::microseconds{5});
}

TEST(SpinWait, NapsDoubleUpToTheirCapWhichIsShortWhereRanksOutnumberCpus) {
  using std::chrono::microseconds;
  // A node with a CPU per rank: 50, 100, 200, 400, 800, then 1 ms for ever.
  std::vector<microseconds> naps{kFirstNap};
  for (int i = 0; i < 8; ++i) naps.push_back(next_nap(naps.back(), /*crowded=*/false));
  EXPECT_EQ(naps, (std::vector<microseconds>{microseconds{50}, microseconds{100}, microseconds{200},
                                             microseconds{400}, microseconds{800},
                                             microseconds{1000}, microseconds{1000},
                                             microseconds{1000}, microseconds{1000}}));
  // A crowded node: 50, then 100 us for ever, so that a message that comes early in a nap
  // is taken at most 100 us late.
  microseconds nap = kFirstNap;
  for (int i = 0; i < 100; ++i) {
    const microseconds next = next_nap(nap, /*crowded=*/true);
    EXPECT_LE(next, microseconds{100});
    EXPECT_GE(next, nap);
    nap = next;
  }
  EXPECT_EQ(nap, microseconds{100});
}

}  // namespace
}  // namespace optcoll
