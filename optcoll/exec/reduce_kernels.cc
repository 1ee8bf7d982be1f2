// SPDX-License-Identifier: Apache-2.0
// File: datatypes and reduction kernels. Built-in (type x op) pairs are plain loops over
// the element type (one indirect call per slice, none per element), written so that the
// compiler vectorizes them; integer sum and product wrap (computed in unsigned arithmetic).
#include "optcoll/exec/reduce_kernels.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// The element-wise operators. Integer sum and product go through the unsigned type of the
// same width, where overflow wraps (two's complement) instead of being undefined.
struct SumOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
struct ProdOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct MinOp {
  template <typename T>
  static T apply(T a, T b) {
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <typename T>
  static T apply(T a, T b) {
    return a < b ? b : a;
  }
};

// out[i] = left[i] op right[i]. The loops take restrict-qualified typed pointers so that
// they vectorize without run-time overlap checks; the exact aliasing the interface allows
// (out == left or out == right) gets its own loop, and anything else (misaligned memory,
// partial overlap, which no well-formed schedule produces) the element-by-element fallback.
// Blocks of a fixed number of elements: a constant trip count is what lets GCC's default
// -O2 vectorizer (the "very cheap" cost model) turn the block into vector instructions.
constexpr std::size_t kBlock = 16;

template <typename T, typename Op>
void loop_distinct(const T* __restrict left, const T* __restrict right, T* __restrict out,
                   std::size_t n) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (std::size_t j = 0; j < kBlock; ++j) out[i + j] = Op::apply(left[i + j], right[i + j]);
  }
  for (; i < n; ++i) out[i] = Op::apply(left[i], right[i]);
}

template <typename T, typename Op>
void loop_out_is_left(T* __restrict inout, const T* __restrict right, std::size_t n) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (std::size_t j = 0; j < kBlock; ++j) inout[i + j] = Op::apply(inout[i + j], right[i + j]);
  }
  for (; i < n; ++i) inout[i] = Op::apply(inout[i], right[i]);
}

template <typename T, typename Op>
void loop_out_is_right(const T* __restrict left, T* __restrict inout, std::size_t n) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (std::size_t j = 0; j < kBlock; ++j) inout[i + j] = Op::apply(left[i + j], inout[i + j]);
  }
  for (; i < n; ++i) inout[i] = Op::apply(left[i], inout[i]);
}

template <typename T, typename Op>
void loop_fallback(const std::byte* left, const std::byte* right, std::byte* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    T a;
    T b;
    std::memcpy(&a, left + i * sizeof(T), sizeof(T));
    std::memcpy(&b, right + i * sizeof(T), sizeof(T));
    const T c = Op::apply(a, b);
    std::memcpy(out + i * sizeof(T), &c, sizeof(T));
  }
}

