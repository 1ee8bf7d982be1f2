// SPDX-License-Identifier: Apache-2.0
// File: algorithm parameters (radix, segment size, ...): declared per algorithm as
// ParamInfo, passed as name=value strings, resolved against the declaration with defaults.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace optcoll::algorithms {

// A parameter an algorithm declares. The default may be "auto": the builder then chooses
// the value itself, from the spec and the cost model it is given (e.g. the segment size that
// minimizes the algorithm's cost formula), and records what it chose with
// ScheduleBuilder::set_params, so that plans and explanations show the actual value.
struct ParamInfo {
  std::string_view name;
  std::string_view default_value;
  std::string_view help;
};

class Params {
 public:
  Params() = default;

  // Parses "radix=4,segment=1024" (empty text: no parameters). Throws Error(kInvalidArgument).
  static Params parse(std::string_view text);

  void set(std::string name, std::string value);
  bool has(std::string_view name) const;
  // Throws Error(kInvalidArgument) when the parameter is missing or not an integer.
  std::string_view get(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;

  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  std::string to_string() const;  // "radix=4,segment=1024"
  bool operator==(const Params&) const = default;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace optcoll::algorithms
