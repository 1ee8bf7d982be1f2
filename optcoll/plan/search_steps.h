// SPDX-License-Identifier: Apache-2.0
// File: the steps the default and the exhaustive searches (search.h) are made of: listing
// the candidates, pricing them by formula, simulating them (on two threads), pruning by
// bounds. Internal to optcoll/plan.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "optcoll/plan/search.h"

namespace optcoll::search {

// Schedules larger than this (op-equivalents, algorithms::Estimate::work: about 2 GB) are
// not built to price a candidate: it is listed as not evaluated instead.
inline constexpr double kMaxSimulatedWork = 1e7;

// The op-equivalents of building `info`'s schedule for `spec` that are not ops: Träff's
// optimal-tree DP over all p ranks under per-pair costs (a placement or pair matrices:
// planners/nonhomogeneous_tree_dp.cc, O(p^4) time in practice, O(p^3) memory), which the
// gather and scatter optimal trees and bcast and reduce optimal_ordered run there, priced at
// p^4 / 1000 (measured on the project machine: each took about 4 s at p = 256 and 50 s at
// p = 512 under a 16-rank-per-node placement, against a microsecond or so per simulated op).
// 0 for every other algorithm and model. Without it the search built them at any p: auto's
// plan of an allgather of 4 KiB per rank on 32 nodes x 16 ranks took 104 s.
double pair_cost_dp_work(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                         const CostModel& model);

// Runs fn(i) for every i in [0, n) on up to `workers` threads (PlanOptions::workers), the
// caller's included, each index once. The candidates are independent (builders and the simulator
// are pure functions of their arguments) and fn writes only index i's results, so the outcome is
// the same as one thread's. Rethrows the failure of the lowest failing index once all have stopped.
void parallel_for(std::size_t n, unsigned workers, const std::function<void(std::size_t)>& fn);

// Every registry algorithm of spec's kind, in registry order, with why it does not apply
// (with its default parameters; the node-aware ones only under a model with a placement).
std::vector<Entry> make_entries(const CollectiveSpec& spec, const CostModel& model);

// Prepares an applicable entry: its registry bound, its defaults and (with `price`) their
// estimate under the model, and when there is one the variants' (select.h: radix 2, 3, 4,
// 8; the resolved segment halved and doubled), each with its work. Under a model with a
// placement, which no flat algorithm's formula describes, a flat algorithm is estimated by
// its formula with every pair at the inter-node costs, each message waiting its turn at the
// NICs of the largest node (patterns::shared_network_model; Estimate::at_inter_costs: a
// ranking estimate, the finalists are simulated): without it every flat candidate would be
// simulated at the call's p, or not evaluated past kMaxSimulatedWork. A candidate no formula prices
// gets its variants when simulated; if its schedule would exceed kMaxSimulatedWork it is
// marked not evaluated.
void prepare_entry(Entry& e, const CollectiveSpec& spec, const CostModel& model, bool price);

// Candidates no formula prices are simulated; when simulating all of `which` would cost more
// than kUnpricedWork op-equivalents (large p under a gap, cores, topology... model), only
// those the formulas rank first under the model's closed-form part are, while their work
// fits kUnpricedWork; the others are marked not evaluated, with the reason. At least one is
// simulated: if the first alone does not fit, it is, with its defaults only (no parameter
// variants: under a placement at p = 4,096 reduce/circulant's variants with halved segments
// have 7 M ops, most of planning a reduce whose node-aware candidate wins by 10x). A plan
// for one rank (PlanOptions::only_rank) simulates none beyond kOneRankBuildWork while some
// candidate has an estimate to choose by: those keep their estimate or are not evaluated.
// Returns the ones to simulate, in registry order.
inline constexpr double kUnpricedWork = 2e6;
std::vector<std::size_t> rank_unpriced(Search& s, const std::vector<std::size_t>& which);

// Builds and simulates one option; keeps its time, bytes and resolved parameters, and offers
// the schedule to `kept` (if not null).
void simulate_option(Option& o, const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                     const CostModel& model, KeptSchedule* kept);

// Simulates the entries `which` (defaults, then variants from the defaults' resolved
// parameters): first those without a registry bound, then, once those are known, the ones
// whose bound is within kTieTolerance of threshold() (the best prediction so far; nullopt:
// no pruning); the others are marked pruned. Which are built does not depend on timing.
void simulate_entries(Search& s, const std::vector<std::size_t>& which,
                      const std::function<std::optional<Time>()>& threshold);

// The work of the option (or composition) a decision of `s` chose.
double chosen_work(const Search& s, const Decision& d);
// Builds and simulates s.composed, charging its work to the budget.
void simulate_composed(Search& s);

}  // namespace optcoll::search
