// SPDX-License-Identifier: Apache-2.0
// File: reading the fields of the measured tables optcoll writes as JSON (tuning tables,
// library timings), internal to optcoll/plan: each reader throws Error(kParse) naming the
// document, the entry and the field ("tuning table: point 3: missing \"bytes\"").
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"

namespace optcoll::json_fields {

using nlohmann::json;

// `document`: what is read ("tuning table"); `where`: the entry ("point 3").
[[noreturn]] inline void bad_entry(std::string_view document, std::string_view where,
                                   std::string_view what) {
  throw Error(ErrorCode::kParse, fmt::format("{}: {}: {}", document, where, what));
}

inline const json& field(const json& object, std::string_view name, std::string_view document,
                         std::string_view where) {
  const auto it = object.find(name);
  if (it == object.end()) bad_entry(document, where, fmt::format("missing \"{}\"", name));
  return *it;
}

inline std::string text_field(const json& object, std::string_view name, std::string_view document,
                              std::string_view where) {
  const json& value = field(object, name, document, where);
  if (!value.is_string()) {
    bad_entry(document, where, fmt::format("\"{}\" must be a string", name));
  }
  return value.get<std::string>();
}

inline std::uint64_t count_field(const json& object, std::string_view name,
                                 std::string_view document, std::string_view where) {
  const json& value = field(object, name, document, where);
  if (!value.is_number_unsigned()) {
    bad_entry(document, where, fmt::format("\"{}\" must be a non-negative integer", name));
  }
  return value.get<std::uint64_t>();
}

// A time in seconds: positive and finite; `optional`: -1 when absent, and 0 is accepted.
inline double seconds_field(const json& object, std::string_view name, std::string_view document,
                            std::string_view where, bool optional) {
  const auto it = object.find(name);
  if (it == object.end()) {
    if (optional) return -1;
    bad_entry(document, where, fmt::format("missing \"{}\"", name));
  }
  if (!it->is_number()) bad_entry(document, where, fmt::format("\"{}\" must be a number", name));
  const double value = it->get<double>();
  if (!std::isfinite(value) || (!optional && value <= 0)) {
    bad_entry(document, where,
              fmt::format("\"{}\" must be a positive time in seconds, got {}", name, value));
  }
  return value;
}

}  // namespace optcoll::json_fields
