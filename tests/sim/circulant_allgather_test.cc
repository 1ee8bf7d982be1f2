// SPDX-License-Identifier: Apache-2.0
// File: allgather/circulant and allgatherv/circulant (all p circulant broadcasts at once).
// Under α = 1, β = 0, one port, full duplex, copy = 0 the makespan counts rounds: S − 1 +
// ceil(log2 p) exactly, for random blocks (zeros included) at every p up to 40 and some to
// 100, S pieces of the largest block, with and without overlap. With equal blocks the β term is (p
// − 1)mβ whatever S (every piece crosses p − 1 edges once); one non-empty block is
// bcast/circulant's time. The estimate equals the simulation (random blocks, copies priced); the
// schedules verify and run on threads; segment sizes that need more than 2^16 pieces are refused,
// not rounded, and segment=auto keeps the schedule's pieces p(p − 1)S within 2^22.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

std::int64_t ceil_log2(Rank p) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

CostModel one_port(Time alpha, Time beta, Time copy = 0) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = 0;
  m.copy = copy;
  m.ports = 1;
  m.duplex = Duplex::kFull;
  m.overlap = false;
  return m;
}

// Blocks in [0, most], about a quarter of them empty, seeded by (p, seed).
std::vector<Count> random_blocks(Rank p, Count most, unsigned seed) {
  std::mt19937 rng(static_cast<unsigned>(p) * 7919u + seed);
  std::vector<Count> blocks(static_cast<std::size_t>(p));
  for (Count& b : blocks) b = rng() % 4 == 0 ? 0 : static_cast<Count>(rng() % (most + 1));
  return blocks;
}

Count largest(const std::vector<Count>& blocks) {
  return blocks.empty() ? 0 : *std::max_element(blocks.begin(), blocks.end());
}

// The pieces of the largest block a segment size gives: ceil(L / segment).
Count pieces_of(Count largest_block, Count segment) {
  return largest_block == 0 ? 1 : (largest_block + segment - 1) / segment;
}

Schedule build(const std::string& name, const CollectiveSpec& spec, const std::string& params,
               const CostModel& model) {
  return algorithms::build(name, spec, algorithms::Params::parse(params), model);
}

Time makespan(const Schedule& schedule, const CostModel& model) {
  const auto result = simulate(schedule, model);
  EXPECT_EQ(result.status, SimStatus::kOk) << result.deadlock;
  return result.makespan;
}

// Every p to 40, then every 7th to 100 (the sanitizer builds: to 54; the largest p are most of
// this test's time under AddressSanitizer).
Rank next_random_blocks_p(Rank p) { return p + (p < 40 ? 1 : 7); }
const Rank kLargestRandomBlocksP = testing::kSanitizedBuild ? 54 : 100;

// α = 1, β = 0: S − 1 + q rounds, whatever the blocks (the largest not empty); with
// overlap too (the copies then wait only for their data).
TEST(CirculantAllgather, RoundsAreOptimalForRandomBlocks) {
  CostModel rounds = one_port(1, 0);
  for (Rank p = 1; p <= kLargestRandomBlocksP; p = next_random_blocks_p(p)) {
    rounds.overlap = p % 2 == 0;
    const std::int64_t q = ceil_log2(p);
    for (const Count wanted : {Count{1}, Count{2}, Count{3}, Count{q}, Count{17}}) {
      const auto blocks = random_blocks(p, 40, static_cast<unsigned>(wanted));
      const Count most = largest(blocks);
      if (most == 0) continue;
      const Count segment = (most + wanted - 1) / std::max<Count>(wanted, 1);
      const Count s = pieces_of(most, segment);
      const auto spec = make_spec_v(CollectiveKind::kAllgatherv, p, blocks);
      const Schedule schedule =
          build("allgatherv/circulant", spec, "segment=" + std::to_string(segment), rounds);
      const auto report = verify(schedule);
      const std::string where =
          "p=" + std::to_string(p) + " S=" + std::to_string(s) + (rounds.overlap ? " overlap" : "");
      ASSERT_TRUE(report.ok()) << where << ": " << report.summary();
      const Time expected = p == 1 ? 0 : static_cast<Time>(s - 1 + q);
      EXPECT_EQ(makespan(schedule, rounds), expected) << where;
    }
  }
}

