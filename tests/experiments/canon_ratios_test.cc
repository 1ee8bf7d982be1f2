// SPDX-License-Identifier: Apache-2.0
// File: experiment canon-ratios (quick, n <= 300) against the independently computed
// Figure 2 values (docs/math/reduction-overlap.md §6).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "optcoll/experiments/experiment.h"

namespace optcoll::experiments {
namespace {

TEST(CanonRatios, QuickRunMatchesTheSpec) {
  ExperimentOptions options;
  options.quick = true;
  const auto result = find_experiment("canon-ratios").run(options);
  const auto doc = nlohmann::json::parse(result.json);
  ASSERT_EQ(doc["curves"].size(), 4u);
  // Binomial strategy at d = c, tie = highest index: 1.4 first reached at n = 86..89.
  EXPECT_NEAR(doc["curves"][1]["max_ratio"].get<double>(), 1.4, 1e-12);
  EXPECT_EQ(doc["curves"][1]["first_n"].get<int>(), 86);
  EXPECT_EQ(doc["curves"][1]["last_n"].get<int>(), 89);
  // Fibonacci strategy at (1, 0), tie = lowest index: 3/2 at n = 4 already.
  EXPECT_NEAR(doc["curves"][2]["max_ratio"].get<double>(), 1.5, 1e-12);
  EXPECT_EQ(doc["curves"][2]["first_n"].get<int>(), 4);
  // Every ratio is within the guarantees (Thms 18, 19: at most 2).
  for (const auto& c : doc["curves"]) EXPECT_LE(c["max_ratio"].get<double>(), 2.0);
  EXPECT_NE(result.table.find("| 100 | 7 | 11 | 14 | 13 | 7 | 7 | 7 | 10 |"), std::string::npos)
      << result.table;
}

}  // namespace
}  // namespace optcoll::experiments
