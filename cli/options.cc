// SPDX-License-Identifier: Apache-2.0
// File: CLI option groups: parsing PROBLEM, MODEL and schedule sources into library values.
#include "cli/options.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands/mpi_backend.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"
#include "optcoll/plan/tuning.h"
#include "optcoll/schedule/io/io.h"

namespace optcoll::cli {
namespace {

Count parse_count(std::string_view token, std::string_view what) {
  Count value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || ptr != token.data() + token.size()) {
    throw_invalid("{}: '{}' is not an integer", what, token);
  }
  return value;
}

// "1,2,3", "1 2 3" or the same read from "@file".
std::vector<Count> parse_count_list(const std::string& text) {
  const std::string body = !text.empty() && text[0] == '@' ? read_file(text.substr(1)) : text;
  std::vector<Count> counts;
  std::string token;
  auto flush = [&] {
    if (!token.empty()) counts.push_back(parse_count(token, "--counts"));
    token.clear();
  };
  for (const char ch : body) {
    if (ch == ',' || ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
      flush();
    } else {
      token += ch;
    }
  }
  flush();
  if (counts.empty()) throw_invalid("--counts holds no numbers");
  return counts;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw_invalid("'{}' is a directory, not a file", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_invalid("cannot read file '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw_invalid("cannot write file '{}'", path);
  out << text;
  out.flush();  // a write error (disk full) shows at the flush, not at the destructor's close
  if (!out) throw_invalid("writing file '{}' failed", path);
}

void ProblemOptions::add_to(CLI::App& app, bool collective_required) {
  auto* c = app.add_option(
      "collective", collective,
      "bcast, reduce, scatter, scatterv, gather, gatherv, allgather, allgatherv, "
      "reduce_scatter, reduce_scatter_block, allreduce, scan, exscan, alltoall, alltoallv, "
      "barrier");
  if (collective_required) c->required();
  app.add_option("-p,--nranks", nranks, "number of ranks");
  app.add_option("--count", count,
                 "elements: the message (bcast/reduce/allreduce/scan/exscan), each rank's "
                 "block, or each pair's block (alltoall); for v-variants, the same count for "
                 "every rank");
  app.add_option("--counts", counts,
                 "per-rank counts c0,c1,... or @file (alltoallv: p*p, row = sender)");
  app.add_option(
      "--dist", dist,
      "irregular counts from a distribution: same, random, random-decreasing, "
      "random-increasing, bucket, spikes, decreasing, increasing, alternating, skewed, two-blocks");
  app.add_option("--block-size", block_size, "block size b of --dist (default 1000)");
  app.add_option("--seed", seed, "seed of the random distributions (default 1)");
  app.add_option("--root", root, "root rank, or 'best' to let optcoll choose (default 0)");
  app.add_option("--dtype", dtype, "int32, int64, float, double (default double)");
  app.add_option("--op", op,
                 "sum, prod, min, max, or matmul2 (2x2 matrix product, non-commutative)");
  app.add_flag("--noncommutative", noncommutative, "treat the operator as non-commutative");
  app.add_flag("--reproducible", reproducible,
               "reductions combine in one fixed association (the left fold in rank order): "
               "bit-identical floating-point results across algorithms, runs and backends");
}

CollectiveSpec ProblemOptions::spec() const {
  CollectiveSpec spec;
  const auto kind = parse_collective(collective);
  if (!kind) {
    std::string known;
    for (const auto k : all_collectives())
      known += (known.empty() ? "" : ", ") + std::string(collective_name(k));
    throw_invalid("unknown collective '{}' (known: {})", collective, known);
  }
  spec.kind = *kind;
  if (!nranks && default_nranks < 1)
    throw_invalid("-p/--nranks N is required (the number of ranks)");
  const Rank p = nranks.value_or(default_nranks);
  if (p < 1) throw_invalid("-p/--nranks must be at least 1, got {}", p);
  spec.nranks = p;
  if (best_root()) {
    if (!is_rooted(spec.kind))
      throw_invalid("{} has no root; --root best does not apply", collective);
    spec.root = 0;
  } else {
    const Count r = parse_count(root, "--root");
    if (r < std::numeric_limits<Rank>::min() || r > std::numeric_limits<Rank>::max()) {
      throw_invalid("--root {} out of range", root);
    }
    spec.root = static_cast<Rank>(r);
  }
  const int sources = (count ? 1 : 0) + (counts.empty() ? 0 : 1) + (dist.empty() ? 0 : 1);
  if (sources > 1) throw_invalid("give only one of --count, --counts and --dist");
  if (spec.kind == CollectiveKind::kBarrier) {
    if (sources > 0) throw_invalid("barrier carries no data: drop --count/--counts/--dist");
  } else if (takes_counts(spec.kind)) {
    const auto ranks = static_cast<std::size_t>(p);
    const std::size_t entries = spec.kind == CollectiveKind::kAlltoallv ? ranks * ranks : ranks;
    if (!counts.empty()) {
      spec.counts = parse_count_list(counts);
    } else if (!dist.empty()) {
      const auto blocks = distribution_counts(parse_distribution(dist), p, block_size, seed);
      // alltoallv: every sender sends rank j the block of the distribution's rank j.
      for (std::size_t i = 0; i < entries; ++i) spec.counts.push_back(blocks[i % ranks]);
    } else if (count) {
      if (*count < 0) throw_invalid("--count must be non-negative, got {}", *count);
      spec.counts.assign(entries, *count);
    } else {
      throw_invalid("{} needs --counts, --dist or --count", collective);
    }
  } else {
    if (!counts.empty() || !dist.empty()) {
      throw_invalid(
          "{} takes a uniform --count; --counts and --dist are for the v-variants "
          "(scatterv, gatherv, allgatherv, reduce_scatter, alltoallv)",
          collective);
    }
    if (!count) throw_invalid("{} needs --count", collective);
    spec.count = *count;
  }
  const auto type = parse_datatype(dtype);
  if (!type) throw_invalid("unknown --dtype '{}' (known: int32, int64, float, double)", dtype);
  spec.elem_bytes = type->bytes;
  if (op != "sum" && op != "prod" && op != "min" && op != "max" && op != "matmul2") {
    throw_invalid("unknown --op '{}' (known: sum, prod, min, max, matmul2)", op);
  }
  if (op == "matmul2") spec.elem_bytes = 4 * type->bytes;
  spec.commutative = !noncommutative && op != "matmul2";
  spec.reproducible = reproducible;
  validate(spec);
  return spec;
}

namespace {
const CLI::Validator& not_negative() {
  static const CLI::Validator check(
      [](const std::string& text) -> std::string {
        return text.starts_with('-') ? "must be a byte count >= 0, got " + text : "";
      },
      "BYTES");
  return check;
}

template <typename Value>
CLI::Option* bytes_option(CLI::App& app, const std::string& name, Value& value,
                          const std::string& description) {
  return app.add_option(name, value, description)
      ->check(not_negative())
      ->transform(CLI::AsSizeValue(false));
}
}  // namespace

CLI::Option* add_bytes_option(CLI::App& app, const std::string& name, std::size_t& value,
                              const std::string& description) {
  return bytes_option(app, name, value, description);
}

CLI::Option* add_bytes_option(CLI::App& app, const std::string& name,
                              std::optional<std::size_t>& value, const std::string& description) {
  return bytes_option(app, name, value, description);
}

namespace {
// A model field's option: --send-mode for send_mode.
std::string option_of(std::string_view field) {
  std::string option = "--" + std::string(field);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}
}  // namespace

namespace {
// --placement: NxM, a list, or @FILE holding the list.
Placement read_placement_option(const std::string& text) {
  if (text.empty() || text.front() != '@') return parse_placement(text);
  const std::string path = text.substr(1);
  try {
    return parse_placement(read_file(path));
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("placement file {}: {}", path, e.what()));
  }
}
}  // namespace

void ModelOptions::add_to(CLI::App& app) {
  app.add_option("--model", file, "cost model JSON file (fields as written by calibrate)");
  app.add_flag("--abstract", abstract,
               "start from the unit model (alpha = beta = 1, gamma = copy = 0) instead of the "
               "reference cluster");
  for (const ModelFieldInfo& field : model_fields()) {
    const std::string option = option_of(field.name);
    const std::string name(field.name);
    const std::string help = fmt::format("{} ({})", field.help, field.unit);
    if (field.kind == ModelFieldKind::kFlag) {
      app.add_flag(option, flags[name], help);
    } else if (field.kind == ModelFieldKind::kBytes) {
      app.add_option(option, values[name], help)
          ->check(not_negative())
          ->transform(CLI::AsSizeValue(false));
    } else {
      app.add_option(option, values[name], help);
    }
  }
  app.add_option("--topology", topology,
                 "network: torus:DxDx...[:uni|bi][:snake] or mesh:... (links are simulated; sets "
                 "ports = 2N, duplex from the links, and overlap; --ports/--duplex override)");
  app.add_option("--placement", placement,
                 "which node each rank is on: NxM (N nodes of M ranks, in blocks) or @FILE (a "
                 "node id per rank); messages between nodes cost --inter-alpha/--inter-beta "
                 "and share each node's --nic-ports");
}

namespace {
bool thread_default(const ModelOptions& o, std::string_view backend) {
  return !o.abstract && backend == "threads";
}
bool mpi_default(const ModelOptions& o, std::string_view backend) {
  return !o.abstract && backend == "mpi";
}
// The MPI backend's default on MPI_COMM_WORLD (default_mpi_model), asked once per process:
// collective the first time (every process's command asks at the same point), kept after.
const CostModel& mpi_world_default() {
  static const CostModel model = [] {
    ensure_mpi_initialized();
    return mpi_world_default_model();
  }();
  return model;
}
}  // namespace

CostModel ModelOptions::model(std::string_view backend) const {
  const CostModel base = abstract                                      ? CostModel{}
                         : thread_default(*this, backend)              ? default_thread_model()
                         : mpi_default(*this, backend) && file.empty() ? mpi_world_default()
                                                                       : reference_cluster_model();
  CostModel m = file.empty() ? base : parse_cost_model_json(read_file(file), base);
  if (!topology.empty()) m = with_topology(m, parse_topology(topology));
  if (!placement.empty()) m.placement = read_placement_option(placement);
  for (const ModelFieldInfo& field : model_fields()) {
    const std::string name(field.name);
    if (const auto flag = flags.find(name); flag != flags.end() && flag->second) {
      set_model_field(m, name, "true");
    }
    if (const auto value = values.find(name); value != values.end() && value->second) {
      set_model_field(m, name, *value->second);
    }
  }
  validate(m);
  return m;
}

std::string ModelOptions::describe(const CostModel& model, std::string_view backend) const {
  std::string text;
  if (file.empty()) {
    text = abstract                         ? "the unit model (--abstract)"
           : thread_default(*this, backend) ? "the thread backend's default model"
           : !mpi_default(*this, backend)   ? "the reference cluster model"
           : mpi_world_default() == reference_cluster_model()
               ? "the reference cluster model (the MPI backend's default across nodes)"
               : "the MPI backend's default model for one node";
  } else {
    text = file;
    const auto doc = nlohmann::json::parse(read_file(file), nullptr, false);
    if (doc.is_object() && doc.contains("calibrated_ranks")) {
      text += fmt::format(" (calibrated with {} ranks{})", doc["calibrated_ranks"].dump(),
                          doc.contains("source") && doc["source"].is_string()
                              ? ": " + doc["source"].get<std::string>()
                              : "");
    }
  }
  std::vector<std::string> given;
  if (!topology.empty()) given.push_back("--topology " + topology);
  if (!placement.empty()) given.push_back("--placement " + placement);
  for (const auto& [name, on] : flags) {
    if (on) given.push_back(option_of(name));
  }
  for (const auto& [name, value] : values) {
    if (value) given.push_back(fmt::format("{} {}", option_of(name), *value));
  }
  if (!given.empty()) text += fmt::format(" with {}", fmt::join(given, " "));
  return text + "; " + model_units(model);
}

void AlgorithmOptions::add_to(CLI::App& app, bool allow_auto) {
  algorithm = allow_auto ? "auto" : "";
  app.add_option("-a,--algorithm", algorithm,
                 allow_auto ? "registry algorithm (see 'optcoll list'), or auto (default)"
                            : "registry algorithm (see 'optcoll list')");
  app.add_option("--param", params, "algorithm parameter name=value (repeatable)");
  if (allow_auto) {
    app.add_option("--tuning", tuning,
                   "a tuning table (optcoll tune): auto takes its measured choice where it has "
                   "one, the model's elsewhere");
  }
}

Plan AlgorithmOptions::choose(const ProblemOptions& problem, const CollectiveSpec& spec,
                              const CostModel& model, std::string_view backend,
                              const PlanOptions& options) const {
  const algorithms::Params given = parsed_params();
  const bool automatic = algorithm.empty() || algorithm == "auto";
  if (!tuning.empty()) {
    if (!automatic) throw_invalid("--tuning is for auto, not --algorithm {}", algorithm);
    if (problem.best_root()) {
      throw_invalid("--tuning and --root best: a table is measured at one root; give --root");
    }
    const TuningTable table = parse_tuning_json(read_file(tuning));
    for (const auto& warning : table.warnings) {
      std::cerr << "optcoll: warning: " << tuning << ": " << warning << "\n";
    }
    return plan_tuned(spec, model, table, backend);
  }
  return problem.best_root() ? plan_best_root(spec, model, algorithm, given, 4096, options)
                             : plan(spec, model, algorithm, given, options);
}

algorithms::Params AlgorithmOptions::parsed_params() const {
  algorithms::Params result;
  for (const auto& item : params) {
    const auto one = algorithms::Params::parse(item);
    for (const auto& [name, value] : one.values()) result.set(name, value);
  }
  return result;
}

void ScheduleSource::add_to(CLI::App& app) {
  problem.add_to(app, /*collective_required=*/false);
  algorithm.add_to(app, /*allow_auto=*/false);
  app.add_option("--schedule", file, "a schedule file (text or JSON) instead of a PROBLEM");
}

Schedule ScheduleSource::load(const CostModel& model, bool choose_root) const {
  if (!file.empty()) {
    if (problem.given() || !algorithm.algorithm.empty()) {
      throw_invalid("give either --schedule FILE or a collective with --algorithm, not both");
    }
    return io::parse_schedule(read_file(file));
  }
  if (!problem.given()) throw_invalid("give a collective and --algorithm, or --schedule FILE");
  if (algorithm.algorithm.empty() || algorithm.algorithm == "auto") {
    throw_invalid("--algorithm NAME is required here (see 'optcoll list --collective {}')",
                  problem.collective);
  }
  const CollectiveSpec spec = problem.spec();
  if (problem.best_root()) {
    if (!choose_root) throw_invalid("--root best needs a cost model: use 'optcoll plan'");
    return plan_best_root(spec, model, algorithm.algorithm, algorithm.parsed_params()).schedule;
  }
  return algorithms::build(algorithm.algorithm, spec, algorithm.parsed_params(), model);
}

}  // namespace optcoll::cli
