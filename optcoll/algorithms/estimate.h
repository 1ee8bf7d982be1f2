// SPDX-License-Identifier: Apache-2.0
// File: closed-form estimates of what a registry algorithm's schedule would cost, computed
// without building it: the registry's `estimate` hooks (algorithms.def, OPTCOLL_ESTIMATE),
// one per algorithm, written next to its builder. `auto` prices every candidate with them
// and simulates only a few finalists (optcoll/plan/select.h), which keeps selection cheap at
// any p: a ring's schedule has O(p^2) ops, its estimate takes O(1).
//
// An estimate is the algorithm's header formula as code, under the models the formulas are
// written for (closed_form_costs below): homogeneous alpha, beta, gamma and copy, one port,
// full duplex, no overlap, and no other switch (gaps, shared processors, shared sends,
// topology, pair matrices, and any field added to CostModel later). For any other model it
// is std::nullopt and selection simulates the candidate instead: a formula never prices a
// model it does not describe.
//
// `exact` marks an estimate that equals the simulated makespan (up to floating-point
// rounding) for this spec and model; tests/plan/exact_estimate_test.cc checks every such
// claim against the simulator over the registry grid and the models the formulas describe
// (tests/plan/select_equivalence_test.cc measures how far choices by the other estimates
// stray). Selection trusts exact estimates as it would a simulation;
// the others only rank candidates, and the few best are simulated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms {

struct Estimate {
  Time time = 0;            // the predicted (simulated) makespan
  std::uint64_t bytes = 0;  // what the schedule's messages carry, all ranks (select.h's ties)
  // About how many ops building and simulating the schedule touches (its ops, plus a
  // planner's steps where one runs first, in op-equivalents): what a simulation would cost.
  double work = 0;
  bool exact = false;  // time equals the simulation (see the file comment)
  // Under a model with a placement, which no flat algorithm's formula describes: the formula
  // under patterns::shared_network_model (search_steps.h), a ranking estimate only.
  bool at_inter_costs = false;
  // The parameters the builder would record (its "auto" values resolved), as
  // Schedule::params holds them; empty when it records none.
  std::string params;
};

// Per-element costs of the models the closed forms describe (see the file comment): a
// message of m > 0 elements takes alpha + beta·m (m = 0: nothing), a reduction gamma·m, a
// local copy copy·m (per-byte models: already multiplied by the element size).
struct LinkCosts {
  Time alpha = 0;
  Time beta = 0;
  Time gamma = 0;
  Time copy = 0;
  Time message(Count m) const { return m > 0 ? alpha + beta * static_cast<Time>(m) : 0; }
  // A message whose data are then reduced into the receiver's (RecvReduce).
  Time message_reduce(Count m) const { return m > 0 ? message(m) + reduce(m) : 0; }
  Time reduce(Count m) const { return gamma * static_cast<Time>(m); }
  Time copy_of(Count m) const { return copy * static_cast<Time>(m); }
};

// The per-element costs when `model` is one the formulas describe: every CostModel field
// other than alpha, beta, gamma, copy and per_byte at its default (compared as a whole, so
// a field added later is a switch the formulas do not know); std::nullopt otherwise.
std::optional<LinkCosts> closed_form_costs(const CollectiveSpec& spec, const CostModel& model);

// A model with a placement whose fields are otherwise the formulas' (alpha, beta, gamma,
// copy, per_byte, with inter_alpha, inter_beta and nic_ports: the two levels and the NICs,
// nothing else): a message within a node costs `intra`, one between nodes `inter`, and the
// messages that leave (or reach) a node at once take turns on its nic_ports channels. The
// butterfly formulas (patterns::ButterflyCosts) price their steps under it; others stay
// silent and are ranked at the shared network's costs (search_steps.h).
struct TwoLevelCosts {
  LinkCosts intra;
  LinkCosts inter;
  const Placement* placement = nullptr;  // the model's: valid while the model is
  int nic_ports = 1;
};
std::optional<TwoLevelCosts> two_level_costs(const CollectiveSpec& spec, const CostModel& model);

// Helpers shared by the formulas.
std::int64_t ceil_log2(std::int64_t p);   // 0 for p <= 1
std::int64_t floor_log2(std::int64_t p);  // p >= 1
bool is_power_of_two(std::int64_t p);
// ceil(log_k p) for k >= 2: the rounds of a radix-k tree.
std::int64_t ceil_log(std::int64_t p, std::int64_t k);
// An estimate of `elements` moved in `ops` ops.
Estimate make_estimate(const CollectiveSpec& spec, Time time, double elements, double ops,
                       bool exact, std::string params = {});

}  // namespace optcoll::algorithms
