// SPDX-License-Identifier: Apache-2.0
// File: the double binary tree algorithms (bcast, reduce, allreduce /double_binary) against
// their header formulas at every p up to 70 and some larger p, any root, explicit segment
// sizes that do and do not divide n. D(p) is written out here from its closed form, not
// taken from the schedule code.
#include <algorithm>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::kAlpha;
using testing::kBeta;
using testing::kGamma;
CostModel model() { return testing::textbook_model(); }

// D(p): the steps one segment takes: 2·floor(log2(p−1)), one more when p − 1 ≡ 2 (mod 4)
// or p − 1 = 2^k − 1; p = 1, 2, 3: 0, 1, 2 (p = 3 is a chain in both trees).
std::int64_t depth(Rank p) {
  if (p <= 3) return p - 1;
  const std::int64_t q = p - 1;
  std::int64_t levels = 0;
  for (std::int64_t x = q; x > 1; x /= 2) ++levels;
  const bool extra = q % 4 == 2 || (q & (q + 1)) == 0;
  return 2 * levels + (extra ? 1 : 0);
}

// (D − 1)(α + ceil(n/S)·c) + Sα + n·c.
Time pipeline(Rank p, Count n, Count segments, Time c) {
  if (p == 1 || n == 0) return 0;
  const Count largest = (n + segments - 1) / segments;
  return static_cast<Time>(depth(p) - 1) * (kAlpha + static_cast<Time>(largest) * c) +
         static_cast<Time>(segments) * kAlpha + static_cast<Time>(n) * c;
}

Time simulated(std::string_view name, const CollectiveSpec& spec, Count segment) {
  algorithms::Params params;
  params.set("segment", std::to_string(segment));
  const auto result = simulate(algorithms::build(name, spec, params, model()), model());
  EXPECT_EQ(result.status, SimStatus::kOk) << name;
  return result.makespan;
}

struct Case {
  Count n;
  Count segment;
};
// Equal segments (S | n), unequal ones, one segment, one element per segment.
constexpr Case kCases[] = {{60, 10}, {60, 7}, {37, 37}, {13, 1}, {100, 9}, {1, 1}, {1000, 37}};

std::vector<Rank> ranks_to_check() {
  std::vector<Rank> ps;
  for (Rank p = 1; p <= 70; ++p) ps.push_back(p);
  for (const Rank p : {99, 100, 127, 128, 129, 200}) ps.push_back(p);
  return ps;
}

TEST(DoubleTree, BcastMatchesItsFormula) {
  for (const Rank p : ranks_to_check()) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      for (const Case& c : kCases) {
        const Count segments = (c.n + c.segment - 1) / c.segment;
        EXPECT_EQ(simulated("bcast/double_binary", make_spec(CollectiveKind::kBcast, p, c.n, root),
                            c.segment),
                  pipeline(p, c.n, segments, kBeta))
            << "p=" << p << " root=" << root << " n=" << c.n << " segment=" << c.segment;
      }
    }
  }
}

TEST(DoubleTree, ReduceMatchesItsFormula) {
  for (const Rank p : ranks_to_check()) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      for (const Case& c : kCases) {
        const Count segments = (c.n + c.segment - 1) / c.segment;
        EXPECT_EQ(simulated("reduce/double_binary",
                            make_spec(CollectiveKind::kReduce, p, c.n, root), c.segment),
                  pipeline(p, c.n, segments, kBeta + kGamma))
            << "p=" << p << " root=" << root << " n=" << c.n << " segment=" << c.segment;
      }
    }
  }
}

TEST(DoubleTree, AllreduceIsReduceThenBcast) {
  for (const Rank p : ranks_to_check()) {
    for (const Case& c : kCases) {
      const Count segments = (c.n + c.segment - 1) / c.segment;
      EXPECT_EQ(simulated("allreduce/double_binary", make_spec(CollectiveKind::kAllreduce, p, c.n),
                          c.segment),
                pipeline(p, c.n, segments, kBeta + kGamma) + pipeline(p, c.n, segments, kBeta))
          << "p=" << p << " n=" << c.n << " segment=" << c.segment;
    }
  }
}

}  // namespace
}  // namespace optcoll
