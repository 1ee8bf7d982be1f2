// SPDX-License-Identifier: Apache-2.0
// File: the size limits, end to end: p = 2^20 ranks built and simulated, and counts up to
// 2^40 elements per rank (totals up to 2^46) priced without overflow. The expectation is
// independent of the simulator's arithmetic: with alpha = 0 every cost is linear in the
// message size, so scaling every count by 2^k must scale the makespan by exactly 2^k (all
// quantities are powers of two times small integers, exact in double precision).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

constexpr Rank kP = 64;

// A spec of `kind` for kP ranks in which every block holds `block` elements (bcast, reduce,
// allreduce: the whole vector; alltoall: each rank's row; rooted kinds: root kP/2).
CollectiveSpec uniform_spec(CollectiveKind kind, Count block) {
  const Rank root = is_rooted(kind) ? kP / 2 : 0;
  switch (kind) {
    case CollectiveKind::kScatterv:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kAllgatherv:
    case CollectiveKind::kReduceScatter:
      return make_spec_v(kind, kP, std::vector<Count>(kP, block), root);
    case CollectiveKind::kAlltoallv:
      return make_spec_v(kind, kP, std::vector<Count>(kP * kP, block / kP), root);
    case CollectiveKind::kAlltoall:
      return make_spec(kind, kP, block / kP, root);
    default:
      return make_spec(kind, kP, block, root);
  }
}

CostModel linear_model() {
  CostModel m;
  m.alpha = 0;
  m.beta = 0x1p-30;
  m.gamma = 0x1p-33;
  m.copy = 0x1p-34;
  return m;
}

// Every parameterless registry algorithm (parameters such as a segment size may change the
// schedule's shape with the message size) at 2^10 and 2^40 elements per rank.
TEST(Limits, CountsUpTo2To40ScaleExactly) {
  const CostModel model = linear_model();
  constexpr Count kSmall = Count{1} << 10;
  constexpr Count kLarge = Count{1} << 40;
  int checked = 0;
  for (const auto& info : algorithms::all_algorithms()) {
    if (!info.params().empty() || info.collective == CollectiveKind::kBarrier) continue;
    const CollectiveSpec small = uniform_spec(info.collective, kSmall);
    const CollectiveSpec large = uniform_spec(info.collective, kLarge);
    ASSERT_NO_THROW(validate(large)) << info.name;
    if (info.why_not(large, algorithms::resolve_params(info, {}))) continue;
    const SimResult a = simulate(algorithms::build(info, small, {}, model), model);
    const SimResult b = simulate(algorithms::build(info, large, {}, model), model);
    ASSERT_EQ(a.status, SimStatus::kOk) << info.name;
    ASSERT_EQ(b.status, SimStatus::kOk) << info.name;
    EXPECT_GT(a.makespan, 0) << info.name;
    EXPECT_EQ(b.makespan, a.makespan * static_cast<double>(kLarge / kSmall)) << info.name;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

// 2^20 ranks, 2^40 elements: binomial broadcast in ceil(log2 p) = 20 rounds.
TEST(Limits, MillionRanksBinomialBroadcast) {
  constexpr Rank kRanks = Rank{1} << 20;
  constexpr Count kCount = Count{1} << 40;
  CostModel model;
  model.alpha = 0x1p-20;
  model.beta = 0x1p-30;
  const Schedule s =
      algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, kRanks, kCount, 12345));
  const SimResult r = simulate(s, model);
  ASSERT_EQ(r.status, SimStatus::kOk);
  EXPECT_EQ(r.ops, static_cast<std::size_t>(2 * (kRanks - 1)));
  EXPECT_DOUBLE_EQ(r.makespan, 20 * (model.alpha + static_cast<double>(kCount) * model.beta));
}

}  // namespace
}  // namespace optcoll
