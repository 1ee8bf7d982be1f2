// SPDX-License-Identifier: Apache-2.0
// File: expands algorithms.def into declarations, into the tables of lower bounds, of
// estimates and of best-root hooks, then into the AlgorithmInfo table (which takes each
// algorithm's bound, estimate and hook from them), and into the fixed-order list.
#include "optcoll/algorithms/registry.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "optcoll/algorithms/restrictions.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms {

#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions) \
  Schedule builder(const CollectiveSpec&, const Params&, const CostModel&);                        \
  std::optional<std::string> why_not(const CollectiveSpec&, const Params&);                        \
  std::span<const ParamInfo> params();
#define OPTCOLL_BOUND(collective, name, bound) \
  std::optional<Time> bound(const CollectiveSpec&, const CostModel&);
#define OPTCOLL_ESTIMATE(collective, name, estimate) \
  std::optional<Estimate> estimate(const CollectiveSpec&, const Params&, const CostModel&);
#define OPTCOLL_FIXED_ORDER(collective, name)
#define OPTCOLL_BEST_ROOT(collective, name, hook) \
  std::optional<Rank> hook(const CollectiveSpec&, const Params&, const CostModel&, bool);
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE

namespace {

constexpr CollectiveKind kind_named(std::string_view name) {
  if (const auto kind = parse_collective(name)) return *kind;
  throw "algorithms.def names an unknown collective";  // a compile error in constant evaluation
}

// One algorithms.def line's function, by the algorithm's name ("collective/name").
template <typename Fn>
struct Named {
  std::string_view name;
  Fn fn;
};

// The function `table` holds for `name`, or nullptr.
template <typename Fn, std::size_t N>
constexpr Fn named(const Named<Fn> (&table)[N], std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

constexpr Named<BoundFn> kBounds[] = {
#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions)
#define OPTCOLL_BOUND(collective, name, bound) Named<BoundFn>{#collective "/" #name, &bound},
#define OPTCOLL_ESTIMATE(collective, name, estimate)
#define OPTCOLL_FIXED_ORDER(collective, name)
#define OPTCOLL_BEST_ROOT(collective, name, hook)
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE
};

constexpr Named<EstimateFn> kEstimates[] = {
#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions)
#define OPTCOLL_BOUND(collective, name, bound)
#define OPTCOLL_ESTIMATE(collective, name, estimate) \
  Named<EstimateFn>{#collective "/" #name, &estimate},
#define OPTCOLL_FIXED_ORDER(collective, name)
#define OPTCOLL_BEST_ROOT(collective, name, hook)
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE
};

constexpr Named<BestRootFn> kBestRoots[] = {
#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions)
#define OPTCOLL_BOUND(collective, name, bound)
#define OPTCOLL_ESTIMATE(collective, name, estimate)
#define OPTCOLL_FIXED_ORDER(collective, name)
#define OPTCOLL_BEST_ROOT(collective, name, hook) Named<BestRootFn>{#collective "/" #name, &hook},
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE
};

constexpr AlgorithmInfo kAlgorithms[] = {
#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions) \
  AlgorithmInfo{#collective "/" #name,                                                             \
                kind_named(#collective),                                                           \
                summary,                                                                           \
                cost,                                                                              \
                restrictions,                                                                      \
                &builder,                                                                          \
                &why_not,                                                                          \
                &params,                                                                           \
                named(kBounds, #collective "/" #name),                                             \
                named(kEstimates, #collective "/" #name),                                          \
                named(kBestRoots, #collective "/" #name)},
#define OPTCOLL_BOUND(collective, name, bound)
#define OPTCOLL_ESTIMATE(collective, name, estimate)
#define OPTCOLL_FIXED_ORDER(collective, name)
#define OPTCOLL_BEST_ROOT(collective, name, hook)
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE
};

constexpr bool names_an_algorithm(std::string_view name) {
  for (const auto& info : kAlgorithms) {
    if (info.name == name) return true;
  }
  return false;
}

// Every OPTCOLL_BOUND line names an algorithm of the list.
constexpr bool every_bound_names_an_algorithm() {
  for (const auto& [name, bound] : kBounds) {
    if (!names_an_algorithm(name)) return false;
  }
  return true;
}
static_assert(every_bound_names_an_algorithm(), "an OPTCOLL_BOUND line names no algorithm");

// Every OPTCOLL_BEST_ROOT line names an algorithm of the list.
constexpr bool every_best_root_names_an_algorithm() {
  for (const auto& [name, best_root] : kBestRoots) {
    if (!names_an_algorithm(name)) return false;
  }
  return true;
}
static_assert(every_best_root_names_an_algorithm(), "an OPTCOLL_BEST_ROOT line names no algorithm");

// Every algorithm has exactly one OPTCOLL_ESTIMATE line, and every line names an algorithm.
constexpr bool every_algorithm_has_one_estimate() {
  for (const auto& info : kAlgorithms) {
    int lines = 0;
    for (const auto& [name, estimate] : kEstimates) lines += name == info.name ? 1 : 0;
    if (lines != 1) return false;
  }
  for (const auto& [name, estimate] : kEstimates) {
    if (!names_an_algorithm(name)) return false;
  }
  return true;
}
static_assert(every_algorithm_has_one_estimate(),
              "every OPTCOLL_ALGORITHM needs one OPTCOLL_ESTIMATE line (and no other)");

std::string known_names(CollectiveKind kind) {
  std::string names;
  for (const auto& info : kAlgorithms) {
    if (info.collective != kind) continue;
    if (!names.empty()) names += ", ";
    names += info.short_name();
  }
  return names.empty() ? std::string("none") : names;
}

}  // namespace

std::span<const AlgorithmInfo> all_algorithms() { return kAlgorithms; }

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& info : kAlgorithms) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<const AlgorithmInfo*> algorithms_for(CollectiveKind kind) {
  std::vector<const AlgorithmInfo*> found;
  for (const auto& info : kAlgorithms) {
    if (info.collective == kind) found.push_back(&info);
  }
  return found;
}

// The algorithms that combine in the fixed left fold (OPTCOLL_FIXED_ORDER lines).
constexpr std::string_view kFixedOrder[] = {
#define OPTCOLL_ALGORITHM(collective, name, builder, why_not, params, summary, cost, restrictions)
#define OPTCOLL_BOUND(collective, name, bound)
#define OPTCOLL_ESTIMATE(collective, name, estimate)
#define OPTCOLL_FIXED_ORDER(collective, name) #collective "/" #name,
#define OPTCOLL_BEST_ROOT(collective, name, hook)
#include "optcoll/algorithms/algorithms.def"
#undef OPTCOLL_FIXED_ORDER
#undef OPTCOLL_BEST_ROOT
#undef OPTCOLL_ALGORITHM
#undef OPTCOLL_BOUND
#undef OPTCOLL_ESTIMATE
};

// Every OPTCOLL_FIXED_ORDER line names an algorithm of the list.
constexpr bool every_fixed_order_names_an_algorithm() {
  for (const std::string_view name : kFixedOrder) {
    if (!names_an_algorithm(name)) return false;
  }
  return true;
}
static_assert(every_fixed_order_names_an_algorithm(),
              "an OPTCOLL_FIXED_ORDER line names no OPTCOLL_ALGORITHM");

bool combines_in_fixed_order(const AlgorithmInfo& info) {
  return std::find(std::begin(kFixedOrder), std::end(kFixedOrder), info.name) !=
         std::end(kFixedOrder);
}

std::optional<std::string> why_not(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                   const Params& params) {
  if (spec.reproducible && !combines_in_fixed_order(info)) {
    return std::string(
        "combines in its own association, not the fixed left fold that 'reproducible' requires "
        "(use the 'reproducible' algorithm of this collective)");
  }
  return info.why_not(spec, params);
}

Params resolve_params(const AlgorithmInfo& info, const Params& given) {
  const auto declared = info.params();
  for (const auto& entry : given.values()) {
    const std::string& name = entry.first;  // (clang 14 cannot capture a structured binding)
    const bool known = std::any_of(declared.begin(), declared.end(),
                                   [&](const ParamInfo& p) { return p.name == name; });
    if (!known) {
      std::string names;
      for (const auto& p : declared) names += (names.empty() ? "" : ", ") + std::string(p.name);
      throw_invalid("{} has no parameter '{}' (it takes: {})", info.name, name,
                    names.empty() ? "no parameters" : names);
    }
  }
  Params resolved = given;
  for (const auto& p : declared) {
    if (!resolved.has(p.name)) resolved.set(std::string(p.name), std::string(p.default_value));
  }
  return resolved;
}

Schedule build(const AlgorithmInfo& info, const CollectiveSpec& spec, const Params& params,
               const CostModel& model) {
  validate(spec);
  validate_for(model, spec.nranks);
  if (spec.kind != info.collective) {
    throw_invalid("{} is an algorithm for {}, not for {}", info.name,
                  collective_name(info.collective), collective_name(spec.kind));
  }
  const Params resolved = resolve_params(info, params);
  if (auto reason = why_not(info, spec, resolved)) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("{} does not apply to {}: {}", info.name, describe(spec), *reason));
  }
  Schedule schedule = info.build(spec, resolved, model);
  if (schedule.params.empty()) schedule.params = resolved.to_string();
  return schedule;
}

const AlgorithmInfo& lookup(std::string_view name, CollectiveKind kind) {
  const std::string full = name.find('/') == std::string_view::npos
                               ? fmt::format("{}/{}", collective_name(kind), name)
                               : std::string(name);
  const AlgorithmInfo* info = find_algorithm(full);
  if (info == nullptr) {
    throw_invalid("unknown algorithm '{}' for {} (known: {})", name, collective_name(kind),
                  known_names(kind));
  }
  if (info->collective != kind) {
    throw_invalid("{} is an algorithm for {}, not for {}", info->name,
                  collective_name(info->collective), collective_name(kind));
  }
  return *info;
}

Schedule build(std::string_view name, const CollectiveSpec& spec, const Params& params,
               const CostModel& model) {
  return build(lookup(name, spec.kind), spec, params, model);
}

}  // namespace optcoll::algorithms
