// SPDX-License-Identifier: Apache-2.0
// File: datatypes and reduction kernels: every built-in (type x op) against a naive loop,
// wrapping integer arithmetic, every aliasing the interface allows, misaligned memory,
// operand order (Side) and the errors for operators that do not exist.
#include "optcoll/exec/reduce_kernels.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"
#include "tests/testing/reference.h"

namespace optcoll {
namespace {

using testing::load;
using testing::mix;
using testing::store;

TEST(Datatype, FactoriesAndParsing) {
  EXPECT_EQ(Datatype::int32().bytes, 4u);
  EXPECT_EQ(Datatype::int64().bytes, 8u);
  EXPECT_EQ(Datatype::float32().bytes, 4u);
  EXPECT_EQ(Datatype::float64().bytes, 8u);
  for (const auto& t :
       {Datatype::int32(), Datatype::int64(), Datatype::float32(), Datatype::float64()}) {
    const auto parsed = parse_datatype(t.name);
    ASSERT_TRUE(parsed.has_value()) << t.name;
    EXPECT_EQ(parsed->bytes, t.bytes);
    EXPECT_EQ(parsed->builtin, t.builtin);
  }
  EXPECT_EQ(parse_datatype("float")->builtin, BuiltinType::kFloat);
  EXPECT_EQ(parse_datatype("double")->builtin, BuiltinType::kDouble);
  EXPECT_FALSE(parse_datatype("int8").has_value());
  EXPECT_FALSE(parse_datatype("").has_value());
  const Datatype user = Datatype::user("pair", 12);
  EXPECT_EQ(user.builtin, BuiltinType::kUser);
  EXPECT_EQ(user.bytes, 12u);
  EXPECT_EQ(user.name, "pair");
  EXPECT_THROW(Datatype::user("empty", 0), Error);
}

TEST(ReduceOp, UnknownOperatorsAndUserTypesAreInvalidArguments) {
  try {
    ReduceOp::builtin("xor", Datatype::int32());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'xor'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReduceOp::builtin("sum", Datatype::user("pair", 12)), Error);
  EXPECT_THROW(ReduceOp::user("none", true, nullptr), Error);
  const ReduceOp max = ReduceOp::builtin("max", Datatype::float64());
  EXPECT_EQ(max.name, "max");
  EXPECT_TRUE(max.commutative);
  EXPECT_EQ(max.operand, BuiltinType::kDouble);
}

// docs/errors.md: each factory's message.
TEST(ReduceOp, FactoryErrorsNameTheProblem) {
  auto expect_invalid = [](auto&& call, const std::string& fragment) {
    try {
      call();
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_invalid([] { ReduceOp::builtin("xor", Datatype::int32()); },
                 "unknown reduction operator 'xor' (known: sum, prod, min, max)");
  expect_invalid([] { ReduceOp::builtin("sum", Datatype::user("pair", 12)); },
                 "built-in operator 'sum' is not defined for user datatype 'pair'");
  expect_invalid([] { ReduceOp::user("none", true, nullptr); },
                 "user operator 'none' has no combine function");
  expect_invalid([] { Datatype::user("void", 0); },
                 "user datatype 'void' must have a positive size");
}

// The three layouts combine() is called with: three buffers, out == left, out == right.
enum class Aliasing { kDistinct, kOutIsLeft, kOutIsRight };

// Checks op(type) on n elements against `naive`, for every aliasing and a misaligned copy.
template <typename T, typename Naive>
void check_kernel(const Datatype& type, const char* op_name, Naive naive, Count n) {
  const ReduceOp op = ReduceOp::builtin(op_name, type);
  std::vector<T> left(static_cast<std::size_t>(n));
  std::vector<T> right(static_cast<std::size_t>(n));
  for (Count i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if constexpr (std::is_integral_v<T>) {
      left[k] = static_cast<T>(mix(1, i));
      right[k] = static_cast<T>(mix(2, i));
    } else {
      left[k] = static_cast<T>(static_cast<double>(mix(1, i) % 2001) / 16.0 - 60.0);
      right[k] = static_cast<T>(static_cast<double>(mix(2, i) % 2001) / 16.0 - 60.0);
    }
  }
  // Extremes, where wrapping matters.
  if (n >= 2) {
    left[0] = std::numeric_limits<T>::max();
    right[0] = static_cast<T>(3);
    left[1] = std::numeric_limits<T>::lowest();
    right[1] = static_cast<T>(-2);
  }
  std::vector<T> expected(left.size());
  for (std::size_t k = 0; k < left.size(); ++k) expected[k] = naive(left[k], right[k]);
  auto as_bytes = [](std::vector<T>& v) { return reinterpret_cast<std::byte*>(v.data()); };

  for (const Aliasing aliasing :
       {Aliasing::kDistinct, Aliasing::kOutIsLeft, Aliasing::kOutIsRight}) {
    std::vector<T> l = left;
    std::vector<T> r = right;
    std::vector<T> out(left.size(), T{});
    std::byte* target = as_bytes(out);
    if (aliasing == Aliasing::kOutIsLeft) target = as_bytes(l);
    if (aliasing == Aliasing::kOutIsRight) target = as_bytes(r);
    op.combine(as_bytes(l), as_bytes(r), target, n);
    std::vector<T> result(left.size());
    if (n > 0) std::memcpy(result.data(), target, result.size() * sizeof(T));
    for (std::size_t k = 0; k < result.size(); ++k) {
      // Bitwise comparison: exact for integers and for IEEE results of one operation.
      EXPECT_EQ(std::memcmp(&result[k], &expected[k], sizeof(T)), 0)
          << type.name << " " << op_name << " aliasing " << static_cast<int>(aliasing)
          << " element " << k << ": " << result[k] << " vs " << expected[k];
    }
  }

  // Misaligned operands (one byte off): the kernel must not assume alignment.
  const std::size_t bytes = left.size() * sizeof(T);
  std::vector<std::byte> raw(3 * bytes + 4);
  std::byte* l = raw.data() + 1;
  std::byte* r = l + bytes + 1;
  std::byte* o = r + bytes + 1;
  if (n > 0) {
    std::memcpy(l, left.data(), bytes);
    std::memcpy(r, right.data(), bytes);
  }
  op.combine(l, r, o, n);
  for (std::size_t k = 0; k < left.size(); ++k) {
    const T got = load<T>(o + k * sizeof(T));
    EXPECT_EQ(std::memcmp(&got, &expected[k], sizeof(T)), 0)
        << type.name << " " << op_name << " misaligned element " << k;
  }
}

template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

template <typename T>
void check_all_ops(const Datatype& type) {
  for (const Count n : {Count{0}, Count{1}, Count{15}, Count{16}, Count{37}, Count{1000}}) {
    if constexpr (std::is_integral_v<T>) {
      check_kernel<T>(type, "sum", wrap_add<T>, n);
      check_kernel<T>(type, "prod", wrap_mul<T>, n);
    } else {
      check_kernel<T>(
          type, "sum", [](T a, T b) { return a + b; }, n);
      check_kernel<T>(
          type, "prod", [](T a, T b) { return a * b; }, n);
    }
    check_kernel<T>(
        type, "min", [](T a, T b) { return a < b ? a : b; }, n);
    check_kernel<T>(
        type, "max", [](T a, T b) { return a < b ? b : a; }, n);
  }
}

TEST(BuiltinKernels, Int32) { check_all_ops<std::int32_t>(Datatype::int32()); }
TEST(BuiltinKernels, Int64) { check_all_ops<std::int64_t>(Datatype::int64()); }
TEST(BuiltinKernels, Float) { check_all_ops<float>(Datatype::float32()); }
TEST(BuiltinKernels, Double) { check_all_ops<double>(Datatype::float64()); }

TEST(BuiltinKernels, IntegerSumAndProductWrap) {
  const ReduceOp sum = ReduceOp::builtin("sum", Datatype::int32());
  std::int32_t a = std::numeric_limits<std::int32_t>::max();
  const std::int32_t one = 1;
  sum.combine(reinterpret_cast<const std::byte*>(&a), reinterpret_cast<const std::byte*>(&one),
              reinterpret_cast<std::byte*>(&a), 1);
  EXPECT_EQ(a, std::numeric_limits<std::int32_t>::min());
  const ReduceOp prod = ReduceOp::builtin("prod", Datatype::int64());
  std::int64_t b = std::int64_t{1} << 62;
  const std::int64_t four = 4;
  prod.combine(reinterpret_cast<const std::byte*>(&b), reinterpret_cast<const std::byte*>(&four),
               reinterpret_cast<std::byte*>(&b), 1);
  EXPECT_EQ(b, 0);
}

// A non-commutative operator shows which operand reduce_into puts where.
TEST(ReduceInto, SideSelectsTheOperandOrder) {
  const ReduceOp minus = ReduceOp::user(
      "minus", false, [](const std::byte* l, const std::byte* r, std::byte* out, Count n) {
        for (Count i = 0; i < n; ++i) {
          const auto at = static_cast<std::size_t>(i) * sizeof(std::int32_t);
          store<std::int32_t>(out + at, load<std::int32_t>(l + at) - load<std::int32_t>(r + at));
        }
      });
  const std::vector<std::int32_t> src{10, 20, 30};
  std::vector<std::int32_t> dst{1, 2, 3};
  reduce_into(minus, reinterpret_cast<const std::byte*>(src.data()),
              reinterpret_cast<std::byte*>(dst.data()), 3, /*src_on_left=*/true);
  EXPECT_EQ(dst, (std::vector<std::int32_t>{9, 18, 27}));  // src - dst
  reduce_into(minus, reinterpret_cast<const std::byte*>(src.data()),
              reinterpret_cast<std::byte*>(dst.data()), 3, /*src_on_left=*/false);
  EXPECT_EQ(dst, (std::vector<std::int32_t>{-1, -2, -3}));  // dst - src
  // n == 0 touches nothing (null pointers are fine).
  reduce_into(minus, nullptr, nullptr, 0, true);
}

TEST(ReduceInto, MatrixProductKeepsOperandOrder) {
  // [[1,1],[0,1]] and [[1,0],[1,1]] do not commute.
  const std::int64_t a[4] = {1, 1, 0, 1};
  const std::int64_t b[4] = {1, 0, 1, 1};
  std::int64_t dst[4];
  std::memcpy(dst, b, sizeof(dst));
  const ReduceOp op = ReduceOp::user(
      "mat2", false, [](const std::byte* l, const std::byte* r, std::byte* out, Count n) {
        for (Count i = 0; i < n; ++i) {
          const auto at = static_cast<std::size_t>(i) * testing::kMat2Bytes;
          testing::mat2_multiply(l + at, r + at, out + at);
        }
      });
  reduce_into(op, reinterpret_cast<const std::byte*>(a), reinterpret_cast<std::byte*>(dst), 1,
              true);  // dst = a * b
  EXPECT_EQ((std::vector<std::int64_t>(dst, dst + 4)), (std::vector<std::int64_t>{2, 1, 1, 1}));
  std::memcpy(dst, b, sizeof(dst));
  reduce_into(op, reinterpret_cast<const std::byte*>(a), reinterpret_cast<std::byte*>(dst), 1,
              false);  // dst = b * a
  EXPECT_EQ((std::vector<std::int64_t>(dst, dst + 4)), (std::vector<std::int64_t>{1, 1, 1, 2}));
}

}  // namespace
}  // namespace optcoll
