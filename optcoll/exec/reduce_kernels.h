// SPDX-License-Identifier: Apache-2.0
// File: datatypes and reduction operators bound at execution time (schedules carry
// neither): built-in (int32, int64, float, double) x (sum, prod, min, max) kernels, and
// user-defined operators over user-defined element types, commutative or not.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "optcoll/model/types.h"

namespace optcoll {

enum class BuiltinType : std::uint8_t { kInt32, kInt64, kFloat, kDouble, kUser };

struct Datatype {
  std::string name;       // "int32", "int64", "float", "double", or a user name
  std::size_t bytes = 0;  // size of one element
  BuiltinType builtin = BuiltinType::kUser;

  static Datatype int32();
  static Datatype int64();
  static Datatype float32();
  static Datatype float64();
  static Datatype user(std::string name, std::size_t bytes);  // throws for bytes == 0
};
std::optional<Datatype> parse_datatype(std::string_view name);  // the four built-ins

// out[i] = left[i] (op) right[i] for i < n. `out` may alias `left` or `right` (exactly).
using CombineFn =
    std::function<void(const std::byte* left, const std::byte* right, std::byte* out, Count n)>;

struct ReduceOp {
  std::string name;  // "sum", "prod", "min", "max", or a user name
  bool commutative = true;
  CombineFn combine;
  // For built-in operators, the element type the kernel was made for (the executor refuses
  // to apply it to another type); kUser for user operators.
  BuiltinType operand = BuiltinType::kUser;

  // Built-in operator for a built-in type, from a table made once (a call that names its
  // operator constructs no name or function); throws Error(kInvalidArgument) otherwise.
  static const ReduceOp& builtin(std::string_view op_name, const Datatype& type);
  static ReduceOp user(std::string name, bool commutative, CombineFn combine);
};

// dst = op(src, dst) for Side::kLeft (src_on_left = true), op(dst, src) otherwise.
void reduce_into(const ReduceOp& op, const std::byte* src, std::byte* dst, Count n,
                 bool src_on_left);

}  // namespace optcoll
