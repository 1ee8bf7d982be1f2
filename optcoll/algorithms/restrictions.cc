// SPDX-License-Identifier: Apache-2.0
// File: shared why_not functions.
#include "optcoll/algorithms/restrictions.h"

#include <fmt/format.h>

namespace optcoll::algorithms {

std::optional<std::string> no_restrictions(const CollectiveSpec& /*spec*/,
                                           const Params& /*params*/) {
  return std::nullopt;
}

std::optional<std::string> needs_commutative(const CollectiveSpec& spec, const Params& /*params*/) {
  if (spec.commutative) return std::nullopt;
  return std::string("needs a commutative operator (it combines contributions out of rank order)");
}

std::optional<std::string> needs_power_of_two(const CollectiveSpec& spec,
                                              const Params& /*params*/) {
  if (spec.nranks > 0 && (spec.nranks & (spec.nranks - 1)) == 0) return std::nullopt;
  return fmt::format("needs a power-of-two number of ranks, got {}", spec.nranks);
}

std::span<const ParamInfo> no_params() { return {}; }

}  // namespace optcoll::algorithms
