// SPDX-License-Identifier: Apache-2.0
// File: parameters of the hybrid (grid) algorithms (grid_params.h).
#include "optcoll/algorithms/grid_params.h"

#include <array>

#include <fmt/format.h>

#include "optcoll/algorithms/restrictions.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kDims{"dims", "auto",
                          "logical grid, e.g. 4x8 (factors multiply to p; the last varies "
                          "fastest); auto: the grid the cost formula prefers under the model"};
constexpr ParamInfo kDims2d{"dims", "auto",
                            "2-D grid AxB (A x B = p; A: first dimension); auto: the one the "
                            "cost formula prefers under the model"};
constexpr ParamInfo kKinds{"kinds", "auto",
                           "one letter per dimension: l = scatter/allgather (long), s = MST "
                           "(short); auto: the cheapest under the model"};
constexpr std::array kDimsList{kDims};
constexpr std::array kDims2dList{kDims2d};
constexpr std::array kTreeList{kDims, kKinds};

std::string text_of(const Params& params, std::string_view name) {
  return params.has(name) ? std::string(params.get(name)) : std::string("auto");
}

}  // namespace

std::span<const ParamInfo> grid_dims_params() { return kDimsList; }
std::span<const ParamInfo> grid_tree_params() { return kTreeList; }
std::span<const ParamInfo> grid_dims_2d_params() { return kDims2dList; }

std::optional<std::string> grid_dims_ok(const CollectiveSpec& spec, const Params& params) {
  auto problem = patterns::dims_problem(text_of(params, "dims"), spec.nranks);
  if (problem.empty()) return std::nullopt;
  return problem;
}

std::optional<std::string> grid_dims_ok_commutative(const CollectiveSpec& spec,
                                                    const Params& params) {
  if (auto reason = needs_commutative(spec, params)) return reason;
  return grid_dims_ok(spec, params);
}

std::optional<std::string> grid_tree_ok(const CollectiveSpec& spec, const Params& params) {
  if (auto reason = grid_dims_ok(spec, params)) return reason;
  const std::string kinds = text_of(params, "kinds");
  if (kinds == "auto") return std::nullopt;
  if (kinds.empty() || kinds.find_first_not_of("ls") != std::string::npos) {
    return fmt::format("kinds={} must be letters l (long) or s (short), one per dimension", kinds);
  }
  const std::string dims = text_of(params, "dims");
  if (dims == "auto") return fmt::format("kinds={} needs explicit dims", kinds);
  const auto k = patterns::parse_dims(dims, spec.nranks).size();
  if (k != kinds.size()) {
    return fmt::format("kinds={} has {} letters but dims={} has {} dimensions", kinds, kinds.size(),
                       dims, k);
  }
  return std::nullopt;
}

std::optional<std::string> grid_tree_ok_commutative(const CollectiveSpec& spec,
                                                    const Params& params) {
  if (auto reason = needs_commutative(spec, params)) return reason;
  return grid_tree_ok(spec, params);
}

std::optional<std::string> grid_dims_2d_ok(const CollectiveSpec& spec, const Params& params) {
  if (auto reason = grid_dims_ok(spec, params)) return reason;
  const std::string dims = text_of(params, "dims");
  if (dims != "auto" && patterns::parse_dims(dims, spec.nranks).size() != 2) {
    return fmt::format("dims={} must have two factors (AxB)", dims);
  }
  return std::nullopt;
}

patterns::GridChoice resolve_tree_grid(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model, bool reduce,
                                       const std::string& kinds_fixed) {
  const std::string dims = text_of(params, "dims");
  std::string kinds = kinds_fixed.empty() ? text_of(params, "kinds") : kinds_fixed;
  if (kinds == "auto") kinds.clear();
  std::vector<Rank> fixed;
  if (dims != "auto") fixed = patterns::parse_dims(dims, spec.nranks);
  return patterns::best_tree_grid(spec.nranks, model.units(spec.count, spec.elem_bytes), reduce,
                                  model, fixed, kinds);
}

std::vector<Rank> resolve_ring_grid(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model, Count n, bool reduce) {
  const std::string dims = text_of(params, "dims");
  if (dims != "auto") return patterns::parse_dims(dims, spec.nranks);
  return patterns::best_ring_grid(spec.nranks, model.units(n, spec.elem_bytes), reduce, model);
}

}  // namespace optcoll::algorithms
