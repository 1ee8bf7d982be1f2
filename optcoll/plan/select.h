// SPDX-License-Identifier: Apache-2.0
// File: choosing an algorithm for a call. `plan()` returns the schedule to run with its
// predicted time, and, for "auto", every candidate the registry has for the collective with
// its predicted time, how it was obtained, or the reason it does not apply (explain()).
// `decide()` makes the same choice without building the chosen schedule (what a caller
// that needs only the algorithm and its parameters asks).
//
// Selection order (docs/design.md, Selection): an explicit algorithm name; otherwise the least
// predicted time among the registry's applicable algorithms. Near-ties — candidates predicted
// within kTieTolerance of the least time — go to the one that moves the fewest bytes in all (then
// the earlier registry entry): the model often cannot tell them apart (a linear gather and a
// binomial tree tie on bandwidth through the root's one port), and the bytes a tree
// forwards cost what the model does not see (the forwarding ranks' processors and memory, a
// link's other traffic; docs/design.md, "Near-ties").
// Parameters: each candidate is tried with its declared defaults ("auto" values are resolved
// by the builder from the model, e.g. the segment size minimizing its cost formula), then
// with a few variants (radix 2, 3, 4, 8; the segment size halved and doubled); the
// fastest is kept (ties: the defaults, then the earlier variant) and reported with its
// parameters.
// Compositions (plan/compose.h): for allreduce, allgather(v), reduce_scatter(_block) and
// bcast, one more candidate "compose(A, B)": the best registry plan of each phase (reduce +
// bcast, gather(v) + bcast, reduce + scatter(v), scatterv + allgatherv) as one schedule; it
// is chosen only when strictly faster than the registry's choice.
//
// How candidates are priced (docs/design.md, Selection). Simulating every candidate costs the sum
// of their schedules (a ring's has O(p^2) ops: seconds and gigabytes at p = 1024, out of memory at
// p = 65536), so by default `auto` prices candidates by their cost formulas (algorithms/estimate.h:
// every registry algorithm has one, as code) and simulates few:
//  1. every candidate and parameter variant gets its estimate; an estimate the formula's
//     test proves exact (`exact`) counts as a prediction, the others only rank;
//  2. the inexact estimates within kFinalistWindow of the least time are simulated, least
//     first, while their work (about their schedules' ops) fits PlanOptions::
//     simulation_budget: at small p that is every plausible winner, so the choice is the
//     simulator's; at large p the formulas decide, and the schedules that would cost
//     gigabytes are never built;
//  3. under a model a formula does not describe (estimate.h: gaps, shared processors,
//     topologies, pair matrices, several ports, half duplex, overlap, any new switch) there
//     is no estimate and the candidate is simulated as the exhaustive search does, skipped
//     only when its registry bound shows it cannot win (or, with a schedule too large to
//     simulate, listed as not evaluated);
//  4. the choice is made among the simulated times and remaining estimates by the rules
//     above; plan() takes the chosen schedule from the search where the search simulated it
//     (it keeps the fastest schedule it simulated, one at a time), or builds and simulates
//     it, and should its time exceed its
//     estimate so that another candidate now looks faster, re-chooses with that knowledge
//     (each step builds one schedule) until the chosen one's time is a simulation; a choice
//     priced by an exact formula whose schedule exceeds kResimulatedExactOps keeps the
//     formula's time (tests/plan/exact_estimate_test.cc holds those formulas to the
//     simulator); a plan for one rank (PlanOptions::only_rank) builds that rank's program
//     alone where its time needs no whole schedule, and takes an inexact formula's time
//     without a confirmation where the whole schedule would exceed kOneRankBuildWork.
// PlanOptions::exhaustive keeps the reference procedure: every candidate simulated (with the
// bound pruning of select.cc, which changes nothing but what is built). tests/plan/
// select_equivalence_test.cc checks that the default choice is the exhaustive one, or within
// 1% of its predicted time, on the registry grid under every model switch.
// explain() says for every candidate whether it was simulated, estimated by its formula
// (exact or not), pruned by its bound, or not evaluated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// Relative width of a near-tie in auto selection (see the file comment).
inline constexpr double kTieTolerance = 0.01;
// Inexact estimates within this factor of the least time are simulated, budget permitting.
inline constexpr double kFinalistWindow = 0.25;
// The default PlanOptions::simulation_budget, in op-equivalents: a few finalists at p in the
// hundreds, none of the O(p^2)-op schedules beyond p of about 100.
inline constexpr double kDefaultSimulationBudget = 1 << 15;
// plan() simulates its choice to report its time, unless the time is an exact formula's
// (algorithms/estimate.h) and the schedule has more ops than this (about a second to
// simulate): the formula is the simulation's time then, up to rounding.
inline constexpr std::size_t kResimulatedExactOps = std::size_t{1} << 20;
// A plan for one rank (PlanOptions::only_rank) is built for that rank alone (OneRankBuild,
// schedule/builder.h) whenever no whole schedule is needed for its time: the search
// simulated its choice, or priced it by an exact formula, or by an inexact one whose whole
// schedule would take more than this many op-equivalents (algorithms::Estimate::work) to
// build and simulate. That last one is not confirmed by a simulation (plan() otherwise
// simulates an estimated choice and re-chooses if it was slower). Every MPI process plans its
// calls; at p = 4,096 the whole alltoall it would build has 33.5 M ops and 5 GB.
inline constexpr double kOneRankBuildWork = 1 << 20;
// The default PlanOptions::workers. Measured (docs/performance.md, "Selection and planning at
// scale"): the exhaustive allreduce at p = 1024 on 2 cores from 47 s to about half. Not more
// by default: every MPI rank plans at once, each in its own process.
inline constexpr unsigned kDefaultPlanningWorkers = 2;

