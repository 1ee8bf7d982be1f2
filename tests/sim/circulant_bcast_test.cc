// SPDX-License-Identifier: Apache-2.0
// File: bcast/circulant (Träff–Ripke round-optimal pipelined broadcast). For every p up to
// 300 and n in {1, 2, 3, q, 17, 100} blocks: the transfers follow the circulant graph, every
// rank receives every block exactly once from a rank that holds it, one send and one receive
// per rank and round, in exactly n − 1 + ceil(log2 p) rounds; the built schedule verifies and
// simulates, under α = 1, β = 0, one port, full duplex, to exactly n − 1 + ceil(log2 p);
// and with β > 0 and blocks of unequal size to its header formula. Written against the
// definition of the schedule, not the code that builds it.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/circulant.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

std::int64_t ceil_log2(Rank p) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

std::vector<Count> block_counts(Rank p) {
  const auto q = static_cast<Count>(ceil_log2(p));
  std::set<Count> counts{1, 2, 3, 17, 100};
  if (q >= 1) counts.insert(q);
  return {counts.begin(), counts.end()};
}

CostModel one_port(Time alpha, Time beta) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = 0;
  m.copy = 0;
  m.ports = 1;
  m.duplex = Duplex::kFull;
  m.overlap = false;
  return m;
}

// The rank counts the theorems below are checked at, up to 300: every one (the sanitizer
// builds: every one to 70, then every 7th, as tests/testing/registry_cases.h thins its grid).
Rank next_p(Rank p) { return p + (testing::kSanitizedBuild && p >= 70 ? 7 : 1); }

TEST(CirculantSchedule, SkipsHalveFromP) {
  for (Rank p = 1; p <= 300; p = next_p(p)) {
    const auto plan = algorithms::patterns::circulant_schedule(p);
    ASSERT_EQ(plan.q, ceil_log2(p)) << "p=" << p;
    ASSERT_EQ(plan.skips.size(), static_cast<std::size_t>(plan.q) + 1);
    EXPECT_EQ(plan.skips.front(), 1);
    EXPECT_EQ(plan.skips.back(), p);
    for (int k = 0; k < plan.q; ++k) {
      EXPECT_EQ(plan.skips[static_cast<std::size_t>(k)],
                (plan.skips[static_cast<std::size_t>(k) + 1] + 1) / 2);
    }
  }
}

// Every rank's q values of a phase are q different blocks (distinct mod q) in [−q, q).
TEST(CirculantSchedule, EveryPhaseBringsQDifferentBlocks) {
  for (Rank p = 2; p <= 300; p = next_p(p)) {
    const auto plan = algorithms::patterns::circulant_schedule(p);
    for (Rank r = 1; r < p; ++r) {
      std::set<int> residues;
      for (int k = 0; k < plan.q; ++k) {
        const int v = plan.received(r, k);
        EXPECT_GE(v, -plan.q);
        EXPECT_LT(v, plan.q);
        residues.insert((v + plan.q) % plan.q);
      }
      EXPECT_EQ(residues.size(), static_cast<std::size_t>(plan.q)) << "p=" << p << " r=" << r;
    }
  }
}

TEST(CirculantSchedule, EveryRankGetsEveryBlockOnceInOptimalRounds) {
  for (Rank p = 2; p <= 300; p = next_p(p)) {
    const auto plan = algorithms::patterns::circulant_schedule(p);
    const std::int64_t q = ceil_log2(p);
    for (const Count n : block_counts(p)) {
      const auto transfers = algorithms::patterns::circulant_bcast_transfers(plan, n);
      const auto un = static_cast<std::size_t>(n);
      // When each rank got each block (−1: not yet; the root has all from the start).
      std::vector<std::int64_t> got(static_cast<std::size_t>(p) * un, -1);
      std::fill_n(got.begin(), un, std::int64_t{-2});
      std::vector<std::int64_t> last_send(static_cast<std::size_t>(p), -1);
      std::vector<std::int64_t> last_recv(static_cast<std::size_t>(p), -1);
      std::int64_t rounds = 0;
      for (const auto& x : transfers) {
        ASSERT_GE(x.block, 0);
        ASSERT_LT(x.block, n);
        ASSERT_NE(x.to, 0) << "the root receives";
        ASSERT_GE(x.round, 0);
        // Round i sends along skip s_k, k = i mod q (rounds start at a phase offset).
        const Rank distance = (x.to - x.from + p) % p;
        EXPECT_NE(std::find(plan.skips.begin(), plan.skips.end() - 1, distance),
                  plan.skips.end() - 1)
            << "p=" << p << " not a skip: " << distance;
        // One send and one receive per rank and round, rounds in order.
        EXPECT_GT(x.round, last_send[static_cast<std::size_t>(x.from)]) << "p=" << p;
        EXPECT_GT(x.round, last_recv[static_cast<std::size_t>(x.to)]) << "p=" << p;
        last_send[static_cast<std::size_t>(x.from)] = x.round;
        last_recv[static_cast<std::size_t>(x.to)] = x.round;
        const std::size_t from =
            static_cast<std::size_t>(x.from) * un + static_cast<std::size_t>(x.block);
        const std::size_t to =
            static_cast<std::size_t>(x.to) * un + static_cast<std::size_t>(x.block);
        EXPECT_TRUE(got[from] != -1 && got[from] < x.round)
            << "p=" << p << " n=" << n << ": rank " << x.from << " sends block " << x.block
            << " it lacks in round " << x.round;
        EXPECT_EQ(got[to], -1) << "p=" << p << " n=" << n << ": rank " << x.to << " receives block "
                               << x.block << " twice";
        got[to] = x.round;
        rounds = std::max(rounds, x.round + 1);
      }
      EXPECT_EQ(std::count(got.begin(), got.end(), std::int64_t{-1}), 0)
          << "p=" << p << " n=" << n << ": a block never arrives";
      EXPECT_EQ(rounds, n - 1 + q) << "p=" << p << " n=" << n;
    }
  }
}

