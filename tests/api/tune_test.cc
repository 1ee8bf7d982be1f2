// SPDX-License-Identifier: Apache-2.0
// File: optcoll tune's engine (optcoll/api/tune.h) on a small grid at p = 3 on threads: every
// applicable registry algorithm and variant measured and checked against the naive
// reference, the best and the regrets consistent with the measured times, the table a
// round trip whose tuned choice at each grid point is the measured best; and a Communicator
// given the table runs the tuned choice. Times are not asserted (machines are noisy): only
// what follows from them.
#include "optcoll/api/tune.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

TuneOptions small_grid() {
  TuneOptions o;
  o.cases = {parse_tune_case("allreduce"), parse_tune_case("bcast"),
             parse_tune_case("gatherv:spikes")};
  o.sizes = tune_sizes(8, 4096, 64);  // 8, 512, 4096
  o.rounds = 2;
  o.round_seconds = 2e-4;
  o.max_calls = 20;
  return o;
}

const TuneReport& report() {
  static const TuneReport r = tune_on_threads(3, small_grid());
  return r;
}

TEST(Tune, GridSizesAndCases) {
  EXPECT_EQ(tune_sizes(8, std::uint64_t{8} << 20, 8),
            (std::vector<std::uint64_t>{8, 64, 512, 4096, 32768, 262144, 2097152, 8388608}));
  EXPECT_EQ(tune_sizes(8, 8, 8), (std::vector<std::uint64_t>{8}));
  EXPECT_THROW(tune_sizes(4, 64, 8), Error);
  EXPECT_THROW(tune_sizes(8, 64, 1), Error);
  EXPECT_EQ(tune_case_name(parse_tune_case("gatherv:spikes")), "gatherv:spikes");
  EXPECT_THROW(parse_tune_case("gatherv"), Error);           // needs a distribution
  EXPECT_THROW(parse_tune_case("allreduce:spikes"), Error);  // regular counts
  EXPECT_THROW(parse_tune_case("gatherv:gaussian"), Error);
  EXPECT_THROW(parse_tune_case("barrier"), Error);
  EXPECT_THROW(parse_tune_case("allscatter"), Error);
  EXPECT_EQ(default_tune_cases().size(), 8u);
}

TEST(Tune, MeasuresEveryApplicableAlgorithmCorrectly) {
  const TuneReport& r = report();
  ASSERT_EQ(r.points.size(), 9u);
  ASSERT_EQ(r.plans.size(), 9u);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.table.nranks, 3);
  EXPECT_EQ(r.table.backend, "threads");
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& plan = r.plans[i];
    const auto& point = r.points[i];
    SCOPED_TRACE(tune_case_name(plan.tune_case) + " " + std::to_string(plan.bytes));
    EXPECT_TRUE(point.checked);
    EXPECT_TRUE(point.wrong.empty()) << point.wrong.front();
    // Every applicable registry algorithm appears with its default parameters.
    std::set<std::string> measured;
    for (const auto& run : point.point.runs) {
      measured.insert(run.algorithm);
      EXPECT_GT(run.seconds, 0);
      EXPECT_GE(run.predicted, 0);
    }
    for (const auto* info : algorithms::algorithms_for(plan.spec.kind)) {
      const bool applies =
          !algorithms::why_not(*info, plan.spec, algorithms::resolve_params(*info, {}));
      EXPECT_EQ(measured.contains(std::string(info->name)), applies) << info->name;
    }
    // The best is the least measured time; regrets are at least 1.
    for (const double s : point.seconds) EXPECT_LE(point.seconds[point.best], s);
    EXPECT_GE(point.seconds[point.auto_pick], point.seconds[point.best]);
    // Auto's pick is the choice of the thread backend's default model (small_grid() names
    // none, as a Communicator on threads without one plans with it).
    EXPECT_EQ(plan.candidates[plan.auto_pick].algorithm,
              optcoll::plan(plan.spec, default_thread_model()).algorithm);
  }
  const ModelError e = model_error(r);
  EXPECT_GT(e.runs, 0u);
  EXPECT_LE(e.median, e.p90);
}

TEST(Tune, TheTablesChoiceAtAGridPointIsTheMeasuredBest) {
  const TuneReport& r = report();
  const TuningTable table = parse_tuning_json(tuning_to_json(r.table));
  EXPECT_TRUE(table.warnings.empty());
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& runs = r.points[i].point.runs;
    const auto best = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
      return a.seconds < b.seconds;
    });
    const auto lookup = tuned_choice(table, r.plans[i].spec, "threads");
    ASSERT_TRUE(lookup.choice) << lookup.reason;
    EXPECT_EQ(lookup.choice->algorithm, best->algorithm);
    EXPECT_EQ(lookup.choice->variant, best->variant);
  }
}

TEST(Tune, ACommunicatorWithTheTableRunsTheTunedChoice) {
  const TuneReport& r = report();
  auto table = std::make_shared<const TuningTable>(r.table);
  const auto& plan = r.plans[2];  // allreduce at 4096 B
  ASSERT_EQ(plan.spec.kind, CollectiveKind::kAllreduce);
  const auto expected = tuned_choice(*table, plan.spec, "threads");
  ASSERT_TRUE(expected.choice);
  ThreadWorld world(3);
  auto cache = std::make_shared<PlanCache>();
  std::vector<std::string> ran(3);
  world.run([&](Transport& transport) {
    CommOptions options;
    options.tuning = table;
    Communicator comm(transport, cache, options);
    std::vector<double> in(static_cast<std::size_t>(plan.spec.count), transport.rank() + 1.0);
    std::vector<double> out(in.size());
    comm.allreduce<double>(in, out, "sum");
    EXPECT_EQ(out.front(), 6.0);
    ran[static_cast<std::size_t>(transport.rank())] = comm.last_plan()->decided_by;
    EXPECT_EQ(comm.last_plan()->algorithm, expected.choice->algorithm);
  });
  EXPECT_NE(ran[0].find("the tuning table"), std::string::npos) << ran[0];
}

}  // namespace
}  // namespace optcoll
