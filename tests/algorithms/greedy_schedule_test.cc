// SPDX-License-Identifier: Apache-2.0
// File: the emitted schedules of reduce/greedy_overlap, reduce/fibonacci and
// allreduce/greedy_overlap run on the simulator exactly as long as the planner predicts
// (overlap, one port, half duplex), and the limited variants keep their limit on the
// simulator's trace (Algorithm 2 further in greedy_transfers_test.cc).
#include "optcoll/algorithms/planners/greedy_schedule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/algorithms/planners/greedy_transfers.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/concurrency.h"

namespace optcoll::algorithms::planners {
namespace {

CostModel overlap_model(Time alpha, Time beta, Time gamma) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = gamma;
  m.ports = 1;
  m.duplex = Duplex::kHalf;
  m.overlap = true;
  return m;
}

struct Case {
  Time alpha, beta, gamma;
  Count n;
};

// d = alpha + beta n, c = gamma n: d = c, d < c, d > c, c = 0, real-valued.
const std::vector<Case>& cases() {
  static const std::vector<Case> all{{1, 1, 2, 1}, {2, 1, 1, 10},        {5, 1, 1, 3},
                                     {1, 1, 0, 4}, {0.5, 0.25, 0.75, 6}, {3, 0, 1, 7}};
  return all;
}

Time simulated(const std::string& name, const CollectiveSpec& spec, const Params& params,
               const CostModel& model) {
  const auto result = simulate(build(name, spec, params, model), model);
  EXPECT_EQ(result.status, SimStatus::kOk) << result.deadlock;
  return result.makespan;
}

TEST(GreedySchedule, ReduceMakespanIsThePrediction) {
  for (const Case& k : cases()) {
    const auto model = overlap_model(k.alpha, k.beta, k.gamma);
    const ReductionCosts costs{k.alpha + k.beta * k.n, k.gamma * k.n};
    for (Rank p : {1, 2, 3, 5, 8, 13, 17, 33, 64, 100}) {
      const Time opt = greedy_optimal(p, costs).length;
      const Time fib = fibonacci_strategy(p, costs).length;
      for (Rank root : {0, p / 2, p - 1}) {
        auto spec = make_spec(CollectiveKind::kReduce, p, k.n, root);
        EXPECT_EQ(simulated("reduce/greedy_overlap", spec, {}, model), opt) << p << " " << root;
        EXPECT_EQ(simulated("reduce/fibonacci", spec, {}, model), fib) << p << " " << root;
        // Non-commutative: exact when the sink can sit at the root in rank order, one more
        // transfer otherwise (always exact at root 0).
        spec.commutative = false;
        const Time nc = simulated("reduce/greedy_overlap", spec, {}, model);
        if (root == 0) {
          EXPECT_EQ(nc, opt) << p;
        } else {
          EXPECT_TRUE(nc == opt || nc == opt + costs.d) << p << " " << root << ": " << nc;
        }
      }
    }
  }
}

TEST(GreedySchedule, LimitedVariantsAndAllreduce) {
  for (const Case& k : cases()) {
    const auto model = overlap_model(k.alpha, k.beta, k.gamma);
    const ReductionCosts costs{k.alpha + k.beta * k.n, k.gamma * k.n};
    for (Rank p : {2, 7, 16, 31, 50}) {
      const auto spec = make_spec(CollectiveKind::kReduce, p, k.n, 0);
      for (int limit : {1, 2, 3}) {
        auto params = Params::parse("reducers=" + std::to_string(limit));
        EXPECT_EQ(simulated("reduce/greedy_overlap", spec, params, model),
                  greedy_reducers(p, costs, limit).length);
        // A transfer limit runs Algorithm 2, its start times fixed: exactly its length.
        params = Params::parse("transfers=" + std::to_string(limit));
        EXPECT_EQ(simulated("reduce/greedy_overlap", spec, params, model),
                  greedy_transfers(p, costs, limit).length)
            << p << " K=" << limit;
      }
      std::int64_t log = 0;
      while ((1 << log) < p) ++log;
      EXPECT_EQ(simulated("allreduce/greedy_overlap", make_spec(CollectiveKind::kAllreduce, p, k.n),
                          {}, model),
                greedy_optimal(p, costs).length + static_cast<Time>(log) * costs.d)
          << p;
    }
  }
}

TEST(GreedySegmented, OneSegmentIsGreedyOverlapAndSegmentsVerify) {
  for (const Case& k : cases()) {
    const auto model = overlap_model(k.alpha, k.beta, k.gamma);
    for (Rank p : {1, 2, 5, 8, 13}) {
      for (Rank root : {0, p - 1}) {
        for (const bool commutative : {true, false}) {
          auto spec = make_spec(CollectiveKind::kReduce, p, 7 * k.n, root);
          spec.commutative = commutative;
          EXPECT_EQ(simulated("reduce/greedy_segmented", spec, Params::parse("segments=1"), model),
                    simulated("reduce/greedy_overlap", spec, {}, model));
          for (const char* segments :
               {"segments=2", "segments=5", "segments=100", "segments=auto"}) {
            const auto schedule =
                build("reduce/greedy_segmented", spec, Params::parse(segments), model);
            const auto report = verify(schedule);
            EXPECT_TRUE(report.ok()) << segments << " p=" << p << " root=" << root << "\n"
                                     << report.diagnostics.front().message;
          }
        }
      }
    }
  }
}

TEST(GreedySegmented, AutoPipelinesLongVectors) {
  // A long vector with cheap latency: d = 1 + n, c = n. Segmenting must pay off, and "auto"
  // must do at least as well on the simulator as no segmenting.
  const auto model = overlap_model(1, 1, 1);
  for (Rank p : {4, 16, 33}) {
    const auto spec = make_spec(CollectiveKind::kReduce, p, 4096);
    const auto schedule = build("reduce/greedy_segmented", spec, {}, model);
    EXPECT_NE(schedule.params, "segments=1") << p;
    const Time automatic = simulate(schedule, model).makespan;
    const Time whole = simulated("reduce/greedy_overlap", spec, {}, model);
    EXPECT_LT(automatic, whole) << p;
    // Lower bound: the whole vector must enter the sink through its one port (n·beta).
    EXPECT_GE(automatic, 4096.0) << p;
  }
  // Without overlap, auto takes one segment.
  CostModel plain = model;
  plain.overlap = false;
  EXPECT_EQ(
      build("reduce/greedy_segmented", make_spec(CollectiveKind::kReduce, 16, 4096), {}, plain)
          .params,
      "segments=1");
}

TEST(GreedySchedule, TransferLimitOnTheSimulatorsTrace) {
  SimOptions options;
  options.trace = true;
  for (const Case& k : cases()) {
    const auto model = overlap_model(k.alpha, k.beta, k.gamma);
    for (Rank p : {4, 9, 16, 40, 64}) {
      for (int limit : {1, 2, 3, 5}) {
        for (const char* which : {"transfers=", "reducers="}) {
          const auto schedule =
              build("reduce/greedy_overlap", make_spec(CollectiveKind::kReduce, p, k.n),
                    Params::parse(which + std::to_string(limit)), model);
          const auto result = simulate(schedule, model, options);
          EXPECT_LE(testing::most_concurrent_transfers(schedule, result), limit)
              << which << limit << " p=" << p << " alpha=" << k.alpha << " gamma=" << k.gamma;
        }
      }
    }
  }
}

}  // namespace
}  // namespace optcoll::algorithms::planners
