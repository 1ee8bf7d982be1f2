// SPDX-License-Identifier: Apache-2.0
// File: Params parsing and typed access.
#include "optcoll/algorithms/params.h"

#include <charconv>

#include "optcoll/model/error.h"

namespace optcoll::algorithms {

Params Params::parse(std::string_view text) {
  Params params;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      throw_invalid("algorithm parameter '{}' must look like name=value", item);
    }
    params.set(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return params;
}

void Params::set(std::string name, std::string value) {
  values_[std::move(name)] = std::move(value);
}

bool Params::has(std::string_view name) const { return values_.find(name) != values_.end(); }

std::string_view Params::get(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw_invalid("algorithm parameter '{}' is not set", name);
  return it->second;
}

std::int64_t Params::get_int(std::string_view name) const {
  const auto text = get(name);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw_invalid("algorithm parameter {}={} is not an integer", name, text);
  }
  return value;
}

std::string Params::to_string() const {
  std::string text;
  for (const auto& [name, value] : values_) {
    if (!text.empty()) text += ',';
    text += name + "=" + value;
  }
  return text;
}

}  // namespace optcoll::algorithms