// How a candidate's time was obtained.
enum class Evaluation : std::uint8_t {
  kSimulated,      // its schedule was built and simulated
  kExactEstimate,  // its cost formula, which equals the simulation for this spec and model
  kEstimated,      // its cost formula, not simulated (a ranking estimate)
  kInterCosts,     // under a placement: its formula at the inter-node costs with the NICs
                   // shared (patterns::shared_network_model; a ranking estimate)
  kPruned,         // not built: its lower bound exceeded the best prediction
  kNotEvaluated,   // not built: its schedule is too large to simulate (why_not says why)
  kNotApplicable,  // why_not says why
};
std::string_view evaluation_name(Evaluation how);

struct Candidate {
  std::string algorithm;          // registry name, "bcast/binomial"
  std::optional<Time> predicted;  // simulated or estimated time (see `how`), when evaluated
  std::string why_not;            // why it was skipped, when not applicable or not evaluated
  std::string params;             // the parameters its schedule was (or would be) built with
  std::uint64_t bytes_moved = 0;  // evaluated: the bytes its messages carry, all ranks
  // Pruned: its registry lower bound, which exceeded the best prediction.
  std::optional<Time> bound;
  Evaluation how = Evaluation::kNotApplicable;
};

struct PlanOptions {
  // Simulate every candidate (the reference procedure; slow at large p). The default prices
  // candidates by their formulas and simulates a few finalists (see the file comment).
  bool exhaustive = false;
  // Exhaustive search only: skip building the candidates whose registry bound (algorithms.def,
  // OPTCOLL_BOUND) shows they cannot win; the choice is the same either way. false implies
  // exhaustive: every candidate gets a simulated prediction.
  bool prune = true;
  // Op-equivalents (algorithms::Estimate::work) the default search may spend simulating
  // finalists; 0: formulas only (candidates without a formula for the model are still
  // simulated).
  double simulation_budget = kDefaultSimulationBudget;
  // Threads that evaluate candidates, the caller's included (at least 1; never more than
  // the machine's processors or the candidates). The choice is the same for any number:
  // it changes how fast, not what (so equality leaves it out). A process whose other
  // threads wait for the plan (a ThreadWorld's ranks sharing a PlanCache) gives it their
  // processors.
  unsigned workers = kDefaultPlanningWorkers;
  // The rank of a process that runs only that rank of the call (an MPI process): the plan
  // keeps that rank's program only (Plan::only_rank), built for it alone where its time
  // needs no whole schedule (kOneRankBuildWork). Like `workers`, left out of equality: the
  // decisions it caches are the ones decide() makes.
  std::optional<Rank> only_rank = std::nullopt;