// Equal blocks m >= S, copy = 0: (S − 1 + q)α + (p − 1)mβ for every S, so auto takes S = 1.
TEST(CirculantAllgather, EqualBlocksCostTheRingsBandwidth) {
  const CostModel m = one_port(100, 1);
  // Every p to 20, then every 5th (the sanitizer builds: every 10th).
  for (Rank p = 2; p <= 70; p += (p < 20 ? 1 : testing::kSanitizedBuild ? 10 : 5)) {
    const std::int64_t q = ceil_log2(p);
    for (const Count count : {Count{1}, Count{7}, Count{100}}) {
      for (const Count s : {Count{1}, Count{2}, Count{3}, Count{q}}) {
        if (s > count) continue;
        const Count segment = (count + s - 1) / s;
        const Count pieces = pieces_of(count, segment);
        const auto spec = make_spec(CollectiveKind::kAllgather, p, count);
        const Time expected =
            static_cast<Time>(pieces - 1 + q) * 100 + static_cast<Time>((p - 1) * count);
        EXPECT_EQ(
            makespan(build("allgather/circulant", spec, "segment=" + std::to_string(segment), m),
                     m),
            expected)
            << "p=" << p << " m=" << count << " S=" << pieces;
      }
      const Schedule automatic =
          build("allgather/circulant", make_spec(CollectiveKind::kAllgather, p, count), "", m);
      EXPECT_EQ(automatic.params, "segment=" + std::to_string(count)) << "p=" << p;
    }
  }
}

// One non-empty block: the other broadcasts add nothing, every message is one piece (no
// copies), and the time is bcast/circulant's (q − 1)(α + ceil(M/S)β) + Sα + Mβ.
TEST(CirculantAllgather, OneBlockIsTheCirculantBroadcast) {
  const CostModel m = one_port(100, 1);
  for (const Rank p : {2, 3, 5, 16, 33, 64}) {
    const std::int64_t q = ceil_log2(p);
    for (const Count s : {Count{1}, Count{4}, Count{30}}) {
      const Count total = 1000;
      const Count segment = (total + s - 1) / s;
      const Count pieces = pieces_of(total, segment);
      std::vector<Count> blocks(static_cast<std::size_t>(p), 0);
      blocks[static_cast<std::size_t>(p / 2)] = total;
      const auto spec = make_spec_v(CollectiveKind::kAllgatherv, p, blocks);
      const Time expected = static_cast<Time>(q - 1) * (100 + static_cast<Time>(segment)) +
                            static_cast<Time>(pieces) * 100 + static_cast<Time>(total);
      const Schedule schedule =
          build("allgatherv/circulant", spec, "segment=" + std::to_string(segment), m);
      EXPECT_TRUE(verify(schedule).ok());
      EXPECT_EQ(makespan(schedule, m), expected) << "p=" << p << " S=" << pieces;
    }
  }
}

// The estimate replays the rounds: equal to the simulation, copies included, for random,
// skewed and equal blocks, auto and explicit segments; and it records the builder's params.
TEST(CirculantAllgather, EstimateIsTheSimulation) {
  const auto& info = algorithms::lookup("allgatherv/circulant", CollectiveKind::kAllgatherv);
  for (const Rank p : {1, 2, 3, 4, 7, 16, 31, 64}) {
    std::vector<std::vector<Count>> cases{random_blocks(p, 50, 1), random_blocks(p, 5000, 2),
                                          std::vector<Count>(static_cast<std::size_t>(p), 40),
                                          std::vector<Count>(static_cast<std::size_t>(p), 0)};
    auto skewed = random_blocks(p, 10, 3);
    skewed[0] = 20000;
    cases.push_back(skewed);
    for (const auto& blocks : cases) {
      for (const Time copy : {0.0, 2.0}) {
        const CostModel m = one_port(100, 1, copy);
        std::vector<std::string> segments{
            "", "segment=" + std::to_string(std::max<Count>(1, largest(blocks) / 6))};
        if (largest(blocks) <= 50) segments.emplace_back("segment=1");
        for (const std::string& params : segments) {
          const auto spec = make_spec_v(CollectiveKind::kAllgatherv, p, blocks);
          const Schedule schedule = build("allgatherv/circulant", spec, params, m);
          const auto estimate = info.estimate(
              spec, algorithms::resolve_params(info, algorithms::Params::parse(params)), m);
          ASSERT_TRUE(estimate.has_value());
          EXPECT_TRUE(estimate->exact);
          const std::string where = "p=" + std::to_string(p) + " copy=" + std::to_string(copy) +
                                    " " + params + " L=" + std::to_string(largest(blocks));
          EXPECT_DOUBLE_EQ(estimate->time, makespan(schedule, m)) << where;
          EXPECT_EQ(estimate->params, schedule.params) << where;
        }
      }
    }
  }
}

// Beyond 2^22 piece visits the estimate is segment=auto's cost, and says it is not exact.
TEST(CirculantAllgather, LargeEstimatesAreMarkedInexact) {
  const auto& info = algorithms::lookup("allgatherv/circulant", CollectiveKind::kAllgatherv);
  auto blocks = random_blocks(200, 10, 5);
  blocks[7] = 100000;
  const auto spec = make_spec_v(CollectiveKind::kAllgatherv, 200, blocks);
  const auto params = algorithms::Params::parse("segment=100");  // 1000 pieces: 4e7 visits
  const auto estimate =
      info.estimate(spec, algorithms::resolve_params(info, params), one_port(100, 1));
  ASSERT_TRUE(estimate.has_value());
  EXPECT_FALSE(estimate->exact);
  EXPECT_EQ(estimate->params, "segment=100");
  // Per round α plus at most a full round's (M − m_min)/S, and at least that in all but
  // the first rounds: q = 8, S = 1000.
  Count total = 0;
  for (const Count b : blocks) total += b;
  const auto received = static_cast<Time>(total - *std::min_element(blocks.begin(), blocks.end()));
  EXPECT_LE(estimate->time, (1000 - 1 + 8) * (100.0 + received / 1000));
  EXPECT_GE(estimate->time, (1000 - 1 + 8) * 100.0 + received * (1000 - 1 - 8) / 1000);
}