bool aligned_for(const std::byte* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// [a, a+bytes) and [b, b+bytes) share at least one byte.
bool overlap(const std::byte* a, const std::byte* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

template <typename T, typename Op>
void combine_kernel(const std::byte* left, const std::byte* right, std::byte* out, Count n) {
  if (n <= 0) return;
  const auto count = static_cast<std::size_t>(n);
  const std::size_t bytes = count * sizeof(T);
  const bool aligned = aligned_for(left, alignof(T)) && aligned_for(right, alignof(T)) &&
                       aligned_for(out, alignof(T));
  // The buffers hold elements of type T (the executor binds them to the caller's typed
  // memory or to its own scratch), so the typed views below are the elements themselves.
  const auto* l = reinterpret_cast<const T*>(left);
  const auto* r = reinterpret_cast<const T*>(right);
  auto* o = reinterpret_cast<T*>(out);
  if (aligned && left != right) {
    if (out == left && !overlap(out, right, bytes)) {
      loop_out_is_left<T, Op>(o, r, count);
      return;
    }
    if (out == right && !overlap(out, left, bytes)) {
      loop_out_is_right<T, Op>(l, o, count);
      return;
    }
    if (!overlap(out, left, bytes) && !overlap(out, right, bytes)) {
      loop_distinct<T, Op>(l, r, o, count);
      return;
    }
  }
  loop_fallback<T, Op>(left, right, out, count);
}

template <typename Op>
CombineFn kernel_for(BuiltinType type) {
  switch (type) {
    case BuiltinType::kInt32:
      return combine_kernel<std::int32_t, Op>;
    case BuiltinType::kInt64:
      return combine_kernel<std::int64_t, Op>;
    case BuiltinType::kFloat:
      return combine_kernel<float, Op>;
    case BuiltinType::kDouble:
      return combine_kernel<double, Op>;
    case BuiltinType::kUser:
      break;
  }
  return nullptr;
}

// The built-in operators, in the order of builtin()'s table, and the built-in types (the
// values of BuiltinType below kUser).
constexpr std::array<std::string_view, 4> kBuiltinOps{"sum", "prod", "min", "max"};
constexpr std::size_t kBuiltinTypes = static_cast<std::size_t>(BuiltinType::kUser);

ReduceOp make_builtin(std::size_t op_index, BuiltinType type) {
  ReduceOp op;
  op.name = std::string(kBuiltinOps[op_index]);
  op.commutative = true;
  op.operand = type;
  switch (op_index) {
    case 0:
      op.combine = kernel_for<SumOp>(type);
      break;
    case 1:
      op.combine = kernel_for<ProdOp>(type);
      break;
    case 2:
      op.combine = kernel_for<MinOp>(type);
      break;
    default:
      op.combine = kernel_for<MaxOp>(type);
      break;
  }
  return op;
}

}  // namespace

Datatype Datatype::int32() { return {"int32", sizeof(std::int32_t), BuiltinType::kInt32}; }
Datatype Datatype::int64() { return {"int64", sizeof(std::int64_t), BuiltinType::kInt64}; }
Datatype Datatype::float32() { return {"float", sizeof(float), BuiltinType::kFloat}; }
Datatype Datatype::float64() { return {"double", sizeof(double), BuiltinType::kDouble}; }

Datatype Datatype::user(std::string name, std::size_t bytes) {
  if (bytes == 0) throw_invalid("user datatype '{}' must have a positive size", name);
  return {std::move(name), bytes, BuiltinType::kUser};
}

std::optional<Datatype> parse_datatype(std::string_view name) {
  if (name == "int32") return Datatype::int32();
  if (name == "int64") return Datatype::int64();
  if (name == "float") return Datatype::float32();
  if (name == "double") return Datatype::float64();
  return std::nullopt;
}

const ReduceOp& ReduceOp::builtin(std::string_view op_name, const Datatype& type) {
  if (type.builtin == BuiltinType::kUser) {
    throw_invalid("built-in operator '{}' is not defined for user datatype '{}'", op_name,
                  type.name);
  }
  const auto named = std::find(kBuiltinOps.begin(), kBuiltinOps.end(), op_name);
  if (named == kBuiltinOps.end()) {
    throw_invalid("unknown reduction operator '{}' (known: sum, prod, min, max)", op_name);
  }
  static const auto table = [] {
    std::array<ReduceOp, kBuiltinOps.size() * kBuiltinTypes> made;
    for (std::size_t o = 0; o < kBuiltinOps.size(); ++o) {
      for (std::size_t t = 0; t < kBuiltinTypes; ++t) {
        made[o * kBuiltinTypes + t] = make_builtin(o, static_cast<BuiltinType>(t));
      }
    }
    return made;
  }();
  const auto o = static_cast<std::size_t>(named - kBuiltinOps.begin());
  return table[o * kBuiltinTypes + static_cast<std::size_t>(type.builtin)];
}

ReduceOp ReduceOp::user(std::string name, bool commutative, CombineFn combine) {
  if (!combine) throw_invalid("user operator '{}' has no combine function", name);
  ReduceOp op;
  op.name = std::move(name);
  op.commutative = commutative;
  op.combine = std::move(combine);
  return op;
}

void reduce_into(const ReduceOp& op, const std::byte* src, std::byte* dst, Count n,
                 bool src_on_left) {
  if (n <= 0) return;
  if (src_on_left) {
    op.combine(src, dst, dst, n);
  } else {
    op.combine(dst, src, dst, n);
  }
}

}  // namespace optcoll
