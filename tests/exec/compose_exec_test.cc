// SPDX-License-Identifier: Apache-2.0
// File: composed schedules (plan/compose.h, what `auto` may return) run on threads with real
// data and match the naive reference, for every pair of phase algorithms — including
// pipelined phases cut into one-element segments, whose many first-phase sinks meet in one
// join op before the second phase starts.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/plan/compose.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr CollectiveKind kComposed[] = {
    CollectiveKind::kAllreduce,          CollectiveKind::kAllgather,
    CollectiveKind::kAllgatherv,         CollectiveKind::kReduceScatter,
    CollectiveKind::kReduceScatterBlock, CollectiveKind::kBcast};

CollectiveSpec spec_of(CollectiveKind kind, Rank p, bool commutative) {
  CollectiveSpec spec;
  if (takes_counts(kind)) {
    std::vector<Count> counts(static_cast<std::size_t>(p));
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = i % 3 == 1 ? 0 : 3 + i % 4;
    spec = make_spec_v(kind, p, counts);
  } else {
    spec = make_spec(kind, p, 7, is_rooted(kind) ? p / 2 : 0);
  }
  spec.commutative = commutative;
  return spec;
}

// The default parameters, and one-element segments where the algorithm pipelines.
std::vector<algorithms::Params> parameter_sets(const algorithms::AlgorithmInfo& info) {
  std::vector<algorithms::Params> sets{{}};
  for (const auto& param : info.params()) {
    if (param.name == "segment") sets.push_back(algorithms::Params::parse("segment=1"));
  }
  return sets;
}

void check(const CollectiveSpec& spec, const Schedule& schedule) {
  const bool matrices = !spec.commutative;
  const Datatype type = matrices ? mat2_type() : Datatype::int64();
  const ReduceOp op = matrices ? mat2_product() : ReduceOp::builtin("sum", type);
  const auto inputs = make_contributions(spec, type.bytes,
                                         matrices ? fill_mat2(7) : fill_integers<std::int64_t>(7));
  const auto expected =
      reference_outputs(spec, type.bytes, inputs,
                        matrices ? ElementCombine(mat2_multiply) : combine_sum<std::int64_t>());
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  const auto outputs = run_schedule(shared_world(spec.nranks), schedule, type, op, inputs, options);
  for (Rank r = 0; r < spec.nranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    ASSERT_EQ(first_difference(outputs[i], expected[i], type.bytes), "")
        << schedule.algorithm << " " << schedule.params << " rank " << r;
  }
}

TEST(ComposeExec, EveryPairOfPhasesRunsCorrectlyOnThreads) {
  const CostModel model;
  int runs = 0;
  int pair = 0;  // the sanitizer builds run about a quarter of the pairs (testing::run_trial)
  for (const auto kind : kComposed) {
    for (const Rank p : {3, 8}) {
      for (const bool commutative : {true, false}) {
        if (!commutative && !is_reduction(kind)) continue;
        const auto spec = spec_of(kind, p, commutative);
        const auto composition = composition_for(spec);
        ASSERT_TRUE(composition.has_value()) << describe(spec);
        for (const auto* fa : algorithms::algorithms_for(composition->first.kind)) {
          for (const auto* fb : algorithms::algorithms_for(composition->second.kind)) {
            for (const auto& pa : parameter_sets(*fa)) {
              for (const auto& pb : parameter_sets(*fb)) {
                if (fa->why_not(composition->first, algorithms::resolve_params(*fa, pa)) ||
                    fb->why_not(composition->second, algorithms::resolve_params(*fb, pb))) {
                  continue;
                }
                if (!testing::run_trial(pair++)) continue;
                const auto first = algorithms::build(*fa, composition->first, pa, model);
                const auto second = algorithms::build(*fb, composition->second, pb, model);
                check(spec, compose(spec, *composition, first, second));
                ++runs;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, testing::kSanitizedBuild ? 125 : 500);
}

}  // namespace
}  // namespace optcoll