// segment=auto keeps p(p − 1)·S <= 2^22 (p = 512: S <= 16), where the cost alone would
// pipeline one large block in more pieces; the estimate then stays a replay.
TEST(CirculantAllgather, AutoKeepsTheScheduleSmall) {
  const auto& info = algorithms::lookup("allgatherv/circulant", CollectiveKind::kAllgatherv);
  std::vector<Count> blocks(512, 0);
  blocks[100] = 1000000;
  const auto spec = make_spec_v(CollectiveKind::kAllgatherv, 512, blocks);
  const auto estimate = info.estimate(spec, algorithms::resolve_params(info, {}), one_port(100, 1));
  ASSERT_TRUE(estimate.has_value());
  EXPECT_TRUE(estimate->exact);
  EXPECT_EQ(estimate->params, "segment=62500");  // 16 pieces of 10^6
  // The broadcast of 16 pieces: (q − 1)(α + 62500β) + 16α + 10^6β, q = 9.
  EXPECT_DOUBLE_EQ(estimate->time, 8 * (100.0 + 62500) + 1600 + 1000000);
}

// Every element arrives where MPI_Allgatherv puts it, on threads.
TEST(CirculantAllgather, SchedulesRunOnThreads) {
  using namespace testing;  // NOLINT(google-build-using-namespace)
  const Datatype type = Datatype::int64();
  const ReduceOp op = ReduceOp::builtin("sum", type);
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  CostModel m = one_port(100, 1, 1);
  for (const Rank p : {2, 3, 5, 8, 13, 24}) {
    m.overlap = p % 2 == 1;  // the schedules differ: the copies' dependencies
    std::vector<CollectiveSpec> specs{
        make_spec_v(CollectiveKind::kAllgatherv, p, random_blocks(p, 30, 4)),
        make_spec_v(CollectiveKind::kAllgatherv, p,
                    std::vector<Count>(static_cast<std::size_t>(p), 0)),
        make_spec(CollectiveKind::kAllgather, p, 9)};
    for (const auto& spec : specs) {
      for (const std::string params : {"", "segment=1", "segment=4"}) {
        const std::string name = std::string(collective_name(spec.kind)) + "/circulant";
        const std::string where =
            name + " p=" + std::to_string(p) + " " + params + (m.overlap ? " overlap" : "");
        const Schedule schedule = build(name, spec, params, m);
        ASSERT_TRUE(verify(schedule).ok()) << where;
        const auto inputs = make_contributions(spec, type.bytes, fill_integers<std::int64_t>(11));
        const auto expected =
            reference_outputs(spec, type.bytes, inputs, combine_sum<std::int64_t>());
        const auto outputs = run_schedule(shared_world(p), schedule, type, op, inputs, options);
        for (Rank r = 0; r < p; ++r) {
          const auto i = static_cast<std::size_t>(r);
          ASSERT_EQ(first_difference(outputs[i], expected[i], type.bytes), "")
              << where << " rank " << r;
        }
      }
    }
  }
}

// A segment size is honoured or refused: one that would need more than 2^16 pieces of the
// largest block is a why_not, not a rounded schedule.
TEST(CirculantAllgather, RefusesSegmentsItCannotHonour) {
  const auto& info = algorithms::lookup("allgatherv/circulant", CollectiveKind::kAllgatherv);
  const auto spec = make_spec_v(CollectiveKind::kAllgatherv, 4, {0, 200000, 3, 5});
  const auto reason = [&](const std::string& params) {
    return algorithms::why_not(info, spec,
                               algorithms::resolve_params(info, algorithms::Params::parse(params)));
  };
  EXPECT_FALSE(reason("segment=auto").has_value());
  EXPECT_FALSE(reason("segment=4").has_value());  // 50000 pieces
  const auto refused = reason("segment=3");       // 66667 pieces
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("65536"), std::string::npos) << *refused;
  EXPECT_TRUE(reason("segment=0").has_value());
  EXPECT_TRUE(reason("segment=x").has_value());
  const Schedule schedule = build("allgatherv/circulant", spec, "segment=4", one_port(1, 0));
  EXPECT_EQ(schedule.params, "segment=4");
  EXPECT_EQ(makespan(schedule, one_port(1, 0)), 50000 - 1 + 2);
}

}  // namespace
}  // namespace optcoll
