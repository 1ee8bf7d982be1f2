// SPDX-License-Identifier: Apache-2.0
// File: reproducible reductions (CollectiveSpec::reproducible). The verifier proves the fixed
// association (the left fold in rank order) and rejects every other; the registry refuses
// reproducible specs for algorithms outside the fixed-order list; on threads, float data
// whose sum depends on the association gives bit-identical results across the reproducible
// algorithms and rank counts' roots, equal to a left fold computed here, while a ring does not.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"

namespace optcoll {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr CollectiveKind kReductions[] = {
    CollectiveKind::kReduce,        CollectiveKind::kAllreduce,
    CollectiveKind::kReduceScatter, CollectiveKind::kReduceScatterBlock,
    CollectiveKind::kScan,          CollectiveKind::kExscan};

CollectiveSpec reduction_spec(CollectiveKind kind, Rank p, Count block, bool reproducible) {
  CollectiveSpec spec =
      kind == CollectiveKind::kReduceScatter
          ? make_spec_v(kind, p, std::vector<Count>(static_cast<std::size_t>(p), block))
          : make_spec(kind, p, kind == CollectiveKind::kReduceScatterBlock ? block : block * p,
                      kind == CollectiveKind::kReduce ? p / 2 : 0);
  spec.elem_bytes = 4;
  spec.reproducible = reproducible;
  return spec;
}

TEST(Reproducible, OnlyFixedOrderAlgorithmsAcceptIt) {
  int refused = 0;
  int accepted = 0;
  for (const auto kind : kReductions) {
    const auto spec = reduction_spec(kind, 5, 3, true);
    for (const auto* info : algorithms::algorithms_for(kind)) {
      const auto params = algorithms::resolve_params(*info, {});
      const auto reason = algorithms::why_not(*info, spec, params);
      if (algorithms::combines_in_fixed_order(*info)) {
        EXPECT_FALSE(reason.has_value()) << info->name << ": " << *reason;
        ++accepted;
        continue;
      }
      ASSERT_TRUE(reason.has_value()) << info->name;
      EXPECT_NE(reason->find("not the fixed left fold"), std::string::npos) << *reason;
      try {
        algorithms::build(*info, spec);
        ADD_FAILURE() << info->name << " built a reproducible schedule";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kNotApplicable) << e.what();
      }
      ++refused;
    }
  }
  EXPECT_EQ(accepted, 9);  // the four reproducible algorithms and five linear ones
  EXPECT_GT(refused, 30);
}

TEST(Reproducible, NonReductionsRefuseTheFlag) {
  CollectiveSpec spec = make_spec(CollectiveKind::kBcast, 4, 8);
  spec.reproducible = true;
  try {
    validate(spec);
    FAIL() << "validated";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(
        std::string(e.what()).find("combines nothing: 'reproducible' applies to reductions only"),
        std::string::npos)
        << e.what();
  }
}

// A schedule built for a non-reproducible spec and relabelled reproducible: the verifier
// decides from the association alone. Tree and ring reductions are rejected with a message
// that names the left fold; an algorithm that does fold left to right passes.
TEST(Reproducible, VerifierRejectsEveryOtherAssociation) {
  struct Case {
    const char* algorithm;
    CollectiveKind kind;
    bool left_fold;
  };
  const Case cases[] = {
      {"allreduce/ring", CollectiveKind::kAllreduce, false},
      {"allreduce/recursive_doubling", CollectiveKind::kAllreduce, false},
      {"allreduce/rabenseifner", CollectiveKind::kAllreduce, false},
      {"reduce/binomial", CollectiveKind::kReduce, false},
      {"reduce/pipelined_chain", CollectiveKind::kReduce, false},
      {"reduce_scatter_block/ring", CollectiveKind::kReduceScatterBlock, false},
      {"reduce_scatter_block/recursive_halving", CollectiveKind::kReduceScatterBlock, false},
      {"allreduce/reproducible", CollectiveKind::kAllreduce, true},
      {"reduce/reproducible", CollectiveKind::kReduce, true},
      {"reduce_scatter_block/reproducible", CollectiveKind::kReduceScatterBlock, true},
  };
  for (const auto& c : cases) {
    // (At p = 3 some of them do fold left to right — recursive doubling folds rank 0 into
    // rank 1, then adds x2 — and the verifier accepts them there; p = 4 and 8 are trees.)
    for (const Rank p : {4, 8}) {
      Schedule s = algorithms::build(c.algorithm, reduction_spec(c.kind, p, 2, false));
      ASSERT_TRUE(verify(s).ok()) << c.algorithm;
      s.spec.reproducible = true;
      const auto report = verify(s);
      EXPECT_EQ(report.ok(), c.left_fold) << c.algorithm << " p=" << p << ": " << report.summary();
      if (!c.left_fold && !report.ok()) {
        EXPECT_NE(report.summary().find("left fold"), std::string::npos) << report.summary();
      }
    }
  }
}

