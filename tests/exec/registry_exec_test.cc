// SPDX-License-Identifier: Apache-2.0
// File: the central executor test: every registry case (every algorithm x rank count x root x
// count pattern, commutative and not) runs on a thread world with real data and must match
// the naive reference bit for bit. Commutative cases use wrapping integer sums; the
// non-commutative ones a 2x2 integer matrix product, which only the rank-order combination
// x0 * x1 * ... * x(p-1) reproduces. Smaller slices of the grid cover floating point (with a
// tolerance) and prod/min/max.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"
#include "tests/testing/registry_cases.h"

namespace optcoll::testing {
namespace {

// The element type, operator, reference combine and input generator of one run.
struct DataChoice {
  std::string name;
  Datatype type;
  ReduceOp op;
  ElementCombine combine;
  ElementFill fill;
  double tolerance = 0;  // 0: bit-exact; otherwise relative, for float (4) or double (8)
};

template <typename T>
DataChoice integer_sum(std::uint64_t salt) {
  const Datatype type = sizeof(T) == 4 ? Datatype::int32() : Datatype::int64();
  return {type.name + "_sum", type, ReduceOp::builtin("sum", type), combine_sum<T>(),
          fill_integers<T>(salt)};
}

DataChoice matrix_product(std::uint64_t salt) {
  return {"mat2_product", mat2_type(), mat2_product(), mat2_multiply, fill_mat2(salt)};
}

// Runs `schedule` (named `name`) with `data` and compares every rank's output with the
// reference.
void check_schedule(const Schedule& schedule, const std::string& name, const DataChoice& data) {
  const CollectiveSpec& spec = schedule.spec;
  const Rank p = spec.nranks;
  const auto contributions = make_contributions(spec, data.type.bytes, data.fill);
  const auto expected = reference_outputs(spec, data.type.bytes, contributions, data.combine);
  const Layout layout(spec);
  for (Rank r = 0; r < p; ++r) {  // the reference and the layout agree on the sizes
    ASSERT_EQ(expected[static_cast<std::size_t>(r)].size(),
              static_cast<std::size_t>(layout.output_count(r)) * data.type.bytes)
        << "rank " << r;
  }
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  const auto outputs =
      run_schedule(shared_world(p), schedule, data.type, data.op, contributions, options);
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    std::string diff;
    if (data.tolerance == 0) {
      diff = first_difference(outputs[i], expected[i], data.type.bytes);
    } else if (data.type.bytes == sizeof(float)) {
      diff = first_difference_near<float>(outputs[i], expected[i], data.tolerance);
    } else {
      diff = first_difference_near<double>(outputs[i], expected[i], data.tolerance);
    }
    EXPECT_EQ(diff, "") << name << " with " << data.name << ": rank " << r;
  }
}

// Runs `c` with `data` and compares every rank's output with the reference.
void check_case(const RegistryCase& c, const DataChoice& data) {
  check_schedule(algorithms::build(*c.algorithm, c.spec), c.name, data);
}

class RegistryExec : public ::testing::TestWithParam<RegistryCase> {};

TEST_P(RegistryExec, MatchesTheReference) {
  const RegistryCase& c = GetParam();
  const std::uint64_t salt = std::hash<std::string>{}(c.name);
  if (!c.spec.commutative) {
    check_case(c, matrix_product(salt));
  } else if (c.spec.nranks % 2 == 1) {
    check_case(c, integer_sum<std::int32_t>(salt));
  } else {
    check_case(c, integer_sum<std::int64_t>(salt));
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryExec,
                         ::testing::ValuesIn(registered_cases(exec_rank_grid(),
                                                              /*thin_large=*/kSanitizedBuild)),
                         case_name);

// Release times (Op::not_before: Canon & Antoniu's Algorithm 2 under transfers=K, planned for
// an overlap model) order nothing: the executors ignore them and the results are the
// reference's, in rank order for a non-commutative operator.
TEST(ReleaseTimes, GreedyOverlapWithATransferLimitMatchesTheReference) {
  CostModel model;
  model.alpha = 1;
  model.beta = 0;
  model.gamma = 2;
  model.ports = 1;
  model.duplex = Duplex::kHalf;
  model.overlap = true;
  for (const Rank p : {5, 16}) {
    for (const Rank root : {Rank{0}, p - 1}) {
      for (const bool commutative : {true, false}) {
        auto spec = make_spec(CollectiveKind::kReduce, p, 5, root);
        spec.commutative = commutative;
        const Schedule schedule = algorithms::build(
            "reduce/greedy_overlap", spec, algorithms::Params::parse("transfers=2"), model);
        bool released = false;
        for (const auto& program : schedule.ranks) {
          for (const auto& op : program.ops) released = released || op.not_before > 0;
        }
        ASSERT_TRUE(released);
        const std::string name = fmt::format("p={} root={}", p, root);
        const std::uint64_t salt = std::hash<std::string>{}(name);
        check_schedule(schedule, name,
                       commutative ? integer_sum<std::int64_t>(salt) : matrix_product(salt));
      }
    }
  }
}

// A barrier has no data; what it guarantees is that no rank leaves before every rank came.
class BarrierExec : public ::testing::TestWithParam<RegistryCase> {};

TEST_P(BarrierExec, NoRankLeavesBeforeEveryRankArrived) {
  const RegistryCase& c = GetParam();
  const Schedule schedule = algorithms::build(*c.algorithm, c.spec);
  const Rank p = c.spec.nranks;
  for (int round = 0; round < 3; ++round) {
    std::atomic<Rank> arrived{0};
    std::atomic<Rank> early{0};
    shared_world(p).run([&](Transport& transport) {
      // Rank 0 arrives late: everyone else must still be in the barrier.
      if (transport.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      arrived.fetch_add(1);
      const Datatype type = Datatype::int32();
      execute(schedule, transport, {}, type, ReduceOp::builtin("sum", type),
              ExecOptions{std::chrono::seconds(60), static_cast<std::uint32_t>(round)});
      if (arrived.load() != p) early.fetch_add(1);
    });
    EXPECT_EQ(early.load(), 0) << c.name << " round " << round;
  }
}

std::vector<RegistryCase> barrier_cases() {
  std::vector<RegistryCase> cases;
  for (auto& c : registered_cases(full_rank_grid())) {
    if (c.spec.kind == CollectiveKind::kBarrier) cases.push_back(std::move(c));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Registry, BarrierExec, ::testing::ValuesIn(barrier_cases()), case_name);

// ---- Floating point: a few rank counts, reductions only, float and double sums.

struct TypedCase {
  RegistryCase c;
  std::string data;  // which DataChoice
  std::string name;
};

void PrintTo(const TypedCase& t, std::ostream* os) { *os << t.name; }

DataChoice make_choice(const std::string& which, std::uint64_t salt) {
  if (which == "float_sum") {
    return {which,
            Datatype::float32(),
            ReduceOp::builtin("sum", Datatype::float32()),
            combine_sum<float>(),
            fill_dyadic<float>(salt),
            1e-5};
  }
  if (which == "double_sum") {
    return {which,
            Datatype::float64(),
            ReduceOp::builtin("sum", Datatype::float64()),
            combine_sum<double>(),
            fill_dyadic<double>(salt),
            1e-12};
  }
  if (which == "int32_prod") {
    return {which, Datatype::int32(), ReduceOp::builtin("prod", Datatype::int32()),
            combine_prod<std::int32_t>(), fill_small_positive<std::int32_t>(salt)};
  }
  if (which == "int64_min") {
    return {which, Datatype::int64(), ReduceOp::builtin("min", Datatype::int64()),
            combine_min<std::int64_t>(), fill_integers<std::int64_t>(salt)};
  }
  if (which == "int32_max") {
    return {which, Datatype::int32(), ReduceOp::builtin("max", Datatype::int32()),
            combine_max<std::int32_t>(), fill_integers<std::int32_t>(salt)};
  }
  if (which == "double_prod") {
    return {which,
            Datatype::float64(),
            ReduceOp::builtin("prod", Datatype::float64()),
            combine_prod<double>(),
            fill_small_positive<double>(salt),
            1e-12};
  }
  if (which == "float_min") {
    return {which,
            Datatype::float32(),
            ReduceOp::builtin("min", Datatype::float32()),
            combine_min<float>(),
            fill_dyadic<float>(salt),
            1e-6};
  }
  if (which == "double_max") {
    return {which,
            Datatype::float64(),
            ReduceOp::builtin("max", Datatype::float64()),
            combine_max<double>(),
            fill_dyadic<double>(salt),
            1e-12};
  }
  ADD_FAILURE() << "unknown data choice " << which;
  return integer_sum<std::int32_t>(salt);
}

std::vector<TypedCase> typed_cases(const std::vector<Rank>& ranks,
                                   const std::vector<std::string>& choices, bool few_patterns) {
  std::vector<TypedCase> cases;
  for (auto& c : registered_cases(ranks, true, false)) {
    if (!is_reduction(c.spec.kind)) continue;
    if (few_patterns && !(contains(c.name, "_n5") || contains(c.name, "irregular"))) continue;
    for (const auto& choice : choices) cases.push_back({c, choice, c.name + "_" + choice});
  }
  return cases;
}

class TypedRegistryExec : public ::testing::TestWithParam<TypedCase> {};

TEST_P(TypedRegistryExec, MatchesTheReference) {
  const TypedCase& t = GetParam();
  check_case(t.c, make_choice(t.data, std::hash<std::string>{}(t.name)));
}

std::string typed_name(const ::testing::TestParamInfo<TypedCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(FloatingPoint, TypedRegistryExec,
                         ::testing::ValuesIn(typed_cases({2, 3, 5, 8}, {"float_sum", "double_sum"},
                                                         false)),
                         typed_name);

INSTANTIATE_TEST_SUITE_P(OtherOperators, TypedRegistryExec,
                         ::testing::ValuesIn(typed_cases({3, 4, 7},
                                                         {"int32_prod", "int64_min", "int32_max",
                                                          "double_prod", "float_min", "double_max"},
                                                         true)),
                         typed_name);

// The matrix inputs really do distinguish orders: otherwise the non-commutative cases above
// could not catch an executor or algorithm that combines out of rank order.
TEST(ReferenceSelfCheck, MatrixProductDependsOnOrder) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 5, 50);
  const auto contributions = make_contributions(spec, kMat2Bytes, fill_mat2(7));
  const auto forward = reference_outputs(spec, kMat2Bytes, contributions, mat2_multiply);
  auto reversed_inputs = contributions;
  std::swap(reversed_inputs[1], reversed_inputs[2]);
  const auto swapped = reference_outputs(spec, kMat2Bytes, reversed_inputs, mat2_multiply);
  Count differing = 0;
  for (Count i = 0; i < 50; ++i) {
    const auto at = static_cast<std::size_t>(i) * kMat2Bytes;
    if (std::memcmp(forward[0].data() + at, swapped[0].data() + at, kMat2Bytes) != 0) ++differing;
  }
  EXPECT_GE(differing, 45);
}

}  // namespace
}  // namespace optcoll::testing
