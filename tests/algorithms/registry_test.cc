// SPDX-License-Identifier: Apache-2.0
// File: the registry: one list, consistent names, why_not honoured, clear errors.
#include "optcoll/algorithms/registry.h"

#include <set>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"
#include "tests/testing/registry_cases.h"

namespace optcoll::algorithms {
namespace {

TEST(Registry, NamesAreUniqueAndPrefixedByTheirCollective) {
  std::set<std::string_view> names;
  for (const auto& info : all_algorithms()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    const auto slash = info.name.find('/');
    ASSERT_NE(slash, std::string_view::npos) << info.name;
    EXPECT_EQ(info.name.substr(0, slash), collective_name(info.collective));
    EXPECT_FALSE(info.summary.empty()) << info.name;
    EXPECT_FALSE(info.cost.empty()) << info.name;
    EXPECT_EQ(find_algorithm(info.name), &info);
  }
}

TEST(Registry, EveryCollectiveHasAtLeastTwoAlgorithms) {
  for (const auto kind : all_collectives()) {
    EXPECT_GE(algorithms_for(kind).size(), 2u) << collective_name(kind);
  }
}

TEST(Registry, UnrestrictedAlgorithmsBuildEverywhere) {
  // why_not is empty exactly where the builder may be used: unrestricted specs never fail.
  for (const auto& c : testing::registry_cases({1, 2, 3, 6, 9})) {
    EXPECT_NO_THROW(build(*c.algorithm, c.spec)) << c.name;
  }
}

TEST(Registry, NotApplicableCarriesTheReason) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 4, 8);
  spec.commutative = false;
  try {
    build("allreduce/ring", spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotApplicable);
    EXPECT_NE(std::string(e.what()).find("needs a commutative operator"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("allreduce/ring does not apply to allreduce"),
              std::string::npos)
        << e.what();
  }
}

TEST(Registry, UnknownAndMismatchedNamesAreInvalidArguments) {
  const auto spec = make_spec(CollectiveKind::kBcast, 4, 8);
  try {
    build("bcast/telepathy", spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(
                  "unknown algorithm 'bcast/telepathy' for bcast (known: linear, binomial"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(build("allgather/ring", spec), Error);
  EXPECT_NO_THROW(build("binomial", spec));  // short names are looked up under the spec's kind
}

// docs/errors.md: a registry entry asked for another collective, by name and by entry.
TEST(Registry, AnAlgorithmOfAnotherCollectiveIsAnInvalidArgument) {
  const auto spec = make_spec(CollectiveKind::kBcast, 4, 8);
  for (int by_entry = 0; by_entry < 2; ++by_entry) {
    try {
      if (by_entry) {
        build(*find_algorithm("allgather/ring"), spec);
      } else {
        build("allgather/ring", spec);
      }
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("allgather/ring is an algorithm for allgather, not for "
                                           "bcast"),
                std::string::npos)
          << e.what();
    }
  }
}

// docs/errors.md: the parameter parser's messages.
TEST(Registry, ParameterErrorsNameTheParameter) {
  auto expect_invalid = [](auto&& call, const std::string& fragment) {
    try {
      call();
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_invalid([] { Params::parse("a=1,radix"); },
                 "algorithm parameter 'radix' must look like name=value");
  const Params params = Params::parse("a=1,b=xyz");
  expect_invalid([&] { params.get("c"); }, "algorithm parameter 'c' is not set");
  expect_invalid([&] { params.get_int("b"); }, "algorithm parameter b=xyz is not an integer");
}

TEST(Registry, ParametersAreCheckedAgainstTheDeclaration) {
  const auto spec = make_spec(CollectiveKind::kBcast, 4, 8);
  try {
    build("bcast/binomial", spec, Params::parse("radix=4"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no parameter 'radix'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Params::parse("radix"), Error);
  EXPECT_THROW(Params::parse("=4"), Error);
  const Params params = Params::parse("a=1,b=xyz");
  EXPECT_EQ(params.get_int("a"), 1);
  EXPECT_THROW(params.get_int("b"), Error);
  EXPECT_EQ(params.to_string(), "a=1,b=xyz");
}

// resolve_params against a declaration with defaults (a stand-in AlgorithmInfo: the registry
// entries of the foundation take no parameters).
std::span<const ParamInfo> two_params() {
  static constexpr ParamInfo kParams[] = {{"radix", "2", "tree radix"},
                                          {"segment", "0", "segment size, 0 = whole message"}};
  return kParams;
}

TEST(Registry, ResolveParamsFillsDefaultsAndKeepsGivenValues) {
  AlgorithmInfo info = all_algorithms()[0];
  info.params = &two_params;
  const Params resolved = resolve_params(info, Params::parse("segment=4096"));
  EXPECT_EQ(resolved.get_int("radix"), 2);
  EXPECT_EQ(resolved.get_int("segment"), 4096);
  try {
    resolve_params(info, Params::parse("radx=4"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(it takes: radix, segment)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace optcoll::algorithms
