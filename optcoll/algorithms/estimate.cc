// SPDX-License-Identifier: Apache-2.0
// File: the building blocks of the registry's estimates (estimate.h).
#include "optcoll/algorithms/estimate.h"

#include <cmath>
#include <utility>

namespace optcoll::algorithms {

namespace {

// The model the formulas describe, built from the fields they read (alpha, beta, gamma, copy,
// per_byte); any other field that differs from its default (a gap, cores, a topology, pair
// matrices, ports, half duplex, overlap, shared sends, or a field this code has never heard
// of) makes them silent.
CostModel formula_fields(const CostModel& model) {
  CostModel described;
  described.alpha = model.alpha;
  described.beta = model.beta;
  described.gamma = model.gamma;
  described.copy = model.copy;
  described.per_byte = model.per_byte;
  return described;
}

// The per-element costs of a level with latency `alpha` and time per unit `beta`.
LinkCosts level_costs(const CollectiveSpec& spec, const CostModel& model, Time alpha, Time beta) {
  const double unit = model.units(1, spec.elem_bytes);
  return LinkCosts{
      .alpha = alpha, .beta = beta * unit, .gamma = model.gamma * unit, .copy = model.copy * unit};
}

}  // namespace

std::optional<LinkCosts> closed_form_costs(const CollectiveSpec& spec, const CostModel& model) {
  if (!(model == formula_fields(model))) return std::nullopt;
  return level_costs(spec, model, model.alpha, model.beta);
}

std::optional<TwoLevelCosts> two_level_costs(const CollectiveSpec& spec, const CostModel& model) {
  if (!model.placement || model.placement->nranks() != spec.nranks) return std::nullopt;
  CostModel described = formula_fields(model);
  described.placement = model.placement;
  described.inter_alpha = model.inter_alpha;
  described.inter_beta = model.inter_beta;
  described.nic_ports = model.nic_ports;
  if (!(model == described)) return std::nullopt;
  return TwoLevelCosts{level_costs(spec, model, model.alpha, model.beta),
                       level_costs(spec, model, model.node_latency(), model.node_per_unit()),
                       &*model.placement, model.nic_ports};
}

std::int64_t ceil_log2(std::int64_t p) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

std::int64_t floor_log2(std::int64_t p) {
  std::int64_t log = 0;
  while (p > 1) {
    p /= 2;
    ++log;
  }
  return log;
}

bool is_power_of_two(std::int64_t p) { return p > 0 && (p & (p - 1)) == 0; }

std::int64_t ceil_log(std::int64_t p, std::int64_t k) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= k) ++rounds;
  return rounds;
}

Estimate make_estimate(const CollectiveSpec& spec, Time time, double elements, double ops,
                       bool exact, std::string params) {
  return Estimate{.time = time,
                  .bytes = static_cast<std::uint64_t>(
                      std::llround(elements * static_cast<double>(spec.elem_bytes))),
                  .work = ops,
                  .exact = exact,
                  .params = std::move(params)};
}

}  // namespace optcoll::algorithms
