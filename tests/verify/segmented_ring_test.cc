// SPDX-License-Identifier: Apache-2.0
// File: allreduce/ring_segmented with explicit segment sizes (the registry suites build only
// the "auto" default, one segment under their model): every segmentation verifies clean,
// the resolved segment is recorded, and a segment < 1 is refused.
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/verify/verify.h"

namespace optcoll {
namespace {

using algorithms::Params;

TEST(RingSegmented, EverySegmentationVerifies) {
  for (const Rank p : {1, 2, 3, 5, 8}) {
    for (const Count n : {0, 1, 7, 40}) {
      for (const Count segment : {1, 3, 8, 100}) {
        Params params;
        params.set("segment", std::to_string(segment));
        const Schedule s = algorithms::build("allreduce/ring_segmented",
                                             make_spec(CollectiveKind::kAllreduce, p, n), params);
        const VerifyReport report = verify(s);
        EXPECT_TRUE(report.ok()) << "p=" << p << " n=" << n << " segment=" << segment << "\n"
                                 << report.summary();
        EXPECT_EQ(s.params, "segment=" + std::to_string(segment));
      }
    }
  }
}

TEST(RingSegmented, AutoWithoutOverlapIsOneSegment) {
  const Schedule s =
      algorithms::build("allreduce/ring_segmented", make_spec(CollectiveKind::kAllreduce, 4, 1000));
  EXPECT_EQ(s.params, "segment=1000");
}

TEST(RingSegmented, AutoWithOverlapFollowsTheFormula) {
  // k = sqrt(nγ / (2pα)) = sqrt(12800·2 / (2·4·2)) = sqrt(1600) = 40 segments of 320.
  CostModel model;
  model.alpha = 2;
  model.gamma = 2;
  model.overlap = true;
  const Schedule s = algorithms::build("allreduce/ring_segmented",
                                       make_spec(CollectiveKind::kAllreduce, 4, 12800), {}, model);
  EXPECT_EQ(s.params, "segment=320");
}

TEST(RingSegmented, RefusesAnEmptySegment) {
  const auto& info = algorithms::lookup("ring_segmented", CollectiveKind::kAllreduce);
  const auto spec = make_spec(CollectiveKind::kAllreduce, 4, 10);
  EXPECT_TRUE(info.why_not(spec, Params::parse("segment=0")).has_value());
  EXPECT_FALSE(info.why_not(spec, Params::parse("segment=2")).has_value());
  auto noncommutative = spec;
  noncommutative.commutative = false;
  EXPECT_TRUE(info.why_not(noncommutative, {}).has_value());
}

}  // namespace
}  // namespace optcoll
