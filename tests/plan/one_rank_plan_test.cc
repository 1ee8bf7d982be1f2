// SPDX-License-Identifier: Apache-2.0
// File: plans for one rank (PlanOptions::only_rank, select.h): what an MPI process plans. A
// choice the formulas priced whose whole schedule would be large is built for the rank alone
// and not simulated; anything smaller is the whole plan with the other programs emptied. The
// kept program is the whole plan's either way.
#include <string>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"
#include "optcoll/model/placement.h"
#include "optcoll/plan/search_steps.h"
#include "optcoll/plan/select.h"

namespace optcoll {
namespace {

PlanOptions for_rank(Rank r) {
  PlanOptions options;
  options.only_rank = r;
  return options;
}

void expect_only_program(const Plan& one, const Plan& whole, Rank r) {
  ASSERT_EQ(one.only_rank, std::optional<Rank>(r));
  ASSERT_EQ(one.schedule.ranks.size(), whole.schedule.ranks.size());
  EXPECT_EQ(one.algorithm, whole.algorithm);
  EXPECT_EQ(one.params.to_string(), whole.params.to_string());
  for (std::size_t q = 0; q < one.schedule.ranks.size(); ++q) {
    if (q == static_cast<std::size_t>(r)) {
      EXPECT_TRUE(one.schedule.ranks[q] == whole.schedule.ranks[q]) << "rank " << q;
    } else {
      EXPECT_TRUE(one.schedule.ranks[q].ops.empty()) << "rank " << q;
    }
  }
}

// Large: alltoall of 8 KiB blocks at p = 1,024 has about 2 M ops in all, its choice priced
// by an exact formula under the reference cluster; the plan for a rank is that rank's
// program, at the formula's time, which is the whole plan's.
TEST(OneRankPlan, ALargeChoiceIsBuiltForTheRankAlone) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAlltoall, 1024, 1024);
  spec.elem_bytes = 8;
  const CostModel model = reference_cluster_model();
  const Plan whole = plan(spec, model);
  ASSERT_GT(whole.schedule.op_count(), kOneRankBuildWork);
  // The whole plan did not simulate it either (kResimulatedExactOps): the exact formula's.
  ASSERT_GT(whole.schedule.op_count(), kResimulatedExactOps);
  for (const Candidate& c : whole.candidates) {
    if (c.algorithm == whole.algorithm) {
      EXPECT_EQ(c.how, Evaluation::kExactEstimate);
    }
  }
  for (const Rank r : {0, 517, 1023}) {
    const Plan one = plan(spec, model, "auto", {}, for_rank(r));
    expect_only_program(one, whole, r);
    EXPECT_EQ(one.predicted_time, whole.predicted_time);
    EXPECT_EQ(one.schedule.op_count(), 2u * 1023u + 1u);  // and its own block's copy
  }
  // An explicit algorithm too.
  const Plan named_whole = plan(spec, model, "alltoall/pairwise");
  const Plan named_one = plan(spec, model, "alltoall/pairwise", {}, for_rank(3));
  expect_only_program(named_one, named_whole, 3);
}

// Where a whole build would take a minute and tens of gigabytes: p = 8,192, an alltoall of
// 134 M ops in all (linear: one rank's program has 2 (p - 1) + 1), and Bruck's of 940 M
// (small blocks).
TEST(OneRankPlan, ScalesWhereAWholeBuildCannot) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAlltoall, 8192, 1024);
  spec.elem_bytes = 8;
  const Plan linear = plan(spec, reference_cluster_model(), "auto", {}, for_rank(4000));
  EXPECT_EQ(linear.only_rank, std::optional<Rank>(4000));
  EXPECT_EQ(linear.schedule.op_count(), 2u * 8191u + 1u);
  EXPECT_GT(linear.predicted_time, 0);
  spec.count = 1;
  const Plan bruck = plan(spec, reference_cluster_model(), "auto", {}, for_rank(8191));
  EXPECT_EQ(bruck.algorithm, "alltoall/bruck");
  EXPECT_EQ(bruck.schedule.ranks[8191].ops.size(), bruck.schedule.op_count());
  EXPECT_GT(bruck.schedule.op_count(), 8192u);  // its 2p copies at least
}

// Small: the whole plan (simulated as ever), the other programs emptied.
TEST(OneRankPlan, ASmallChoiceIsTheWholePlansProgram) {
  const CostModel model = reference_cluster_model();
  for (const CollectiveKind kind : {CollectiveKind::kAllreduce, CollectiveKind::kAlltoall,
                                    CollectiveKind::kReduceScatterBlock}) {
    const CollectiveSpec spec = make_spec(kind, 12, 1000);
    const Plan whole = plan(spec, model);
    for (const Rank r : {0, 5, 11}) {
      const Plan one = plan(spec, model, "auto", {}, for_rank(r));
      expect_only_program(one, whole, r);
      // Its time: the same simulation, or the exact formula that equals it.
      EXPECT_NEAR(one.predicted_time, whole.predicted_time, 1e-9 * whole.predicted_time);
    }
  }
}

