// SPDX-License-Identifier: Apache-2.0
// File: every registry algorithm verifies clean on the whole registry grid (docs/design.md,
// Verifier choices).
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

class RegistryVerify : public ::testing::TestWithParam<testing::RegistryCase> {};

TEST_P(RegistryVerify, VerifiesClean) {
  const auto& c = GetParam();
  const Schedule s = algorithms::build(*c.algorithm, c.spec);
  const VerifyReport report = verify(s);
  EXPECT_TRUE(report.ok()) << describe(c.spec) << "\n" << report.summary();
  EXPECT_EQ(report.ops, s.op_count());
  EXPECT_TRUE(report.skipped.empty());
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryVerify,
                         ::testing::ValuesIn(testing::registered_cases(testing::full_rank_grid(),
                                                                       /*thin_large=*/false)),
                         testing::case_name);

}  // namespace
}  // namespace optcoll
