// SPDX-License-Identifier: Apache-2.0
// File: parameters of the hybrid (grid) algorithms (grid_params.h).
#include "optcoll/algorithms/grid_params.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/phase_estimate.h"
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

Estimate tree_grid_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                            const patterns::GridChoice& choice, bool reduce, std::string params) {
  Time down = 0;  // bcast: scatters and MST broadcasts; reduce: their mirror images
  Time up = 0;    // bcast: ring allgathers; reduce: ring reduce-scatters
  double elements = 0;
  double ops = 0;
  double lines = 1;  // lines of the current dimension that carry data in the down phase
  const double p = spec.nranks;
  Count s = spec.count;
  for (std::size_t i = 0; i < choice.dims.size(); ++i) {
    const Rank d = choice.dims[i];
    const auto sizes = patterns::even_sizes(s, d);
    const Count largest = sizes.empty() ? 0 : sizes[0];
    if (choice.kinds[i] == 'l') {
      down += reduce ? patterns::mst_gather_time(sizes, 0, costs)
                     : patterns::mst_scatter_time(sizes, 0, costs);
      up += reduce ? patterns::ring_reduce_scatter_time(d, largest, costs)
                   : patterns::ring_allgather_time(d, largest, costs);
      elements += lines * static_cast<double>(s) * ceil_log2(d) / 2 +
                  p / d * (d - 1) * static_cast<double>(s);
      ops += 2 * (lines * (d - 1) + p * (d - 1));
      s = largest;
    } else {
      const Time message = reduce ? costs.message_reduce(s) : costs.message(s);
      down += static_cast<Time>(ceil_log2(d)) * message;
      elements += lines * (d - 1) * static_cast<double>(s);
      ops += 2 * lines * (d - 1);
    }
    lines *= d;
  }
  const Time copy = reduce ? costs.copy_of(spec.count) : 0;
  return make_estimate(spec, copy + down + up, elements, ops + (reduce ? p : 0), false,
                       std::move(params));
}

Estimate ring_grid_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                            const std::vector<Rank>& dims, const std::vector<Count>& sizes,
                            bool reduce, Count copy_elements) {
  const patterns::Grid grid(dims);
  const auto prefix = patterns::prefix_of(sizes);
  const double p = spec.nranks;
  Time time = costs.copy_of(copy_elements);
  double elements = 0;
  double ops = p;
  for (int i = 0; i < grid.ndims(); ++i) {
    // Rank r's chunk at dimension i: the ranks sharing its coordinates 0..i.
    const Rank run = grid.stride(i);
    Count largest = 0;
    for (Rank first = 0; first < spec.nranks; first += run) {
      largest = std::max(largest, prefix[static_cast<std::size_t>(first + run)] -
                                      prefix[static_cast<std::size_t>(first)]);
    }
    const Rank d = grid.dim(i);
    time += reduce ? patterns::ring_reduce_scatter_time(d, largest, costs)
                   : patterns::ring_allgather_time(d, largest, costs);
    elements += (d - 1) * static_cast<double>(run) * static_cast<double>(prefix.back());
    ops += 2 * p * (d - 1);
  }
  return make_estimate(spec, time, elements, ops, false, "dims=" + patterns::dims_to_string(dims));
}

}  // namespace optcoll::algorithms