// The per-round counts that cost estimates read, counted rank by rank, against the listed
// transfers.
TEST(CirculantSchedule, RoundSizesCountTheListedTransfers) {
  for (Rank p = 1; p <= 300; p = next_p(p)) {
    const auto plan = algorithms::patterns::circulant_schedule(p);
    for (const Count n : block_counts(p)) {
      if (n > 17) continue;  // (the estimates count S <= q <= 9 pieces here)
      std::vector<Rank> listed(p > 1 ? static_cast<std::size_t>(n - 1 + plan.q) : 0, 0);
      for (const auto& x : algorithms::patterns::circulant_bcast_transfers(plan, n)) {
        ++listed[static_cast<std::size_t>(x.round)];
      }
      EXPECT_EQ(algorithms::patterns::circulant_bcast_round_sizes(plan, n), listed)
          << "p=" << p << " n=" << n;
    }
  }
}

Time simulated(const CollectiveSpec& spec, Count segment, const CostModel& model,
               bool check = true) {
  algorithms::Params params;
  params.set("segment", std::to_string(segment));
  const Schedule schedule = algorithms::build("bcast/circulant", spec, params, model);
  if (check) {
    const auto report = verify(schedule);
    EXPECT_TRUE(report.ok()) << "p=" << spec.nranks << " n=" << spec.count;
  }
  const auto result = simulate(schedule, model);
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

// α = 1, β = 0: the makespan counts rounds; n one-element blocks take n − 1 + q of them.
TEST(CirculantBcast, RoundsAreOptimalForEveryP) {
  const CostModel rounds = one_port(1, 0);
  for (Rank p = 1; p <= 300; p = next_p(p)) {
    const Rank root = p / 3;
    for (const Count n : block_counts(p)) {
      const Time expected = p == 1 ? 0 : static_cast<Time>(n - 1 + ceil_log2(p));
      EXPECT_EQ(simulated(make_spec(CollectiveKind::kBcast, p, n, root), 1, rounds), expected)
          << "p=" << p << " n=" << n;
    }
  }
}

// β > 0, S blocks of ceil(m/S) or floor(m/S) elements: (q − 1)(α + ceil(m/S)β) + Sα + mβ.
TEST(CirculantBcast, CostFormulaWithUnequalBlocks) {
  const CostModel m = one_port(100, 1);
  // Every p to 70, then every 7th (the sanitizer builds: every 7th from 35, every 21st from 70).
  const auto next = [](Rank p) {
    if (!testing::kSanitizedBuild) return p + (p < 70 ? 1 : 7);
    return p + (p < 35 ? 1 : p < 70 ? 7 : 21);
  };
  for (Rank p = 2; p <= 300; p = next(p)) {
    const std::int64_t q = ceil_log2(p);
    for (const Count blocks : block_counts(p)) {
      for (const Count count : {blocks, 7 * blocks + 3, 10 * blocks}) {
        const Count segment = (count + blocks - 1) / blocks;
        const Count s = (count + segment - 1) / segment;
        const Time expected = static_cast<Time>(q - 1) * (100 + static_cast<Time>(segment)) +
                              static_cast<Time>(s) * 100 + static_cast<Time>(count);
        EXPECT_EQ(simulated(make_spec(CollectiveKind::kBcast, p, count, p - 1), segment, m,
                            /*check=*/false),
                  expected)
            << "p=" << p << " count=" << count << " S=" << s;
      }
    }
  }
}

// segment=auto: the estimate is the simulation (exact), and no worse than one block.
TEST(CirculantBcast, AutoSegmentsEstimateIsExact) {
  const CostModel m = one_port(100, 1);
  for (const Rank p : {2, 3, 5, 16, 64, 100, 257}) {
    for (const Count count : {0, 1, 5, 1000, 100000}) {
      const auto spec = make_spec(CollectiveKind::kBcast, p, count);
      const auto schedule = algorithms::build("bcast/circulant", spec, {}, m);
      const auto result = simulate(schedule, m);
      ASSERT_EQ(result.status, SimStatus::kOk);
      const auto& info = algorithms::lookup("bcast/circulant", CollectiveKind::kBcast);
      const auto estimate = info.estimate(spec, algorithms::resolve_params(info, {}), m);
      ASSERT_TRUE(estimate.has_value());
      EXPECT_TRUE(estimate->exact);
      EXPECT_DOUBLE_EQ(estimate->time, result.makespan) << "p=" << p << " count=" << count;
      EXPECT_EQ(estimate->params, schedule.params);
      EXPECT_LE(result.makespan, static_cast<Time>(ceil_log2(p)) * (100 + count));
    }
  }
}

// reduce/circulant and allreduce/circulant: the broadcast's rounds reversed (and then the
// broadcast), each round one message and one reduction, any root, blocks of unequal size.
Time reduction(std::string_view name, const CollectiveSpec& spec, Count segment,
               const CostModel& model) {
  algorithms::Params params;
  params.set("segment", std::to_string(segment));
  const Schedule schedule = algorithms::build(name, spec, params, model);
  const auto report = verify(schedule);
  EXPECT_TRUE(report.ok()) << name << " p=" << spec.nranks << " n=" << spec.count;
  const auto result = simulate(schedule, model);
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

TEST(CirculantReduce, CostFormulaAndVerification) {
  CostModel m = one_port(100, 1);
  m.gamma = 3;
  for (Rank p = 1; p <= 100; p += (p < 40 ? 1 : 9)) {
    const std::int64_t q = ceil_log2(p);
    for (const Count blocks : block_counts(p)) {
      const Count count = 7 * blocks + 3;
      const Count segment = (count + blocks - 1) / blocks;
      const Count s = (count + segment - 1) / segment;
      // (q − 1)(α + ceil(n/S)(β+γ)) + Sα + n(β+γ), per phase.
      const auto phase = [&](Time per) {
        return q == 0 ? Time{0}
                      : static_cast<Time>(q - 1) * (100 + static_cast<Time>(segment) * per) +
                            static_cast<Time>(s) * 100 + static_cast<Time>(count) * per;
      };
      EXPECT_EQ(reduction("reduce/circulant",
                          make_spec(CollectiveKind::kReduce, p, count, (2 * p) / 3), segment, m),
                phase(4))
          << "p=" << p << " count=" << count << " S=" << s;
      EXPECT_EQ(reduction("allreduce/circulant", make_spec(CollectiveKind::kAllreduce, p, count),
                          segment, m),
                phase(4) + phase(1))
          << "p=" << p << " count=" << count << " S=" << s;
    }
  }
}

TEST(CirculantReduce, NonCommutativeOnlyForTwoRanks) {
  for (const std::string name : {"reduce/circulant", "allreduce/circulant"}) {
    const auto& info = algorithms::lookup(
        name, name == "reduce/circulant" ? CollectiveKind::kReduce : CollectiveKind::kAllreduce);
    for (const Rank p : {1, 2, 3, 8}) {
      auto spec =
          make_spec(info.collective, p, 10, info.collective == CollectiveKind::kReduce ? p - 1 : 0);
      spec.commutative = false;
      const auto reason = algorithms::why_not(info, spec, algorithms::resolve_params(info, {}));
      EXPECT_EQ(reason.has_value(), p > 2) << name << " p=" << p;
      if (!reason) {
        EXPECT_TRUE(verify(algorithms::build(info, spec, {}, one_port(1, 1))).ok())
            << name << " p=" << p;
      }
    }
  }
}

// Zero elements: nothing moves.
TEST(CirculantBcast, ZeroCountIsEmpty) {
  for (const Rank p : {1, 2, 7, 64}) {
    const auto schedule = algorithms::build(
        "bcast/circulant", make_spec(CollectiveKind::kBcast, p, 0), {}, one_port(1, 1));
    EXPECT_TRUE(verify(schedule).ok());
    EXPECT_EQ(simulate(schedule, one_port(1, 1)).makespan, 0);
  }
}

// Planning a broadcast at p = 4096 stays well under a second (the receive schedules are
// O(q^2) per rank).
TEST(CirculantBcast, PlansLargeP) {
  const auto plan = algorithms::patterns::circulant_schedule(4096);
  EXPECT_EQ(plan.q, 12);
  const auto transfers = algorithms::patterns::circulant_bcast_transfers(plan, 40);
  EXPECT_EQ(transfers.size(), static_cast<std::size_t>(4095) * 40);
  EXPECT_EQ(transfers.back().round, 40 - 1 + 12 - 1);
}

}  // namespace
}  // namespace optcoll