// The linear scan and exscan chains fold left to right at every p; recursive doubling combines
// partials of rank ranges (scan from p = 3 on; exscan happens to be a left fold up to p = 4:
// rank 3 gets (x0 x1) x2, and not from p = 5 on).
TEST(Reproducible, ScanChainsAreLeftFoldsRecursiveDoublingIsNot) {
  for (const auto kind : {CollectiveKind::kScan, CollectiveKind::kExscan}) {
    const std::string name(collective_name(kind));
    for (const Rank p : {1, 2, 3, 4, 5, 8, 13}) {
      Schedule linear = algorithms::build(name + "/linear", reduction_spec(kind, p, 2, true));
      EXPECT_TRUE(verify(linear).ok()) << name << " p=" << p << ": " << verify(linear).summary();
      Schedule doubling =
          algorithms::build(name + "/recursive_doubling", reduction_spec(kind, p, 2, false));
      ASSERT_TRUE(verify(doubling).ok()) << name << " p=" << p;
      doubling.spec.reproducible = true;
      const bool fold = p <= (kind == CollectiveKind::kScan ? 2 : 4);
      const auto report = verify(doubling);
      EXPECT_EQ(report.ok(), fold) << name << " p=" << p << ": " << report.summary();
      if (!fold) {
        EXPECT_NE(report.summary().find("left fold"), std::string::npos) << report.summary();
      }
    }
  }
}

// Float contributions whose sum depends on the association: large values of alternating sign
// and small ones, so that (a + b) + c and a + (b + c) round differently.
float element(Rank r, Count i) {
  const float big = (r % 2 == 0 ? 1.0f : -1.0f) * 3.0e7f * static_cast<float>(1 + (r + i) % 3);
  return r % 3 == 2 ? 1.1f + static_cast<float>(i % 5) * 0.37f : big;
}

std::vector<Bytes> float_inputs(const CollectiveSpec& spec) {
  return make_contributions(spec, sizeof(float), [](Rank r, Count i, std::byte* out) {
    const float v = element(r, i);
    std::memcpy(out, &v, sizeof v);
  });
}

// The left fold ((x0 + x1) + x2) + ... of element i, in float.
float left_fold(Rank p, Count i) {
  float acc = element(0, i);
  for (Rank r = 1; r < p; ++r) acc += element(r, i);
  return acc;
}

std::vector<Bytes> run(const std::string& algorithm, const CollectiveSpec& spec) {
  const Schedule schedule = algorithms::build(algorithm, spec);
  const Datatype type = Datatype::float32();
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  return run_schedule(shared_world(spec.nranks), schedule, type, ReduceOp::builtin("sum", type),
                      float_inputs(spec), options);
}

