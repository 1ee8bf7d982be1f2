// SPDX-License-Identifier: Apache-2.0
// File: what segmenting the ring allreduce buys in the simulator: with overlap and a costly
// reduction, segments hide the reduction behind later transfers; without overlap they only
// add latency (2(p-1)α per extra segment at most).
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

Time run(Count segment, const CostModel& model, Rank p, Count n) {
  algorithms::Params params;
  params.set("segment", std::to_string(segment));
  const auto spec = make_spec(CollectiveKind::kAllreduce, p, n);
  const auto result =
      simulate(algorithms::build("allreduce/ring_segmented", spec, params, model), model);
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

TEST(RingSegmentedSim, OneSegmentIsTheRing) {
  // 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ with p | n, copy = 0.
  CostModel model;
  model.alpha = 100;
  model.beta = 1;
  model.gamma = 3;
  for (const Rank p : {2, 4, 7}) {
    const Count n = 28 * p;
    EXPECT_EQ(run(n, model, p, n), 2 * (p - 1) * 100 + 2 * (p - 1) * 28 + (p - 1) * 28 * 3)
        << "p=" << p;
  }
}

TEST(RingSegmentedSim, SegmentsHideTheReductionOnlyWithOverlap) {
  CostModel model;
  model.alpha = 1;
  model.beta = 1;
  model.gamma = 4;  // reduction slower than the wire
  const Rank p = 4;
  const Count n = 4096;
  model.overlap = false;
  const Time whole = run(n, model, p, n);
  EXPECT_GE(run(n / 8, model, p, n), whole);  // more α, nothing hidden
  model.overlap = true;
  const Time whole_overlap = run(n, model, p, n);
  EXPECT_LT(run(n / 8, model, p, n), whole_overlap);
}

}  // namespace
}  // namespace optcoll
