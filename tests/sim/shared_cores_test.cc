// SPDX-License-Identifier: Apache-2.0
// File: the simulator with shared processors (CostModel::cores): ranks that outnumber the
// cores slow everything in progress by busy / cores. Hand-built schedules whose expected
// times are derived in each test's comment, and a property over the registry: the cores
// change the clock, never the order in which things happen.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

// alpha = 100, beta = 1, gamma = 3, copy = 1: a transfer of 10 elements takes 110.
CostModel unit_model(std::optional<int> cores) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.gamma = 3;
  m.copy = 1;
  m.cores = cores;
  return m;
}

Slice in(Count offset, Count count) { return Slice{Buf::kInput, offset, count}; }
Slice out(Count offset, Count count) { return Slice{Buf::kOutput, offset, count}; }

const OpTiming& timing(const SimResult& r, Rank rank, OpId op) {
  return r.timing.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(op));
}

TEST(SharedCores, FourRanksExchangingOnTwoCoresTakeTwiceAsLong) {
  // Pairs (0, 1) and (2, 3) swap 10 elements at once: four transfers of 110 from time 0, all
  // four ranks busy throughout. With c cores they take 110 * max(1, 4 / c).
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 4, 10), "test/pair_swap");
  for (const Rank r : {0, 1, 2, 3}) b.transfer(r, r ^ 1, in(0, 10), out(10 * r, 10));
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(simulate(s, unit_model(std::nullopt)).makespan, 110);
  EXPECT_EQ(simulate(s, unit_model(4)).makespan, 110);
  EXPECT_EQ(simulate(s, unit_model(8)).makespan, 110);
  EXPECT_EQ(simulate(s, unit_model(2)).makespan, 220);
  EXPECT_EQ(simulate(s, unit_model(1)).makespan, 440);
  EXPECT_DOUBLE_EQ(simulate(s, unit_model(3)).makespan, 110.0 * 4 / 3);
}

TEST(SharedCores, TheClockSlowsOnlyWhileRanksOutnumberTheCores) {
  // Rank 0 copies 10 elements, rank 1 copies 20, at once. One core: both busy until the first
  // copy's 10 units are done, at real time 20; then rank 1 alone runs its last 10 at full
  // speed: 30. Two cores: 10 and 20.
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 2, 20), "test/two_copies");
  b.copy(0, in(0, 10), out(0, 10));
  b.copy(1, in(0, 20), out(20, 20));
  const Schedule s = std::move(b).finish();
  const auto one = simulate(s, unit_model(1), {.trace = true});
  EXPECT_EQ(one.rank_finish, (std::vector<Time>{20, 30}));
  EXPECT_EQ(timing(one, 1, 0).start, 0);
  ASSERT_EQ(one.critical_path.size(), 1u);
  EXPECT_EQ(one.critical_path[0].end, 30);
  EXPECT_EQ(simulate(s, unit_model(2)).rank_finish, (std::vector<Time>{10, 20}));
}

TEST(SharedCores, ARankPastItsSendGapIsIdle) {
  // Rank 0 sends 10 elements to rank 1 (110; send gap 5: its port is free at 15) and copies
  // them independently (copy = 1: 10). One core, in virtual units: the transfer runs
  // [0, 110], the copy [15, 25] once the port is free. Busy ranks: [0, 15] both (the send,
  // the receive): real [0, 30]; [15, 25] both (rank 0 copies, rank 1 receives): [30, 50];
  // [25, 110] rank 1 alone: [50, 135].
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 2, 10), "test/send_then_copy");
  b.transfer(0, 1, out(0, 10), out(0, 10));
  b.copy(0, out(0, 10), b.scratch(0, 10));
  const Schedule s = std::move(b).finish();
  CostModel m = unit_model(1);
  m.send_gap = 5;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 0, 0).port_release, 30);
  EXPECT_EQ(timing(r, 0, 1).start, 30);
  EXPECT_EQ(timing(r, 0, 1).end, 50);
  EXPECT_EQ(r.makespan, 135);
  // A copy of 100 (copy = 10) outlasts the transfer: virtual [15, 115]; busy [0, 110] both
  // (real [0, 220]), [110, 115] rank 0 alone ([220, 225]). The path: the send up to its
  // port release at real 30, then the copy, which waited for that port.
  m.copy = 10;
  const auto longer = simulate(s, m);
  EXPECT_EQ(longer.makespan, 225);
  ASSERT_EQ(longer.critical_path.size(), 2u);
  EXPECT_EQ(longer.critical_path[0].end, 30);
  EXPECT_EQ(longer.critical_path[1].start, 30);
  EXPECT_EQ(longer.critical_path[1].waited_for, "port");
}

