// SPDX-License-Identifier: Apache-2.0
// File: `optcoll tune`'s engine: measure every applicable registry algorithm (and the
// parameter variants auto considers) over a grid of collectives x sizes at one p, on the
// backend the caller runs it on, and make a tuning table (optcoll/plan/tuning.h) and the
// figures of a report: predicted against measured for every run, and the regret of auto's
// choice (measured time of its pick / the best measured time at that point).
//
// How a candidate is timed (the way the OSU benchmarks time a call, on the path users call):
// its schedule is prepared once per rank (an Execution, as a Communicator keeps one), the
// buffers are allocated and first touched by their rank before any timing, then per round a
// barrier and `calls` back-to-back calls; a rank's time per call is its elapsed time / calls,
// and the round's time is the slowest rank's. `calls` is chosen from one probe call so that
// a round takes about TuneOptions::round_seconds. Rounds interleave the candidates (round 1:
// every candidate in turn, round 2: again, starting one further on), and a candidate's time
// is the median of its rounds. In the first round every candidate's output is checked
// against the naive reference where that fits in memory (TuneOptions::check_bytes).
//
// Example (threads, p = 4, the default grid):
//   TuneOptions o;
//   o.model = my_model;  // unset: the thread backend's default model
//   const TuneReport report = tune_on_threads(4, o);
//   write(tuning_to_json(report.table));
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/exec/transport.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/plan/tuning.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// One row of the grid: a collective, and for the v-kinds the distribution of its counts
// (Träff's; the block size is the grid's size).
struct TuneCase {
  CollectiveKind kind = CollectiveKind::kAllreduce;
  std::string counts = "regular";
};
// "allreduce", "gatherv:spikes" (v-kinds need a distribution). Error(kInvalidArgument)
// naming the problem.
TuneCase parse_tune_case(std::string_view text);
std::string tune_case_name(const TuneCase& c);
// The regret grid of the docs: allreduce, bcast, allgather, reduce_scatter_block, reduce,
// alltoall, gatherv with spikes and scatterv with skewed counts.
std::vector<TuneCase> default_tune_cases();
// min, min * factor, ... while <= max, and max itself.
std::vector<std::uint64_t> tune_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor);

struct TuneOptions {
  std::vector<TuneCase> cases = default_tune_cases();
  std::vector<std::uint64_t> sizes = tune_sizes(8, std::uint64_t{8} << 20, 8);  // per rank
  int rounds = 5;
  double round_seconds = 0.004;  // each round of a candidate takes about this long
  int max_calls = 500;           // ... but at most this many calls
  double budget_seconds = 0;     // stop after the point that exceeds it (0: no budget)
  Count dist_k = 5;              // the distributions' parameter (distributions.h)
  std::uint64_t seed = 1;
  // Predictions and auto's choice; unset: the backend's default (tune_model).
  std::optional<CostModel> model;
  std::string backend = "threads";  // recorded in the table
  // A table from an earlier run: its choice at each point is measured too (tuned regret).
  const TuningTable* previous = nullptr;
  std::chrono::milliseconds timeout{60000};
  // Check outputs against the naive reference when all ranks' outputs of a point hold at
  // most this many bytes together (the reference holds them all).
  std::uint64_t check_bytes = std::uint64_t{64} << 20;
};

// One candidate of a point: what runs, and the model's prediction.
struct TuneCandidate {
  std::string algorithm;  // registry name, or auto's composition "compose(a, b)"
  std::string variant;    // tuning.h's variants; "auto": auto's own choice that no variant
                          // gives (a composition): measured, but not in the table
  Schedule schedule;
  double predicted = 0;
};

struct TunePointPlan {
  TuneCase tune_case;
  std::uint64_t bytes = 0;
  CollectiveSpec spec;
  std::vector<TuneCandidate> candidates;
  std::size_t auto_pick = 0;                     // auto's choice under the model
  std::optional<std::size_t> tuned_pick;         // TuneOptions::previous's choice, if it has one
  std::vector<std::vector<std::byte>> expected;  // per rank, when checked (else empty)
};

// The model a tuning run predicts with: options.model, or default_model(options.backend),
// as a Communicator without a model takes it on threads (the thread backend's node model;
// tune_on_mpi gives the MPI transport's default as options.model).
CostModel tune_model(const TuneOptions& options);

// Plans every point of the grid for p ranks: each applicable algorithm with each variant
// (duplicates by parameters dropped), auto's choice (added when it is a composition) and the
// previous table's. Deterministic: every rank of an MPI run makes the same.
std::vector<TunePointPlan> plan_tune(const TuneOptions& options, Rank nranks);

struct TunePointResult {
  TuningPoint point;            // every registry candidate's measured time (the table's)
  std::vector<double> seconds;  // per candidate of the plan (compositions too)
  std::size_t best = 0;         // index into seconds: the fastest measured
  std::size_t auto_pick = 0;
  std::optional<std::size_t> tuned_pick;
  bool checked = false;            // outputs compared with the naive reference
  std::vector<std::string> wrong;  // candidates whose output differed (checked only)
};

struct TuneReport {
  TuningTable table;
  // The candidates' names and predictions: tune_on_threads fills it; a caller of
  // measure_tune keeps its plans alongside and may move them in.
  std::vector<TunePointPlan> plans;
  std::vector<TunePointResult> points;  // as many as were measured (the budget may stop it)
  bool budget_exhausted = false;
  double seconds = 0;  // the whole measurement
  std::string ran_on;  // "4 threads", "16 MPI processes" (also the table's source)
};

// Progress: points done, points in all, the point being measured ("allreduce 64 B").
using TuneProgress = std::function<void(std::size_t done, std::size_t total, const std::string&)>;

// Collective: every rank of `transport` calls it with the same plans and options; every rank
// returns the same report. Rank 0 reports progress.
TuneReport measure_tune(Transport& transport, const std::vector<TunePointPlan>& plans,
                        const TuneOptions& options, const TuneProgress& progress = {});

// plan_tune, then measure_tune on a ThreadWorld of `nranks` ranks.
TuneReport tune_on_threads(Rank nranks, const TuneOptions& options,
                           const TuneProgress& progress = {});

// The model's error over every measured run: |predicted / measured - 1|.
struct ModelError {
  std::size_t runs = 0;
  double median = 0;
  double p90 = 0;
};
ModelError model_error(const TuneReport& report);

}  // namespace optcoll
