// SPDX-License-Identifier: Apache-2.0
// File: `optcoll simulate`: price a schedule under a cost model; export its timeline.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/memory.h"
#include "cli/options.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/sim/trace.h"
#include "optcoll/verify/verify.h"

namespace optcoll::cli {
namespace {

struct SimulateOptions {
  ScheduleSource source;
  ModelOptions model;
  MemoryOptions memory;
  bool json = false;
  std::string trace;
  std::string svg;
  std::string csv;
};

// A schedule from a file has not been proved correct: what the verifier would say about it
// is said (as a warning on stderr) before its price.
void warn_unless_verified(const Schedule& schedule) {
  const VerifyReport report = verify(schedule);
  if (report.ok()) return;
  std::cerr << "optcoll: warning: optcoll verify rejects this schedule (its timing below is "
               "not that of a correct collective): "
            << report.summary() << "\n";
}

// The SVG Gantt chart, captioned with the model; says on stderr when it aggregated.
void write_gantt(const std::string& file, const Schedule& schedule, const SimResult& result,
                 const CostModel& model, const std::string& model_description) {
  const GanttSvg chart =
      gantt_svg(schedule, result, model, {.caption = "model: " + model_description});
  write_file(file, chart.svg);
  if (chart.aggregated) {
    std::cerr << fmt::format(
        "optcoll: warning: {}: {} ops on {} ranks are too many to draw one by one; the chart "
        "shows rows of {} ranks, with a row's ops of one kind merged where under a pixel "
        "apart\n",
        file, schedule.op_count(), schedule.spec.nranks, chart.band);
  }
}

void run_simulate(const SimulateOptions& o) {
  const CostModel model = o.model.model();
  std::string what = "reading " + o.source.file;
  if (!o.source.from_file() && o.source.problem.given()) {
    const CollectiveSpec spec = o.source.problem.spec();
    check_memory(o.memory, spec, o.source.algorithm.algorithm, o.source.algorithm.parsed_params(),
                 model, /*threads_run=*/false);
    what = fmt::format("building {} with {}", describe(spec), o.source.algorithm.algorithm);
  }
  const Activity building(what);
  const Schedule schedule = o.source.load(model, /*choose_root=*/true);
  const Activity simulating(
      fmt::format("simulating {} ({} ops)", schedule.algorithm, schedule.op_count()));
  if (o.source.from_file()) warn_unless_verified(schedule);
  SimOptions sim_options;
  sim_options.trace = !o.trace.empty() || !o.svg.empty() || !o.csv.empty();
  const SimResult result = simulate(schedule, model, sim_options);
  if (result.status == SimStatus::kDeadlock) {
    std::cerr << "optcoll: simulated deadlock: " << result.deadlock << "\n";
    throw CheckFailed{};
  }
  if (!o.trace.empty())
    write_file(o.trace, chrome_trace_json(schedule, result, model.per_byte ? 1e6 : 1.0));
  if (!o.svg.empty()) write_gantt(o.svg, schedule, result, model, o.model.describe(model));
  if (!o.csv.empty()) write_file(o.csv, trace_csv(schedule, result));
  if (o.json) {
    nlohmann::json path = nlohmann::json::array();
    for (const auto& step : result.critical_path) {
      path.push_back({{"rank", step.rank},
                      {"op", step.op},
                      {"start", step.start},
                      {"end", step.end},
                      {"waited_for", step.waited_for},
                      {"description", describe_op(schedule, step.rank, step.op)}});
    }
    const nlohmann::json out = {
        {"algorithm", schedule.algorithm}, {"collective", collective_name(schedule.spec.kind)},
        {"p", schedule.spec.nranks},       {"root", schedule.spec.root},
        {"makespan", result.makespan},     {"rank_finish", result.rank_finish},
        {"critical_path", path},           {"ops", result.ops},
        {"model", o.model.describe(model)}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} ({})\nmodel     {}\nmakespan  {}\n", schedule.algorithm,
                           describe(schedule.spec), o.model.describe(model),
                           format_time(result.makespan, model));
  std::cout << fmt::format("critical path ({} steps):\n", result.critical_path.size());
  constexpr std::size_t kShown = 12;
  for (std::size_t i = 0; i < result.critical_path.size(); ++i) {
    if (i == kShown && result.critical_path.size() > kShown + 1) {
      std::cout << fmt::format("  ... {} more\n", result.critical_path.size() - kShown);
      break;
    }
    const auto& step = result.critical_path[i];
    std::cout << fmt::format("  [{}, {}] {} (waited for {})\n", format_time(step.start, model),
                             format_time(step.end, model),
                             describe_op(schedule, step.rank, step.op), step.waited_for);
  }
  for (const auto* file : {&o.trace, &o.svg, &o.csv}) {
    if (!file->empty()) std::cout << "written: " << *file << "\n";
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  auto* sub = app.add_subcommand("simulate", "price a schedule under a cost model");
  o->source.add_to(*sub);
  o->model.add_to(*sub);
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->add_option("--trace", o->trace, "write a Chrome trace (chrome://tracing, Perfetto)");
  sub->add_option("--svg", o->svg, "write an SVG Gantt chart of the timeline");
  sub->add_option("--csv", o->csv, "write the timeline as CSV");
  o->memory.add_to(*sub);
  sub->footer(kLimitsHelp);
  sub->callback([o] { run_simulate(*o); });
}

}  // namespace optcoll::cli