TEST(SharedCores, ValidatedAndKeptInTheModelFile) {
  CostModel m = unit_model(0);
  EXPECT_THROW(validate(m), Error);
  m.cores = 3;
  EXPECT_NO_THROW(validate(m));
  const CostModel back = parse_cost_model_json(cost_model_to_json(m));
  EXPECT_EQ(back.cores, std::optional<int>(3));
  EXPECT_FALSE(parse_cost_model_json("{}").cores.has_value());
  EXPECT_THROW(parse_cost_model_json("{\"cores\": 1.5}"), Error);
  EXPECT_THROW(parse_cost_model_json("{\"cores\": 0}"), Error);
  // One node's processors and a network topology do not mix.
  EXPECT_THROW(parse_cost_model_json("{\"cores\": 2, \"topology\": \"torus:4:bi\"}"), Error);
}

// Every event time of a run: (time without cores, time with cores) pairs.
void collect_times(const SimResult& plain, const SimResult& shared,
                   std::vector<std::pair<Time, Time>>& pairs) {
  for (std::size_t r = 0; r < plain.timing.size(); ++r) {
    for (std::size_t i = 0; i < plain.timing[r].size(); ++i) {
      const OpTiming& a = plain.timing[r][i];
      const OpTiming& b = shared.timing[r][i];
      pairs.emplace_back(a.start, b.start);
      pairs.emplace_back(a.end, b.end);
      EXPECT_EQ(a.port_release < 0, b.port_release < 0);
      if (a.port_release >= 0) pairs.emplace_back(a.port_release, b.port_release);
    }
  }
}

TEST(SharedCores, ChangeTheClockNotTheOrderOverTheRegistry) {
  // Every op in progress slows alike, so the run with c cores is the run without them on a
  // slower clock: times map through one increasing function whose slope lies in
  // [1, max(1, p / c)], and with c >= p nothing changes. The critical path still tiles
  // [0, makespan].
  std::vector<CostModel> models{unit_model(std::nullopt), unit_model(std::nullopt),
                                unit_model(std::nullopt)};
  models[1].send_gap = 7;
  models[1].receive_gap = 3;
  models[2].duplex = Duplex::kHalf;
  models[2].ports = 2;
  models[2].overlap = true;
  std::size_t stretched = 0;
  for (const auto& c : testing::registry_cases({5, 8})) {
    const Schedule s = algorithms::build(*c.algorithm, c.spec);
    const Rank p = c.spec.nranks;
    for (const CostModel& base : models) {
      const auto plain = simulate(s, base, {.trace = true});
      for (const int cores : {1, 2, 3, p}) {
        CostModel m = base;
        m.cores = cores;
        const auto shared = simulate(s, m, {.trace = true});
        ASSERT_EQ(shared.status, SimStatus::kOk) << c.name;
        if (cores >= p) {
          EXPECT_EQ(shared.makespan, plain.makespan) << c.name;
          EXPECT_EQ(shared.rank_finish, plain.rank_finish) << c.name;
          continue;
        }
        std::vector<std::pair<Time, Time>> pairs;
        collect_times(plain, shared, pairs);
        std::sort(pairs.begin(), pairs.end());
        const double max_slope = static_cast<double>(p) / cores;
        for (std::size_t k = 1; k < pairs.size(); ++k) {
          const auto [t0, u0] = pairs[k - 1];
          const auto [t1, u1] = pairs[k];
          if (t0 < 0) continue;  // never happened (none in a complete run)
          if (t1 == t0) {
            EXPECT_EQ(u1, u0) << c.name << " cores " << cores;
            continue;
          }
          const double slope = (u1 - u0) / (t1 - t0);
          const double tolerance = 1e-9 * std::max(1.0, u1);
          EXPECT_GE(u1 - u0, (t1 - t0) - tolerance) << c.name << " cores " << cores;
          EXPECT_LE(u1 - u0, (t1 - t0) * max_slope + tolerance) << c.name << " cores " << cores;
          if (slope > 1 + 1e-9) ++stretched;
        }
        EXPECT_GE(shared.makespan, plain.makespan) << c.name;
        if (s.op_count() == 0) continue;
        ASSERT_FALSE(shared.critical_path.empty()) << c.name;
        EXPECT_EQ(shared.critical_path.front().start, 0) << c.name;
        EXPECT_EQ(shared.critical_path.back().end, shared.makespan) << c.name;
        for (std::size_t k = 1; k < shared.critical_path.size(); ++k) {
          EXPECT_EQ(shared.critical_path[k].start, shared.critical_path[k - 1].end) << c.name;
        }
      }
    }
  }
  EXPECT_GT(stretched, 0u);  // the clock did slow somewhere
}

}  // namespace
}  // namespace optcoll
