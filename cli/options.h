// SPDX-License-Identifier: Apache-2.0
// File: the option groups shared by the CLI's subcommands (docs/design.md, Command line and tests):
// PROBLEM (what collective call), MODEL (what things cost), and where a schedule comes from.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/plan/select.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::cli {

struct ProblemOptions {
  std::string collective;
  std::optional<Rank> nranks;  // -p; unset: default_nranks
  // The rank count when -p is not given (0: -p is required). `run --backend mpi` sets the
  // MPI world's size.
  Rank default_nranks = 0;
  std::optional<Count> count;
  std::string counts;  // "1,2,3" or "@file"
  std::string dist;    // one of the eleven distributions
  Count block_size = 1000;
  std::uint64_t seed = 1;
  std::string root = "0";  // a rank or "best"
  std::string dtype = "double";
  std::string op = "sum";
  bool noncommutative = false;
  bool reproducible = false;

  // `collective_required`: a positional collective name (false where --schedule may replace it).
  void add_to(CLI::App& app, bool collective_required = true);
  bool given() const { return !collective.empty(); }
  bool best_root() const { return root == "best"; }
  // Builds and validates the spec; throws Error(kInvalidArgument) naming the problem.
  CollectiveSpec spec() const;
};

// The MODEL options: a base model and one option per field of the cost model's table
// (optcoll/model/cost_model_fields.def): --alpha, --send-mode, --per-byte, ...
struct ModelOptions {
  std::string file;
  bool abstract = false;  // start from alpha = beta = 1, gamma = copy = 0 instead of the cluster
  std::string topology;   // --topology torus:8x8x8[:uni|bi][:snake] or mesh:...
  std::string placement;  // --placement NxM or @FILE
  // By field name: the text of each field's option as given (flags: "true").
  std::map<std::string, std::optional<std::string>, std::less<>> values;
  std::map<std::string, bool, std::less<>> flags;

  void add_to(CLI::App& app);
  // One rule for files and options: the base is the reference cluster (per byte, seconds),
  // for a run on the thread backend (`backend` "threads") that backend's default
  // (default_thread_model: thread_node_model with this process's processors), on the MPI
  // backend ("mpi") without a file that backend's default for MPI_COMM_WORLD
  // (default_mpi_model: the one-node model where every process is on one node; collective
  // the first time; a file reads over the reference, as OPTCOLL_MODEL does, so that a field
  // calibrate did not find stays unset), or the unit
  // model with --abstract (or the file's own "base"); a --model FILE sets the fields it has,
  // then each field option overrides its field (in the table's order). Validated.
  CostModel model(std::string_view backend = {}) const;
  // Which model that is, for every output: "model.json (calibrated with 16 ranks: optcoll
  // calibrate ...) with --cores 8; per byte, times in seconds".
  std::string describe(const CostModel& model, std::string_view backend = {}) const;
};

// Adds a byte-count option (digits with an optional K, M or G suffix, as CLI11's
// AsSizeValue reads them) that refuses a negative value instead of wrapping it around.
CLI::Option* add_bytes_option(CLI::App& app, const std::string& name, std::size_t& value,
                              const std::string& description);
CLI::Option* add_bytes_option(CLI::App& app, const std::string& name,
                              std::optional<std::size_t>& value, const std::string& description);

// --algorithm NAME (default "auto" where allowed), repeated --param name=value, and where
// auto is allowed --tuning FILE (a tuning table auto follows where it has a choice).
struct AlgorithmOptions {
  std::string algorithm;
  std::vector<std::string> params;
  std::string tuning;

  void add_to(CLI::App& app, bool allow_auto);
  algorithms::Params parsed_params() const;
  // The plan for a call: an explicit algorithm, the tuning table's choice, or the model's
  // (plan_tuned / plan; --root best plans every root). `spec`: problem.spec(), made once by
  // the caller (an alltoallv's p^2 counts). `backend`: the one the call runs on ("threads",
  // "mpi"), or empty. Prints the table's warnings on stderr.
  Plan choose(const ProblemOptions& problem, const CollectiveSpec& spec, const CostModel& model,
              std::string_view backend, const PlanOptions& options = {}) const;
};

// Where verify/simulate get their schedule: a registry algorithm for a PROBLEM, or a file.
struct ScheduleSource {
  ProblemOptions problem;
  AlgorithmOptions algorithm;
  std::string file;

  void add_to(CLI::App& app);
  // Builds (for `model`: model-optimized algorithms depend on it) or reads the schedule;
  // throws Error with a clear message. `--root best` chooses the root as `optcoll plan`
  // does (plan_best_root) where `choose_root` is set, and is refused otherwise.
  Schedule load(const CostModel& model, bool choose_root = false) const;
  bool from_file() const { return !file.empty(); }
};

std::string read_file(const std::string& path);  // throws Error(kInvalidArgument)
void write_file(const std::string& path, const std::string& text);

}  // namespace optcoll::cli
