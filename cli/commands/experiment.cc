// SPDX-License-Identifier: Apache-2.0
// File: `optcoll experiment NAME [--out DIR] [--json] [--quick]`: regenerate a paper's result
// (docs/experiments.md). The experiment computes; this command writes its CSV and SVG files into
// --out and prints its table (or its JSON).
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

void run_experiment(const ExperimentOptionsCli& o) {
  if (o.list || o.name.empty()) {
    for (const auto& info : experiments::all_experiments()) {
      std::cout << fmt::format("{:<18} {}\n", info.name, info.summary);
    }
    if (!o.list) throw_invalid("give an experiment name (listed above)");
    return;
  }
  const auto& info = experiments::find_experiment(o.name);
  experiments::ExperimentOptions options;
  options.quick = o.quick;
  options.seed = o.seed;
  options.progress = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };
  const auto result = info.run(options);
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) throw_invalid("cannot create output directory '{}': {}", o.out, ec.message());
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
  sub->add_option("name", o->name, "the experiment (see --list)");
  sub->add_option("--out", o->out, "directory for CSV and SVG files (default experiments-out)");
  sub->add_flag("--json", o->json, "print the result as one JSON document");
  sub->add_flag("--quick", o->quick, "a smaller instance (for tests)");
  sub->add_flag("--list", o->list, "list the experiments");
  sub->add_option("--seed", o->seed, "seed for random inputs (default 1)");
  sub->callback([o] { run_experiment(*o); });
}

}  // namespace optcoll::cli
