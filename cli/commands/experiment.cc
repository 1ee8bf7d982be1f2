// SPDX-License-Identifier: Apache-2.0
// File: `optcoll experiment NAME [--out DIR] [--json] [--quick]`: regenerate a paper's result
// (docs/experiments.md). The experiment computes; this command writes its CSV and SVG files into
// --out and prints its table (or its JSON). `optcoll experiment all --out DIR [--quick]` runs
// every experiment of experiments.def, each into DIR/<its identifier>/ with its table as
// table.md: `--out docs/results` regenerates the documented results, `--quick --out
// docs/results/reduced` the reduced ones that ctest experiments_reduced compares.
#include "optcoll/experiments/experiment.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/options.h"
#include "optcoll/model/error.h"

namespace optcoll::cli {
namespace {

struct ExperimentOptionsCli {
  std::string name;
  std::string out = "experiments-out";
  bool json = false;
  bool quick = false;
  bool list = false;
  std::uint64_t seed = 1;
};

experiments::ExperimentOptions experiment_options(const ExperimentOptionsCli& o) {
  experiments::ExperimentOptions options;
  options.quick = o.quick;
  options.seed = o.seed;
  options.progress = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };
  return options;
}

std::filesystem::path make_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_invalid("cannot create output directory '{}': {}", dir.string(), ec.message());
  return dir;
}

// `experiment all`: every experiment into <out>/<directory>/, its table as table.md.
void run_all_experiments(const ExperimentOptionsCli& o) {
  if (o.json) throw_invalid("--json prints one experiment's document: name the experiment");
  const auto options = experiment_options(o);
  for (const auto& info : experiments::all_experiments()) {
    const auto result = info.run(options);
    const auto dir = make_directory(std::filesystem::path(o.out) / info.directory);
    for (const auto& [file, contents] : result.files) write_file((dir / file).string(), contents);
    write_file((dir / "table.md").string(), result.table);
    std::cout << fmt::format("{}: table.md and {} file(s) written to {}/\n", info.name,
                             result.files.size(), dir.string());
  }
}

void run_experiment(const ExperimentOptionsCli& o) {
  if (o.list || o.name.empty()) {
    for (const auto& info : experiments::all_experiments()) {
      std::cout << fmt::format("{:<18} {}\n", info.name, info.summary);
    }
    if (!o.list) throw_invalid("give an experiment name (listed above) or 'all'");
    return;
  }
  if (o.name == "all") {
    run_all_experiments(o);
    return;
  }
  const auto& info = experiments::find_experiment(o.name);
  const auto result = info.run(experiment_options(o));
  make_directory(o.out);
  for (const auto& [file, contents] : result.files) {
    write_file((std::filesystem::path(o.out) / file).string(), contents);
  }
  if (o.json) {
    std::cout << result.json << "\n";
    return;
  }
  std::cout << result.table;
  if (!result.files.empty()) {
    std::cout << fmt::format("\n{} file(s) written to {}/\n", result.files.size(), o.out);
  }
}

}  // namespace

void add_experiment_command(CLI::App& app) {
  auto o = std::make_shared<ExperimentOptionsCli>();
  auto* sub = app.add_subcommand("experiment", "regenerate a paper's results (tables, CSV, SVG)");
  sub->add_option("name", o->name,
                  "the experiment (see --list), or 'all': each into --out/<its folder>/ with its "
                  "table as table.md");
  sub->add_option("--out", o->out, "directory for CSV and SVG files (default experiments-out)");
  sub->add_flag("--json", o->json, "print the result as one JSON document");
  sub->add_flag("--quick", o->quick, "a smaller instance (for tests)");
  sub->add_flag("--list", o->list, "list the experiments");
  sub->add_option("--seed", o->seed, "seed for random inputs (default 1)");
  sub->callback([o] { run_experiment(*o); });
}

}  // namespace optcoll::cli
