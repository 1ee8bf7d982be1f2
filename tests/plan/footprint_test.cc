// SPDX-License-Identifier: Apache-2.0
// File: op-count estimates (optcoll/plan/footprint.h) against the schedules actually built,
// for algorithms whose op counts grow as p, p log p and p^2.
#include "optcoll/plan/footprint.h"

#include <gtest/gtest.h>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"
#include "optcoll/model/topology.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

struct Case {
  const char* algorithm;
  CollectiveSpec spec;
};

double built(const Case& c) {
  return static_cast<double>(algorithms::build(c.algorithm, c.spec).op_count());
}

TEST(Footprint, EstimatesAreCloseToTheBuiltSchedules) {
  const Case cases[] = {
      {"binomial", make_spec(CollectiveKind::kBcast, 1000, 64)},
      {"linear", make_spec(CollectiveKind::kBcast, 777, 64, 5)},
      {"dissemination", make_spec(CollectiveKind::kBarrier, 1000, 0)},
      {"ring", make_spec(CollectiveKind::kAllreduce, 512, 4096)},
      {"pairwise", make_spec(CollectiveKind::kAlltoall, 400, 8)},
      {"binomial", make_spec_v(CollectiveKind::kGatherv, 1000,
                               distribution_counts(Distribution::kRandom, 1000, 100, 1), 3)},
      {"linear", make_spec_v(CollectiveKind::kAlltoallv, 300, std::vector<Count>(300 * 300, 2))},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.algorithm);
    const auto& info = algorithms::lookup(c.algorithm, c.spec.kind);
    const auto estimate = estimate_ops(info, c.spec, {}, CostModel{});
    ASSERT_TRUE(estimate.has_value());
    const double actual = built(c);
    // An estimate for refusing what cannot fit: close, and rather above than below.
    EXPECT_GE(estimate->ops, 0.9 * actual) << estimate->growth;
    EXPECT_LE(estimate->ops, 1.6 * actual) << estimate->growth;
  }
}

// The work every cost formula reports (algorithms::Estimate::work) is what the search weighs
// before it builds a schedule to simulate it (select.h: kOneRankBuildWork, search_steps.h's
// budgets). Over the registry grid at p = 64, no formula counts less than 0.7 of the ops its
// algorithm builds (more is safe: empty messages are not emitted). recursive_halving counted
// its p copies per rank as p/2 and reproducible reduce_scatter its folds not at all, so a
// plan for one rank at p = 1,024 built and simulated a 1 M-op reduce_scatter_block (2.6 s,
// 350 MB) it had budgeted at half that.
TEST(Footprint, FormulasCountTheOpsTheyBuild) {
  const CostModel model = reference_cluster_model();
  int checked = 0;
  for (const auto& c : testing::registry_cases({64})) {
    const auto& info = *c.algorithm;
    const auto params = algorithms::resolve_params(info, {});
    if (algorithms::why_not(info, c.spec, params)) continue;
    const auto estimate = info.estimate(c.spec, params, model);
    if (!estimate) continue;
    const auto ops = static_cast<double>(algorithms::build(info, c.spec, {}, model).op_count());
    if (ops < 1000) continue;  // (constant terms decide there)
    EXPECT_GE(estimate->work, 0.7 * ops) << c.name;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(Footprint, TheFittedLawIsTheAlgorithmsGrowth) {
  const auto law = [](const char* algorithm, const CollectiveSpec& spec) {
    return estimate_ops(algorithms::lookup(algorithm, spec.kind), spec, {}, CostModel{})->growth;
  };
  EXPECT_EQ(law("binomial", make_spec(CollectiveKind::kBcast, 1 << 20, 1)), "p^1.0");
  EXPECT_EQ(law("dissemination", make_spec(CollectiveKind::kBarrier, 1 << 24, 0)), "p^1.0 log2 p");
  EXPECT_EQ(law("pairwise", make_spec(CollectiveKind::kAlltoall, 5000, 1)), "p^2.0");
  // Small rank counts are built, not estimated.
  EXPECT_EQ(law("ring", make_spec(CollectiveKind::kAllreduce, 100, 1000)), "built");
}

TEST(Footprint, NoEstimateWhereTheSamplesCannotBeBuilt) {
  // A torus model fixes the rank count: the samples do not fit it.
  const CostModel torus = with_topology(CostModel{}, parse_topology("torus:16x16"));
  const CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 256, 256);
  EXPECT_FALSE(estimate_ops(algorithms::lookup("ring", spec.kind), spec, {}, torus).has_value());
}

TEST(Footprint, ScaledSpecsKeepThePerRankProblem) {
  const CollectiveSpec v = make_spec_v(CollectiveKind::kGatherv, 8, {0, 1, 2, 3, 4, 5, 6, 7}, 7);
  const CollectiveSpec half = scaled_spec(v, 4);
  EXPECT_EQ(half.nranks, 4);
  EXPECT_EQ(half.root, 3);
  EXPECT_EQ(half.counts, (std::vector<Count>{0, 2, 4, 6}));
  std::vector<Count> matrix(16);
  for (std::size_t i = 0; i < 16; ++i) matrix[i] = static_cast<Count>(i);
  const CollectiveSpec quarter = scaled_spec(make_spec_v(CollectiveKind::kAlltoallv, 4, matrix), 2);
  EXPECT_EQ(quarter.counts, (std::vector<Count>{0, 2, 8, 10}));
  const CollectiveSpec regular = scaled_spec(make_spec(CollectiveKind::kAllgather, 100, 9), 10);
  EXPECT_EQ(regular.count, 9);
  EXPECT_NO_THROW(validate(half));
  EXPECT_NO_THROW(validate(quarter));
}

// One rank's row and column of an alltoallv (counts_of) say nothing of the other ranks' at
// another p: no scaled spec, so no estimate beyond the ranks it can build (the caller builds).
TEST(Footprint, OneRanksAlltoallvCountsDoNotScale) {
  CollectiveSpec own;
  own.kind = CollectiveKind::kAlltoallv;
  own.nranks = 200;
  own.counts.assign(400, 3);
  own.counts_of = 5;
  validate(own);
  try {
    scaled_spec(own, 32);
    FAIL() << "scaled one rank's counts";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(rank 5's row and column) do not scale to 32 ranks"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(estimate_ops(algorithms::lookup("linear", own.kind), own, {}, CostModel{}));
  own.nranks = 100;  // built, not scaled
  own.counts.resize(200);
  EXPECT_TRUE(estimate_ops(algorithms::lookup("linear", own.kind), own, {}, CostModel{}));
}

}  // namespace
}  // namespace optcoll