// Element `i` of the full reduced vector, as rank r holds it in `out` (or nothing).
std::vector<float> as_floats(const Bytes& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(Reproducible, FloatResultsAreTheLeftFoldBitForBit) {
  int association_sensitive = 0;
  for (const Rank p : {2, 3, 5, 7, 8, 13}) {
    const Count block = 6;
    const Count n = block * p;
    for (int i = 0; i < n; ++i) {
      // The data really is association-sensitive: the reverse fold differs somewhere.
      float rev = element(p - 1, i);
      for (Rank r = p - 2; r >= 0; --r) rev = element(r, i) + rev;
      if (rev != left_fold(p, i)) ++association_sensitive;
    }
    for (int repeat = 0; repeat < 2; ++repeat) {
      const auto ar =
          run("allreduce/reproducible", reduction_spec(CollectiveKind::kAllreduce, p, block, true));
      const auto rd =
          run("reduce/reproducible", reduction_spec(CollectiveKind::kReduce, p, block, true));
      const auto rsb = run("reduce_scatter_block/reproducible",
                           reduction_spec(CollectiveKind::kReduceScatterBlock, p, block, true));
      const auto rs = run("reduce_scatter/reproducible",
                          reduction_spec(CollectiveKind::kReduceScatter, p, block, true));
      for (Rank r = 0; r < p; ++r) {
        const auto mine = as_floats(ar[static_cast<std::size_t>(r)]);
        ASSERT_EQ(mine.size(), static_cast<std::size_t>(n));
        for (Count i = 0; i < n; ++i) {
          EXPECT_EQ(std::bit_cast<std::uint32_t>(mine[static_cast<std::size_t>(i)]),
                    std::bit_cast<std::uint32_t>(left_fold(p, i)))
              << "allreduce p=" << p << " rank " << r << " element " << i;
        }
        for (const auto* blocks : {&rsb, &rs}) {
          const auto part = as_floats((*blocks)[static_cast<std::size_t>(r)]);
          ASSERT_EQ(part.size(), static_cast<std::size_t>(block));
          for (Count k = 0; k < block; ++k) {
            EXPECT_EQ(std::bit_cast<std::uint32_t>(part[static_cast<std::size_t>(k)]),
                      std::bit_cast<std::uint32_t>(left_fold(p, r * block + k)))
                << "reduce_scatter p=" << p << " rank " << r;
          }
        }
      }
      EXPECT_EQ(rd[static_cast<std::size_t>(p / 2)], ar[0]) << "reduce p=" << p;
      const auto linear =
          run("allreduce/linear", reduction_spec(CollectiveKind::kAllreduce, p, block, true));
      EXPECT_EQ(linear, ar) << "allreduce/linear p=" << p;
    }
  }
  EXPECT_GT(association_sensitive, 20);
}

// The left fold of ranks 0..last of element i, in float.
float prefix_fold(Rank last, Count i) {
  float acc = element(0, i);
  for (Rank r = 1; r <= last; ++r) acc += element(r, i);
  return acc;
}

TEST(Reproducible, ScanAndExscanFloatResultsAreLeftFoldsBitForBit) {
  int association_sensitive = 0;
  for (const Rank p : {2, 3, 5, 8, 13}) {
    const Count n = 12;
    const auto scan = run("scan/linear", reduction_spec(CollectiveKind::kScan, p, n / p + 1, true));
    const auto exscan =
        run("exscan/linear", reduction_spec(CollectiveKind::kExscan, p, n / p + 1, true));
    const auto doubling =
        run("scan/recursive_doubling", reduction_spec(CollectiveKind::kScan, p, n / p + 1, false));
    const Count count = reduction_spec(CollectiveKind::kScan, p, n / p + 1, true).count;
    EXPECT_TRUE(exscan[0].empty());
    for (Rank r = 0; r < p; ++r) {
      const auto inclusive = as_floats(scan[static_cast<std::size_t>(r)]);
      const auto exclusive = as_floats(exscan[static_cast<std::size_t>(r)]);
      const auto other = as_floats(doubling[static_cast<std::size_t>(r)]);
      ASSERT_EQ(inclusive.size(), static_cast<std::size_t>(count));
      ASSERT_EQ(exclusive.size(), r == 0 ? 0 : static_cast<std::size_t>(count));
      for (Count i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(inclusive[k]),
                  std::bit_cast<std::uint32_t>(prefix_fold(r, i)))
            << "scan p=" << p << " rank " << r << " element " << i;
        if (r > 0) {
          EXPECT_EQ(std::bit_cast<std::uint32_t>(exclusive[k]),
                    std::bit_cast<std::uint32_t>(prefix_fold(r - 1, i)))
              << "exscan p=" << p << " rank " << r << " element " << i;
        }
        if (other[k] != inclusive[k]) ++association_sensitive;
      }
    }
  }
  // The data does tell associations apart: recursive doubling's float prefixes differ.
  EXPECT_GT(association_sensitive, 0);
}

TEST(Reproducible, ARingGivesADifferentFloatResult) {
  // The counterpart: the ring allreduce's association differs from the left fold, and on
  // this data its float result does too (for some p and element).
  int differing = 0;
  for (const Rank p : {3, 5, 7, 8}) {
    const auto spec = reduction_spec(CollectiveKind::kAllreduce, p, 6, false);
    const auto out = run("allreduce/ring", spec);
    const auto mine = as_floats(out[0]);
    for (Count i = 0; i < 6 * p; ++i) {
      if (std::bit_cast<std::uint32_t>(mine[static_cast<std::size_t>(i)]) !=
          std::bit_cast<std::uint32_t>(left_fold(p, i))) {
        ++differing;
      }
    }
  }
  EXPECT_GT(differing, 0);
}

}  // namespace
}  // namespace optcoll
