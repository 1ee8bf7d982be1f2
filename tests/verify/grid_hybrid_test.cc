// SPDX-License-Identifier: Apache-2.0
// File: the hybrid (grid) algorithms with explicit dims and kinds: every grid shape and
// kinds pattern verifies clean (the registry suites only build the "auto" defaults), the
// parameters are recorded, bad values are refused with a reason, and "auto" picks the grid
// that Chan et al.'s formulas prefer (computed by hand below).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/verify/verify.h"

namespace optcoll {
namespace {

using algorithms::Params;

// Hand-listed grids (factors multiply to p), some with a factor 1 and non-powers of two.
const std::vector<std::pair<Rank, std::vector<std::string>>>& grids() {
  static const std::vector<std::pair<Rank, std::vector<std::string>>> list{
      {6, {"2x3", "3x2", "1x6", "6"}},
      {8, {"2x4", "4x2", "2x2x2", "8x1"}},
      {12, {"2x3x2", "3x4", "2x2x3"}},
      {30, {"2x3x5", "5x6"}},
  };
  return list;
}

std::vector<std::string> kinds_patterns(std::size_t dims) {
  std::vector<std::string> out;
  for (std::uint32_t mask = 0; mask < (1u << dims); ++mask) {
    std::string kinds;
    for (std::size_t i = 0; i < dims; ++i) kinds += ((mask >> i) & 1) ? 's' : 'l';
    out.push_back(kinds);
  }
  return out;
}

std::size_t dims_count(const std::string& dims) {
  return 1 + static_cast<std::size_t>(std::count(dims.begin(), dims.end(), 'x'));
}

void expect_clean(const std::string& name, const CollectiveSpec& spec, const Params& params) {
  const Schedule s = algorithms::build(name, spec, params);
  const VerifyReport report = verify(s);
  EXPECT_TRUE(report.ok()) << name << " " << params.to_string() << " " << describe(spec) << "\n"
                           << report.summary();
}

TEST(GridHybrid, TreeHybridsVerifyForEveryGridAndKinds) {
  for (const auto& [p, shapes] : grids()) {
    for (const auto& dims : shapes) {
      for (const auto& kinds : kinds_patterns(dims_count(dims))) {
        Params params;
        params.set("dims", dims);
        params.set("kinds", kinds);
        for (const Rank root : {Rank{0}, p / 2, p - 1}) {
          for (const Count n : {0, 7, 100}) {
            expect_clean("bcast/hybrid", make_spec(CollectiveKind::kBcast, p, n, root), params);
            expect_clean("reduce/hybrid", make_spec(CollectiveKind::kReduce, p, n, root), params);
          }
        }
      }
    }
  }
}

TEST(GridHybrid, RingHybridsVerifyForEveryGrid) {
  for (const auto& [p, shapes] : grids()) {
    std::vector<Count> irregular(static_cast<std::size_t>(p));
    for (std::size_t i = 0; i < irregular.size(); ++i) irregular[i] = (i * 5) % 4;  // zeros too
    for (const auto& dims : shapes) {
      Params params;
      params.set("dims", dims);
      for (const Count n : {0, 3}) {
        expect_clean("allgather/hybrid", make_spec(CollectiveKind::kAllgather, p, n), params);
        expect_clean("reduce_scatter_block/hybrid",
                     make_spec(CollectiveKind::kReduceScatterBlock, p, n), params);
      }
      expect_clean("allreduce/hybrid", make_spec(CollectiveKind::kAllreduce, p, 101), params);
      expect_clean("allgatherv/hybrid", make_spec_v(CollectiveKind::kAllgatherv, p, irregular),
                   params);
      expect_clean("reduce_scatter/hybrid",
                   make_spec_v(CollectiveKind::kReduceScatter, p, irregular), params);
    }
  }
}

TEST(GridHybrid, TwoDimensionalOptionsVerifyForEveryGrid) {
  for (const auto& [p, shapes] : grids()) {
    for (const auto& dims : shapes) {
      if (dims_count(dims) != 2) continue;
      Params params;
      params.set("dims", dims);
      for (const char* name :
           {"bcast/hybrid_2d_mst", "bcast/hybrid_2d_scatter_mst", "bcast/hybrid_2d_scatter"}) {
        expect_clean(name, make_spec(CollectiveKind::kBcast, p, 50, p - 1), params);
      }
    }
  }
}

TEST(GridHybrid, RecordsTheParameters) {
  const auto params = Params::parse("dims=2x4,kinds=ls");
  EXPECT_EQ(
      algorithms::build("bcast/hybrid", make_spec(CollectiveKind::kBcast, 8, 16), params).params,
      "dims=2x4,kinds=ls");
  EXPECT_EQ(algorithms::build("allgather/hybrid", make_spec(CollectiveKind::kAllgather, 8, 2),
                              Params::parse("dims=4x2"))
                .params,
            "dims=4x2");
}

TEST(GridHybrid, RefusesBadDims) {
  const auto spec = make_spec(CollectiveKind::kBcast, 8, 16);
  const auto& info = algorithms::lookup("hybrid", CollectiveKind::kBcast);
  const auto reason = [&](const char* text) {
    return info.why_not(spec, Params::parse(text)).value_or("");
  };
  EXPECT_NE(reason("dims=3x3").find("multiplies to 9"), std::string::npos);
  EXPECT_NE(reason("dims=2xq").find("positive integers"), std::string::npos);
  EXPECT_NE(reason("dims=2x4,kinds=lx").find("letters l"), std::string::npos);
  EXPECT_NE(reason("dims=2x4,kinds=lll").find("3 letters"), std::string::npos);
  EXPECT_NE(reason("kinds=ll").find("explicit dims"), std::string::npos);
  EXPECT_EQ(reason("dims=2x2x2,kinds=lsl"), "");
  const auto& option3 = algorithms::lookup("hybrid_2d_scatter", CollectiveKind::kBcast);
  EXPECT_TRUE(option3.why_not(spec, Params::parse("dims=2x2x2")).has_value());
  try {
    algorithms::build("bcast/hybrid", spec, Params::parse("dims=4x4"));
    ADD_FAILURE() << "dims=4x4 for p = 8 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotApplicable);
  }
}

TEST(GridHybrid, AutoPicksTheGridTheFormulaPrefers) {
  // p = 64, n = 10^6 bytes, alpha = 1e-5 s, beta = 1e-9 s/B (Chan et al.'s example).
  CostModel model;
  model.alpha = 1e-5;
  model.beta = 1e-9;
  model.per_byte = true;
  auto spec = make_spec(CollectiveKind::kBcast, 64, 250000);
  spec.elem_bytes = 4;
  // Option 3: (log2 p + r + c - 2)α + 2(p-1)/p·nβ: r + c is least for 8 x 8.
  EXPECT_EQ(algorithms::build("bcast/hybrid_2d_scatter", spec, {}, model).params, "dims=8x8");
  // Option 2: (log2 p + c - 1)α + (2(c-1) + log2 r)/c·nβ, in µs (α = 10, nβ = 1000):
  //   c = 4: 90 + 2500;  c = 8: 130 + 2125;  c = 16: 210 + 2000 = 2210;  c = 32: 370 + 1968.75.
  EXPECT_EQ(algorithms::build("bcast/hybrid_2d_scatter_mst", spec, {}, model).params, "dims=16x4");
  // Ring hybrids: Σ(d_i - 1)α is least on the prime factorization.
  EXPECT_EQ(
      algorithms::build("allgather/hybrid", make_spec(CollectiveKind::kAllgather, 12, 5)).params,
      "dims=2x2x3");
}

}  // namespace
}  // namespace optcoll
