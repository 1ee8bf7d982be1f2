// SPDX-License-Identifier: Apache-2.0
// File: why_not functions and parameter lists shared by many algorithms.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"

namespace optcoll::algorithms {

std::optional<std::string> no_restrictions(const CollectiveSpec& spec, const Params& params);
std::optional<std::string> needs_commutative(const CollectiveSpec& spec, const Params& params);
std::optional<std::string> needs_power_of_two(const CollectiveSpec& spec, const Params& params);

std::span<const ParamInfo> no_params();

}  // namespace optcoll::algorithms