// Under a placement of 4,096 ranks the whole plan simulates recursive halving's 17 M ops
// (to confirm its formula) and builds alltoall/node_aware's 17 M to confirm its estimate:
// 13-45 s and 4.3-7 GB, 5 s and 3 GB. A plan for one rank does neither: it chooses by the
// estimates and builds its program alone.
TEST(OneRankPlan, SimulatesNoLargeScheduleUnderAPlacement) {
  CostModel model = reference_cluster_model();
  model.placement = block_placement(64, 64);
  const auto how_of = [](const Plan& p, const std::string& algorithm) {
    for (const Candidate& c : p.candidates) {
      if (c.algorithm == algorithm) return c.how;
    }
    return Evaluation::kNotApplicable;
  };
  CollectiveSpec rsb = make_spec(CollectiveKind::kReduceScatterBlock, 4096, 1024);
  rsb.elem_bytes = 8;
  const Plan one = plan(rsb, model, "auto", {}, for_rank(0));
  // Recursive halving has its two-level formula (patterns::ButterflyCosts) and wins by it;
  // the ring, which has none, keeps its estimate at the shared network's costs unsimulated.
  EXPECT_EQ(how_of(one, "reduce_scatter_block/recursive_halving"), Evaluation::kEstimated);
  EXPECT_EQ(one.algorithm, "reduce_scatter_block/recursive_halving");
  EXPECT_EQ(how_of(one, "reduce_scatter_block/ring"), Evaluation::kInterCosts);
  EXPECT_EQ(one.schedule.op_count(), one.schedule.ranks[0].ops.size());
  CollectiveSpec alltoall = make_spec(CollectiveKind::kAlltoall, 4096, 1024);
  alltoall.elem_bytes = 8;
  const Plan spread = plan(alltoall, model, "alltoall/node_aware", {}, for_rank(4095));
  EXPECT_EQ(spread.candidates.at(0).how, Evaluation::kEstimated);
  EXPECT_EQ(spread.schedule.op_count(), spread.schedule.ranks[4095].ops.size());
  EXPECT_GT(spread.schedule.op_count(), 0u);
}

// Under a placement the gather and scatter optimal trees run Träff's DP over all p ranks with
// per-pair costs, O(p^4) (search_steps.h, pair_cost_dp_work): at p = 256 a one-rank plan
// does not build gatherv/optimal to simulate it (before, 5 s of a 5.3 s plan; an allgather's
// composition of gather/optimal and bcast/optimal_ordered at p = 512 took 104 s); at p = 64,
// where the DP is cheap, it still does, and it can win there.
TEST(OneRankPlan, BuildsNoAllRanksPairCostTreeAtLargeP) {
  const auto how_of = [](const Plan& p, const std::string& algorithm) {
    for (const Candidate& c : p.candidates) {
      if (c.algorithm == algorithm) return c.how;
    }
    return Evaluation::kNotApplicable;
  };
  for (const Rank p : {64, 256}) {
    CostModel model = reference_cluster_model();
    model.placement = block_placement(p / 16, 16);
    const CollectiveSpec spec = make_spec_v(CollectiveKind::kGatherv, p,
                                            distribution_counts(Distribution::kRandom, p, 1000));
    const Plan one = plan(spec, model, "auto", {}, for_rank(0));
    EXPECT_EQ(how_of(one, "gatherv/optimal"),
              p == 64 ? Evaluation::kSimulated : Evaluation::kInterCosts)
        << "p = " << p;
  }
  CostModel model = reference_cluster_model();
  model.placement = block_placement(16, 16);
  const CollectiveSpec spec = make_spec(CollectiveKind::kGather, 256, 10);
  // Beyond what a plan for one rank builds (select.h), where the DP takes seconds.
  EXPECT_GT(search::pair_cost_dp_work(algorithms::lookup("optimal", spec.kind), spec, model),
            kOneRankBuildWork);
  EXPECT_EQ(search::pair_cost_dp_work(algorithms::lookup("binomial", spec.kind), spec, model), 0);
  EXPECT_EQ(search::pair_cost_dp_work(algorithms::lookup("optimal", spec.kind), spec,
                                      reference_cluster_model()),
            0);
}

TEST(OneRankPlan, ARankOutsideTheCallIsAnError) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kBcast, 8, 100);
  for (const Rank r : {-1, 8}) {
    try {
      plan(spec, reference_cluster_model(), "auto", {}, for_rank(r));
      FAIL() << r;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(std::string(e.what()),
                "a plan for rank " + std::to_string(r) + " of a 8-rank call: ranks are 0 to 7");
    }
  }
}

}  // namespace
}  // namespace optcoll
