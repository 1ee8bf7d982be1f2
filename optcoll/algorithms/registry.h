// SPDX-License-Identifier: Apache-2.0
// File: the registry of algorithms, expanded from algorithms.def: the one list that the CLI,
// selection, documentation, tests and benchmarks all read.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms {

// Builders receive the cost model: most ignore it, but algorithms whose shape is optimized
// for the model (optimal trees, greedy reductions) are built for the model they will run
// under. A builder must be deterministic in (spec, params, model).
using BuildFn = Schedule (*)(const CollectiveSpec&, const Params&, const CostModel&);
// Empty if the algorithm applies; otherwise a human reason ("needs commutative operator").
using WhyNotFn = std::optional<std::string> (*)(const CollectiveSpec&, const Params&);
using ParamsFn = std::span<const ParamInfo> (*)();
// A lower bound on the simulated time of every schedule the builder makes for (spec, any
// parameters, model), computed without building one (bounds.h); nullopt when the algorithm
// does not apply or no bound is known for this model.
using BoundFn = std::optional<Time> (*)(const CollectiveSpec&, const CostModel&);
// The algorithm's cost formula as code (estimate.h): the time, bytes and work of the
// schedule the builder would make for (spec, resolved params, model), without making it;
// std::nullopt for a model the formula does not describe.
using EstimateFn = std::optional<Estimate> (*)(const CollectiveSpec&, const Params&,
                                               const CostModel&);
// The root the algorithm's planner would choose for the spec (spec.root ignored), without
// building a schedule, or std::nullopt where it cannot answer (planners/best_root.h,
// planned_best_root, says when; `allow_dp` as there).
using BestRootFn = std::optional<Rank> (*)(const CollectiveSpec&, const Params&, const CostModel&,
                                           bool allow_dp);

struct AlgorithmInfo {
  std::string_view name;  // "allgather/ring": "<collective>/<algorithm>"
  CollectiveKind collective;
  std::string_view summary;
  std::string_view cost;          // the header's cost formula
  std::string_view restrictions;  // what why_not enforces, in words
  BuildFn build;
  WhyNotFn why_not;
  ParamsFn params;
  // Set for the algorithms whose schedules are large (O(p^2) ops) and rarely win at large p:
  // selection skips building them when the bound shows they cannot (OPTCOLL_BOUND lines of
  // algorithms.def).
  BoundFn bound = nullptr;
  // Every algorithm has one (OPTCOLL_ESTIMATE lines of algorithms.def; registry.cc checks).
  EstimateFn estimate = nullptr;
  // Set for the algorithms whose planner knows its best root (OPTCOLL_BEST_ROOT lines of
  // algorithms.def; planners/best_root.h).
  BestRootFn best_root = nullptr;

  std::string_view short_name() const { return name.substr(name.find('/') + 1); }
};

std::span<const AlgorithmInfo> all_algorithms();
const AlgorithmInfo* find_algorithm(std::string_view name);  // nullptr if unknown
std::vector<const AlgorithmInfo*> algorithms_for(CollectiveKind kind);

// Why `info` cannot serve `spec` (empty if it can): its own why_not, and for reproducible
// specs, whether it combines in the fixed association (combines_in_fixed_order). Every
// caller asks this, never info.why_not directly.
std::optional<std::string> why_not(const AlgorithmInfo& info, const CollectiveSpec& spec,
                                   const Params& params);

// True for the algorithms whose every combination is the left fold in rank order, for every
// p, root and counts (what CollectiveSpec::reproducible requires; the verifier proves it).
bool combines_in_fixed_order(const AlgorithmInfo& info);

// Fills in defaults; throws Error(kInvalidArgument) for a parameter the algorithm does not
// declare (the message lists the ones it does).
Params resolve_params(const AlgorithmInfo& info, const Params& given);

// The checked way to build: validates the spec, resolves parameters, and consults why_not.
// Throws Error(kInvalidArgument) for a bad spec or parameter and Error(kNotApplicable) with
// the why_not reason.
// `model` matters only to model-optimized algorithms; the default is the unit model of the
// papers (alpha = beta = 1).
Schedule build(const AlgorithmInfo& info, const CollectiveSpec& spec, const Params& params = {},
               const CostModel& model = {});

// As above by name. `name` is "<collective>/<algorithm>" or just "<algorithm>" (looked up
// under spec.kind). Unknown names throw Error(kInvalidArgument) listing the known ones.
const AlgorithmInfo& lookup(std::string_view name, CollectiveKind kind);
Schedule build(std::string_view name, const CollectiveSpec& spec, const Params& params = {},
               const CostModel& model = {});

}  // namespace optcoll::algorithms
