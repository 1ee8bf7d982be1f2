// SPDX-License-Identifier: Apache-2.0
// File: builds for one rank (builder.h, OneRankBuild) against whole builds. The kept rank's
// program must be the whole build's, op for op (actions, dependencies, seq, release times)
// with the same scratch, and every other program empty: every registry algorithm over the
// registry grid (ranks 1-64, roots, count patterns with zeros, both operators, reproducible
// reductions), the node-aware ones over placements, and the phase compositions auto builds.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/placement.h"
#include "optcoll/plan/search.h"
#include "optcoll/schedule/builder.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

// The ranks whose programs are checked alone: the first, the middle and the last.
std::vector<Rank> kept_ranks(Rank p) {
  std::vector<Rank> out{0};
  if (p / 2 != 0) out.push_back(p / 2);
  if (p - 1 != p / 2 && p - 1 != 0) out.push_back(p - 1);
  return out;
}

// Empty when `one` is `whole` reduced to rank r's program; else what differs first.
std::string difference(const Schedule& whole, const Schedule& one, Rank r) {
  if (one.ranks.size() != whole.ranks.size()) {
    return fmt::format("{} programs, the whole build has {}", one.ranks.size(), whole.ranks.size());
  }
  if (one.algorithm != whole.algorithm || one.params != whole.params) {
    return fmt::format("made as {} ({}), the whole build as {} ({})", one.algorithm, one.params,
                       whole.algorithm, whole.params);
  }
  for (std::size_t q = 0; q < whole.ranks.size(); ++q) {
    const RankProgram& kept = one.ranks[q];
    const RankProgram& expected = whole.ranks[q];
    if (static_cast<Rank>(q) != r) {
      if (!kept.ops.empty()) return fmt::format("rank {} has {} ops", q, kept.ops.size());
      continue;
    }
    if (kept.scratch_count != expected.scratch_count) {
      return fmt::format("rank {} scratch {}, the whole build's {}", q, kept.scratch_count,
                         expected.scratch_count);
    }
    if (kept.ops.size() != expected.ops.size()) {
      return fmt::format("rank {} has {} ops, the whole build's {}", q, kept.ops.size(),
                         expected.ops.size());
    }
    for (std::size_t i = 0; i < kept.ops.size(); ++i) {
      if (!(kept.ops[i] == expected.ops[i])) return fmt::format("rank {} op {} differs", q, i);
    }
  }
  return {};
}

// Builds `build` whole and for each kept rank; counts the programs compared.
template <typename Build>
int compare_one_rank_builds(const Build& build, Rank p, const std::string& what) {
  const Schedule whole = build();
  int compared = 0;
  for (const Rank r : kept_ranks(p)) {
    const Schedule one = [&] {
      const OneRankBuild only(r);
      return build();
    }();
    EXPECT_EQ(difference(whole, one, r), "") << what << ", rank " << r;
    ++compared;
  }
  return compared;
}

class OneRankBuilds : public ::testing::TestWithParam<CollectiveKind> {};

TEST_P(OneRankBuilds, KeepTheWholeBuildsProgram) {
  int compared = 0;
  for (const auto& c : testing::registry_cases(testing::full_rank_grid())) {
    if (c.spec.kind != GetParam()) continue;
    compared += compare_one_rank_builds([&] { return algorithms::build(*c.algorithm, c.spec); },
                                        c.spec.nranks, c.name);
  }
  EXPECT_GT(compared, 0);
  RecordProperty("programs_compared", compared);
}

INSTANTIATE_TEST_SUITE_P(ByCollective, OneRankBuilds, ::testing::ValuesIn(all_collectives()),
                         [](const auto& test) { return std::string(collective_name(test.param)); });

// The node-aware algorithms need a placement in their model: blocks, uneven blocks, round
// robin, one node, one rank per node.
TEST(OneRankBuild, NodeAwareAlgorithmsOverPlacements) {
  int compared = 0;
  for (const Rank p : {1, 2, 5, 8, 13, 16}) {
    std::vector<Placement> placements{block_placement(1, p), block_placement(p, 1)};
    if (p >= 4) placements.push_back(even_block_placement(p, 3));
    Placement round_robin;
    for (Rank r = 0; r < p; ++r) round_robin.node_of.push_back(r % std::min<Rank>(p, 3));
    placements.push_back(round_robin);
    for (const Placement& placement : placements) {
      CostModel model;
      model.inter_alpha = 10;
      model.inter_beta = 4;
      model.placement = placement;
      for (const auto& info : algorithms::all_algorithms()) {
        if (!algorithms::patterns::is_node_aware(info)) continue;
        for (const CollectiveSpec& spec : testing::kind_grid_specs(info.collective, p)) {
          if (algorithms::why_not(info, spec, algorithms::resolve_params(info, {}))) continue;
          compared += compare_one_rank_builds(
              [&] { return algorithms::build(info, spec, {}, model); }, p,
              fmt::format("{} {} on {}", info.name, describe(spec), to_string(placement)));
        }
      }
    }
  }
  EXPECT_GT(compared, 0);
}

// auto's compositions (compose.h): the phases are built apart and stitched.
TEST(OneRankBuild, PhaseCompositions) {
  const CostModel model;
  const struct {
    CollectiveKind kind;
    const char* first;
    const char* second;
  } pairs[] = {
      {CollectiveKind::kReduceScatterBlock, "reduce/binomial", "scatter/binomial"},
      {CollectiveKind::kAllreduce, "reduce/binomial", "bcast/binomial"},
      {CollectiveKind::kAllgather, "gather/binomial", "bcast/binomial"},
  };
  int compared = 0;
  for (const auto& pair : pairs) {
    for (const Rank p : {1, 2, 7, 16, 33}) {
      for (const CollectiveSpec& spec : testing::kind_grid_specs(pair.kind, p)) {
        compared += compare_one_rank_builds(
            [&] { return search::build_composed(spec, model, pair.first, {}, pair.second, {}); }, p,
            fmt::format("compose({}, {}) {}", pair.first, pair.second, describe(spec)));
      }
    }
  }
  EXPECT_GT(compared, 0);
}

TEST(OneRankBuild, EndsWithItsScopeAndNests) {
  EXPECT_EQ(OneRankBuild::current(), kNoRank);
  {
    const OneRankBuild outer(3);
    EXPECT_EQ(OneRankBuild::current(), 3);
    {
      const OneRankBuild inner(1);
      EXPECT_EQ(OneRankBuild::current(), 1);
    }
    EXPECT_EQ(OneRankBuild::current(), 3);
  }
  EXPECT_EQ(OneRankBuild::current(), kNoRank);
  // After the scope, builds are whole again.
  const Schedule s =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 4, 8));
  for (const RankProgram& program : s.ranks) EXPECT_FALSE(program.ops.empty());
}

}  // namespace
}  // namespace optcoll
