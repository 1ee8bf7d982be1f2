// SPDX-License-Identifier: Apache-2.0
// File: the simulator with several cores per rank (CostModel::cores_per_rank, Jain &
// Sabharwal's multicore nodes): a rank runs up to c computations at once. Hand-built
// schedules whose expected times are derived in each test's comment; the lower bound's
// computation term; and the field's validation.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

// alpha = 100, beta = 1, gamma = 3, copy = 1: a transfer of 10 elements takes 110, a
// reduction of 10 elements 30.
CostModel unit_model(int cores_per_rank) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.gamma = 3;
  m.copy = 1;
  m.cores_per_rank = cores_per_rank;
  return m;
}

Slice in(Count offset, Count count) { return Slice{Buf::kInput, offset, count}; }
Slice out(Count offset, Count count) { return Slice{Buf::kOutput, offset, count}; }

// Rank 0 reduces k disjoint slices of 10 elements (no op depends on another).
Schedule independent_reductions(int k) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 1, 10 * k), "test/k_reductions");
  for (int i = 0; i < k; ++i) b.reduce(0, in(10 * i, 10), out(10 * i, 10), Side::kLeft);
  return std::move(b).finish();
}

TEST(CoresPerRank, KIndependentReductionsTakeCeilKOverCReductionTimes) {
  for (int k = 1; k <= 7; ++k) {
    const Schedule s = independent_reductions(k);
    EXPECT_EQ(simulate(s, unit_model(1)).makespan, 30.0 * k) << k;
    for (int c = 1; c <= 8; ++c) {
      const Time rounds = (k + c - 1) / c;
      EXPECT_EQ(simulate(s, unit_model(c)).makespan, 30 * rounds) << "k " << k << " c " << c;
    }
  }
}

TEST(CoresPerRank, TheDefaultIsOneComputationAtATime) {
  EXPECT_EQ(CostModel{}.cores_per_rank, 1);
  CostModel m = unit_model(1);
  m.cores_per_rank = CostModel{}.cores_per_rank;
  EXPECT_EQ(simulate(independent_reductions(5), m).makespan, 150);
}

TEST(CoresPerRank, WithoutOverlapNoCommunicationStartsWhileAnyComputationRuns) {
  // Rank 0: two reductions of 10 (30 each) and, independent of them, a send of 10 to rank 1
  // (110). Without overlap the send waits for the processor: one core, the reductions run
  // [0, 30] and [30, 60] (both are before the send in the start order) and the send
  // [60, 170]; two cores, both reductions [0, 30], the send [30, 140]. With overlap the
  // send runs [0, 110] beside them.
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 2, 20), "test/reduce_then_send");
  b.reduce(0, in(0, 10), out(0, 10), Side::kLeft);
  b.reduce(0, in(10, 10), out(10, 10), Side::kLeft);
  b.transfer(0, 1, in(0, 10), b.scratch(1, 10));
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(simulate(s, unit_model(1)).makespan, 170);
  EXPECT_EQ(simulate(s, unit_model(2)).makespan, 140);
  CostModel overlapped = unit_model(1);
  overlapped.overlap = true;
  EXPECT_EQ(simulate(s, overlapped).makespan, 110);
}

TEST(CoresPerRank, EachComputationTakesOneOfTheSharedProcessors) {
  // Two reductions of 30 on one rank with two cores per rank: two of the node's shared
  // processors (`cores`) taken. On one shared processor both advance at half rate (60); on
  // two, 30. With one core per rank the rank takes one processor and runs them in turn: 60.
  const Schedule s = independent_reductions(2);
  CostModel m = unit_model(2);
  m.cores = 1;
  EXPECT_EQ(simulate(s, m).makespan, 60);
  m.cores = 2;
  EXPECT_EQ(simulate(s, m).makespan, 30);
  m = unit_model(1);
  m.cores = 1;
  EXPECT_EQ(simulate(s, m).makespan, 60);
}

TEST(CoresPerRank, TheReductionBoundSharesTheWorkOverTheCores) {
  // Allreduce, p = 4, n = 400, alpha = beta = 0, gamma = 1: the work 3·400 combinations
  // over 4 ranks of c cores: 300 / c (no other term is positive).
  CostModel m;
  m.alpha = 0;
  m.beta = 0;
  m.gamma = 1;
  const Layout layout(make_spec(CollectiveKind::kAllreduce, 4, 400));
  for (const int c : {1, 2, 3, 4}) {
    m.cores_per_rank = c;
    EXPECT_DOUBLE_EQ(*lower_bound(layout, m), 300.0 / c) << c;
  }
}

TEST(CoresPerRank, OverTheRegistryMoreCoresNeverBeatTheBound) {
  // Every registry schedule, computation-heavy model (gamma = 5, copy = 2), with and without
  // overlap: on c = 3 cores it completes, and no faster than the lower bound, whose
  // reduction terms divide the work by c. That more cores are never slower is not asserted:
  // a greedy start order (list scheduling) gives no such guarantee (Graham's anomalies).
  std::size_t faster = 0;
  for (const auto& c : testing::registry_cases({5, 8})) {
    const Schedule s = algorithms::build(*c.algorithm, c.spec);
    for (const bool overlap : {false, true}) {
      CostModel m = unit_model(3);
      m.gamma = 5;
      m.copy = 2;
      m.overlap = overlap;
      const auto many = simulate(s, m);
      ASSERT_EQ(many.status, SimStatus::kOk) << c.name;
      const auto bound = lower_bound(Layout(c.spec), m);
      ASSERT_TRUE(bound.has_value());
      EXPECT_LE(*bound, many.makespan * (1 + 1e-12)) << c.name;
      m.cores_per_rank = 1;
      if (many.makespan < simulate(s, m).makespan) ++faster;
    }
  }
  EXPECT_GT(faster, 0u);  // some schedule has independent computations on a rank
}

TEST(CoresPerRank, OutOfRangeIsAnErrorNamingTheField) {
  for (const int c : {0, -1, 1025}) {
    CostModel m;
    m.cores_per_rank = c;
    try {
      validate(m);
      ADD_FAILURE() << "accepted cores_per_rank " << c;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cores_per_rank must be in 1..1024"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace optcoll
