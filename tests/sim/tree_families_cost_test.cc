// SPDX-License-Identifier: Apache-2.0
// File: the tree families' costs in cases the registry table (closed_form_test.cc) does not
// reach: k-nomial trees at p = k^L, explicit segment sizes, non-commutative reductions.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::kAlpha;
using testing::kBeta;
using testing::kGamma;
CostModel model() { return testing::textbook_model(); }

Time run(std::string_view name, const CollectiveSpec& spec, const algorithms::Params& params) {
  const auto s = algorithms::build(name, spec, params, model());
  const auto result = simulate(s, model());
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

TEST(TreeFamilies, KnomialIsExactForPowersOfTheRadix) {
  // L(k-1) one-port slots of the whole message (plus γn per slot for reduce).
  struct Case {
    Rank k, p, levels;
  };
  for (const Case c :
       {Case{3, 9, 2}, Case{3, 27, 3}, Case{4, 16, 2}, Case{4, 64, 3}, Case{5, 25, 2}}) {
    algorithms::Params params;
    params.set("radix", std::to_string(c.k));
    for (const Count n : {1, 50}) {
      const Time slots = static_cast<Time>(c.levels * (c.k - 1));
      EXPECT_EQ(run("bcast/knomial", make_spec(CollectiveKind::kBcast, c.p, n, 1), params),
                slots * (kAlpha + n * kBeta));
      EXPECT_EQ(run("reduce/knomial", make_spec(CollectiveKind::kReduce, c.p, n, 2), params),
                slots * (kAlpha + n * (kBeta + kGamma)));
    }
  }
}

TEST(TreeFamilies, ExplicitSegmentsFollowThePipelineFormula) {
  // Chain of p ranks, S equal segments of e elements: (p - 2 + S)(α + e·β).
  for (const Rank p : {2, 5, 12}) {
    for (const Count e : {1, 10, 40}) {
      const Count n = 120;
      const Count segments = n / e;
      algorithms::Params params;
      params.set("segment", std::to_string(e));
      const auto spec = make_spec(CollectiveKind::kBcast, p, n, p - 1);
      EXPECT_EQ(run("bcast/pipelined_chain", spec, params),
                static_cast<Time>(p - 2 + segments) * (kAlpha + e * kBeta))
          << "p=" << p << " e=" << e;
      EXPECT_EQ(run("reduce/pipelined_chain", make_spec(CollectiveKind::kReduce, p, n, 1), params),
                static_cast<Time>(p - 2 + segments) * (kAlpha + e * (kBeta + kGamma)))
          << "p=" << p << " e=" << e;
      const auto s = algorithms::build("bcast/pipelined_chain", spec, params, model());
      EXPECT_EQ(s.params, "segment=" + std::to_string(e));
    }
  }
}

TEST(TreeFamilies, SegmentParameterEdges) {
  const auto spec = make_spec(CollectiveKind::kBcast, 6, 50);
  algorithms::Params huge;
  huge.set("segment", "9000000000000000000");  // one segment, no overflow
  EXPECT_EQ(algorithms::build("bcast/pipelined_chain", spec, huge, model()).params, "segment=50");
  for (const char* bad : {"0", "-3", "x"}) {
    algorithms::Params params;
    params.set("segment", bad);
    EXPECT_THROW(algorithms::build("bcast/pipelined_chain", spec, params, model()), Error) << bad;
  }
  algorithms::Params radix;
  radix.set("radix", "1");
  EXPECT_THROW(algorithms::build("bcast/knomial", spec, radix, model()), Error);
}

TEST(TreeFamilies, AutoSegmentBeatsEveryFixedSegment) {
  const auto spec = make_spec(CollectiveKind::kBcast, 16, 3000);
  const Time best = run("bcast/pipelined_binary", spec, {});
  for (const Count e : {1, 7, 30, 100, 300, 1000, 3000}) {
    algorithms::Params params;
    params.set("segment", std::to_string(e));
    EXPECT_LE(best, run("bcast/pipelined_binary", spec, params)) << "segment=" << e;
  }
}

TEST(TreeFamilies, NonCommutativeInorderReduce) {
  // p = 7, root 3: in-order tree 3 ─ {1 ─ {0, 2}, 5 ─ {4, 6}}: every inner rank takes two
  // messages in turn: slots: rank 1 and 5 at 2, the root at max(0, 2) + 1 = 3, then 4.
  auto spec = make_spec(CollectiveKind::kReduce, 7, 10, 3);
  spec.commutative = false;
  EXPECT_EQ(run("reduce/binary", spec, {}), 4 * (kAlpha + 10 * (kBeta + kGamma)));
  // Split chain, root in the middle of 7 ranks: both chains of 3 into the root; unpipelined
  // (segment = n): the root's second message waits for its first: 3 + 1 = 4 slots.
  algorithms::Params whole;
  whole.set("segment", "10");
  EXPECT_EQ(run("reduce/pipelined_chain", spec, whole), 4 * (kAlpha + 10 * (kBeta + kGamma)));
}

}  // namespace
}  // namespace optcoll
