// SPDX-License-Identifier: Apache-2.0
// File: gather(v)/optimal and scatter(v)/optimal planned under a non-homogeneous (pair) model
// (the non-homogeneous DP, docs/math/gather-scatter-trees.md §3.3): the schedules verify and
// deliver every block on threads.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"

namespace optcoll::testing {
namespace {

TEST(PairModelTrees, OptimalTreesRunOnThreads) {
  std::mt19937_64 rng(41);
  const Rank p = 9;
  CostModel model;
  model.copy = 1;
  model.pair_nranks = p;
  for (Rank s = 0; s < p; ++s) {
    for (Rank t = 0; t < p; ++t) {
      // Two "nodes" (ranks 0..4, 5..8), slow across, with random spread.
      const bool same = (s < 5) == (t < 5);
      model.pair_alpha.push_back(static_cast<Time>((same ? 2 : 50) + rng() % 10));
      model.pair_beta.push_back(static_cast<Time>((same ? 1 : 3) + rng() % 2));
    }
  }
  const std::vector<Count> counts{3, 0, 7, 1, 12, 5, 0, 9, 4};
  int runs = 0;
  for (const auto kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
    for (const Rank root : {0, 4, 8}) {
      const auto spec = make_spec_v(kind, p, counts, root);
      const auto schedule =
          algorithms::build(std::string(collective_name(kind)) + "/optimal", spec, {}, model);
      const auto report = verify(schedule);
      ASSERT_TRUE(report.ok()) << report.summary();
      const Datatype type = Datatype::int64();
      const auto inputs = make_contributions(spec, type.bytes, fill_integers<std::int64_t>(5));
      const auto expected =
          reference_outputs(spec, type.bytes, inputs, combine_sum<std::int64_t>());
      const auto outputs =
          run_schedule(shared_world(p), schedule, type, ReduceOp::builtin("sum", type), inputs);
      for (Rank r = 0; r < p; ++r) {
        const auto i = static_cast<std::size_t>(r);
        EXPECT_EQ(first_difference(outputs[i], expected[i], type.bytes), "")
            << collective_name(kind) << " root " << root << " rank " << r;
      }
      ++runs;
    }
  }
  EXPECT_EQ(runs, 6);
}

}  // namespace
}  // namespace optcoll::testing