  bool is_exhaustive() const { return exhaustive || !prune; }
  bool operator==(const PlanOptions& other) const {
    return exhaustive == other.exhaustive && prune == other.prune &&
           simulation_budget == other.simulation_budget;
  }
};

// The bytes all of `schedule`'s messages carry (the sends' slices times the element size).
std::uint64_t bytes_moved(const Schedule& schedule);

// What auto decides, without the chosen schedule: the algorithm and its parameters, as the
// Communicator, the C API and the PMPI library need them.
struct Decision {
  std::string algorithm;      // registry name, or "compose(A, B)"
  algorithms::Params params;  // the parameters to build it with (auto values resolved)
  Time predicted_time = 0;
  Evaluation how = Evaluation::kSimulated;  // of predicted_time: simulated or estimated
  // A composition: its phases' algorithms and parameters.
  struct Phase {
    std::string algorithm;
    algorithms::Params params;
  };
  std::vector<Phase> phases;
  // Every candidate considered, as Plan::candidates.
  std::vector<Candidate> candidates;
};

struct Plan {
  Schedule schedule;
  std::string algorithm;
  algorithms::Params params;
  Time predicted_time = 0;  // the chosen schedule's makespan, simulated or its formula's
  std::optional<Time> lower_bound;
  CostModel model;  // the model the predictions are in
  // Who chose the algorithm, for explanations: empty when plan() did (the model, or the
  // caller's explicit name); plan_tuned (tuning.h) says whether a tuning table or the model
  // decided, and why.
  std::string decided_by;
  // Every candidate considered: evaluated ones sorted by predicted time (ties in registry
  // order), then those not built by their bound, then those not evaluated, then the
  // inapplicable ones in registry order. One entry for an explicit choice.
  std::vector<Candidate> candidates;
  // Set when the plan keeps one rank's program only (PlanOptions::only_rank, PlanCache::get
  // for an MPI process): the other ranks' programs are empty, so the schedule is not one to
  // verify, simulate or run on their ranks.
  std::optional<Rank> only_rank;

  // A table: one line per candidate with its predicted time (and ratio to the best) and how
  // it was obtained, or its reason; the chosen one marked.
  std::string explain() const;
};

// `algorithm` is "auto", a registry name ("gatherv/binomial") or a short name ("binomial").
// Parameters apply only to an explicit algorithm. Throws Error(kInvalidArgument) for a bad
// spec, model, name or parameter, Error(kNotApplicable) for an explicit inapplicable
// algorithm (with its why_not reason).
Plan plan(const CollectiveSpec& spec, const CostModel& model, std::string_view algorithm = "auto",
          const algorithms::Params& params = {}, const PlanOptions& options = {});

// plan()'s choice without building it (for an explicit algorithm: its parameters resolved
// and its time, estimated where its formula is exact or its schedule too large, simulated
// otherwise). Decisions for auto are cached by call shape (spec, model and options; a few
// hundred, least recently used first out), so a process asking again pays nothing.
Decision decide(const CollectiveSpec& spec, const CostModel& model,
                std::string_view algorithm = "auto", const algorithms::Params& params = {},
                const PlanOptions& options = {});

// Empties decide()'s cache (benchmarks measure first calls; a process never needs it).
void clear_decision_cache();

// For rooted collectives whose root the caller leaves to optcoll (`--root best`): the plan
// with the least predicted time over every root (spec.root is ignored; ties: lowest root).
// An explicit algorithm with a best-root hook (optcoll/algorithms/planners/best_root.h) is
// asked for its root instead and planned once (its own tie-breaking). For auto, the default
// search decides every root up to kAllRootsUpTo ranks; above, the roots worth deciding are
// those the candidates' cheap hooks and formulas single out (select.cc), so the search costs
// a few decisions rather than p plans. Throws Error(kInvalidArgument) for non-rooted kinds
// or nranks above `max_ranks`.
inline constexpr Rank kAllRootsUpTo = 64;
Plan plan_best_root(const CollectiveSpec& spec, const CostModel& model,
                    std::string_view algorithm = "auto", const algorithms::Params& params = {},
                    Rank max_ranks = 1 << 16, const PlanOptions& options = {});

}  // namespace optcoll
