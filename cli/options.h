// SPDX-License-Identifier: Apache-2.0
// File: the option groups shared by the CLI's subcommands (design.md 3.15): PROBLEM (what
// collective call), MODEL (what things cost), and where a schedule comes from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
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

struct ModelOptions {
  std::string file;
  std::optional<double> alpha, beta, gamma, copy;
  std::optional<int> ports;
  std::string duplex;
  bool overlap = false;
  bool per_byte = false;
  bool abstract = false;  // start from alpha = beta = 1, gamma = copy = 0 instead of the cluster
  std::string topology;   // --topology torus:8x8x8[:uni|bi][:snake] or mesh:...
  std::optional<std::size_t> shared_sends;  // --shared-sends BYTES (shared_send_min_bytes)
  std::optional<double> send_gap;
  std::optional<double> receive_gap;
  std::optional<int> cores;  // --cores C (CostModel::cores)

  void add_to(CLI::App& app);
  // Base model: --model FILE, else the reference cluster (or the abstract unit model); then
  // the inline flags override single fields. Validated.
  CostModel model() const;
};

// Adds a byte-count option (digits with an optional K, M or G suffix, as CLI11's
// AsSizeValue reads them) that refuses a negative value instead of wrapping it around.
CLI::Option* add_bytes_option(CLI::App& app, const std::string& name, std::size_t& value,
                              const std::string& description);
CLI::Option* add_bytes_option(CLI::App& app, const std::string& name,
                              std::optional<std::size_t>& value, const std::string& description);

// --algorithm NAME (default "auto" where allowed) and repeated --param name=value.
struct AlgorithmOptions {
  std::string algorithm;
  std::vector<std::string> params;

  void add_to(CLI::App& app, bool allow_auto);
  algorithms::Params parsed_params() const;
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
