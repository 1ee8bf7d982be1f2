// SPDX-License-Identifier: Apache-2.0
// File: `optcoll tune`: measure every applicable registry algorithm over a grid of
// collectives x sizes at one p, on the backend it runs on (threads; MPI under mpirun), and
// write the tuning table (JSON, docs/tuning.md) and a report: the model's error over every
// run, and the regret of auto's choice at every grid point (and of an earlier table's, with
// --tuning), as Markdown and as SVG charts. The engine is optcoll/api/tune.h.
//
//   optcoll tune -p 4 --model model.json --out tuned.json --report tune.md --svg tune
//   mpirun -np 16 optcoll tune --backend mpi --budget 600 --out tuned.json
#include "optcoll/api/tune.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/commands/mpi_backend.h"
#include "cli/options.h"
#include "optcoll/experiments/svg_chart.h"
#include "optcoll/model/error.h"

namespace optcoll::cli {
namespace {

struct TuneCommandOptions {
  std::string backend = "threads";
  Rank nranks = 0;
  std::vector<std::string> collectives;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{8} << 20;
  std::size_t factor = 8;
  int rounds = 5;
  double round_ms = 4;
  int max_calls = 500;
  double budget = 0;
  Count dist_k = 5;
  std::uint64_t seed = 1;
  ModelOptions model;
  std::string previous;  // --tuning: an earlier table, whose choices are measured too
  std::string out = "tuning.json";
  std::string report;
  std::string svg;
  int timeout_ms = 60000;
};

// A progress bar on stderr: "[=====>    ] 12/64 allreduce 64 B".
void show_progress(std::size_t done, std::size_t total, const std::string& what) {
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total == 0 ? kWidth : done * kWidth / total;
  std::cerr << fmt::format("\r[{:<{}}] {}/{} {:<40}", std::string(filled, '='), kWidth, done, total,
                           what)
            << (done == total ? "\n" : "") << std::flush;
}

double regret(const TunePointResult& r, std::size_t pick) {
  return r.seconds[pick] / r.seconds[r.best];
}

std::string candidate_label(const TunePointPlan& plan, std::size_t k) {
  const auto& c = plan.candidates[k];
  return c.variant.empty() || c.variant == "auto" ? c.algorithm
                                                  : fmt::format("{} ({})", c.algorithm, c.variant);
}

struct RegretSummary {
  double median = 0;
  double max = 0;
};
RegretSummary summarize(std::vector<double> regrets) {
  if (regrets.empty()) return {};
  std::sort(regrets.begin(), regrets.end());
  return {regrets[regrets.size() / 2], regrets.back()};
}

std::string regret_table(const TuneReport& report) {
  const bool tuned = std::any_of(report.points.begin(), report.points.end(),
                                 [](const auto& r) { return r.tuned_pick.has_value(); });
  std::string text = fmt::format(
      "| collective | bytes per rank | best measured | us | auto (model) | us | regret |{}"
      " best: predicted / measured | checked |\n|---|---|---|---|---|---|---|{}---|---|\n",
      tuned ? " tuned (--tuning) | us | regret |" : "", tuned ? "---|---|---|" : "");
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    const auto& r = report.points[i];
    const auto& plan = report.plans[i];
    std::string tuned_cells;
    if (tuned) {
      tuned_cells =
          r.tuned_pick
              ? fmt::format(" {} | {:.1f} | {:.2f} |", candidate_label(plan, *r.tuned_pick),
                            r.seconds[*r.tuned_pick] * 1e6, regret(r, *r.tuned_pick))
              : " - | - | - |";
    }
    const std::string checked =
        !r.checked
            ? "no (too large)"
            : (r.wrong.empty() ? "yes" : "WRONG: " + fmt::format("{}", fmt::join(r.wrong, ", ")));
    text += fmt::format("| {} | {} | {} | {:.1f} | {} | {:.1f} | {:.2f} |{} {:.2f} | {} |\n",
                        tune_case_name(plan.tune_case), plan.bytes, candidate_label(plan, r.best),
                        r.seconds[r.best] * 1e6, candidate_label(plan, r.auto_pick),
                        r.seconds[r.auto_pick] * 1e6, regret(r, r.auto_pick), tuned_cells,
                        plan.candidates[r.best].predicted / r.seconds[r.best], checked);
  }
  return text;
}

std::string runs_table(const TuneReport& report) {
  std::string text =
      "| collective | bytes per rank | algorithm | params | measured (us) | predicted (us) | "
      "predicted / measured |\n|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    const auto& plan = report.plans[i];
    for (std::size_t k = 0; k < plan.candidates.size(); ++k) {
      const double measured = report.points[i].seconds[k];
      text += fmt::format(
          "| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.2f} |\n", tune_case_name(plan.tune_case),
          plan.bytes, candidate_label(plan, k), plan.candidates[k].schedule.params, measured * 1e6,
          plan.candidates[k].predicted * 1e6, plan.candidates[k].predicted / measured);
    }
  }
  return text;
}

std::string report_markdown(const TuneReport& report, const std::string& ran_on,
                            const std::string& model_source) {
  const ModelError error = model_error(report);
  std::vector<double> auto_regrets;
  std::vector<double> tuned_regrets;
  for (const auto& r : report.points) {
    auto_regrets.push_back(regret(r, r.auto_pick));
    if (r.tuned_pick) tuned_regrets.push_back(regret(r, *r.tuned_pick));
  }
  const RegretSummary a = summarize(auto_regrets);
  std::string text = fmt::format(
      "# optcoll tune: p = {}, {} backend ({})\n\nModel: {}. Measured in {:.1f} s; a run's time "
      "is the median over interleaved rounds of the slowest rank's time per call (back-to-back "
      "calls after a barrier).{}\n\n## Model error\n\n{} runs: median |predicted / measured - 1| "
      "= {:.0f}%, 90th percentile {:.0f}%.\n\n## Regret\n\nModel-only auto: median {:.2f}, max "
      "{:.2f} over {} grid points.",
      report.table.nranks, report.table.backend, ran_on, model_source, report.seconds,
      report.budget_exhausted ? " The budget ran out: the grid is incomplete." : "", error.runs,
      error.median * 100, error.p90 * 100, a.median, a.max, auto_regrets.size());
  if (!tuned_regrets.empty()) {
    const RegretSummary t = summarize(tuned_regrets);
    text +=
        fmt::format(" Tuned auto (the earlier table): median {:.2f}, max {:.2f} over {} points.",
                    t.median, t.max, tuned_regrets.size());
  }
  return text + "\n\n" + regret_table(report) + "\n## Every run\n\n" + runs_table(report);
}

// Regret of auto over the sizes, one line per case; and the best run's predicted / measured.
// `caption`: the model behind the predictions (ModelOptions::describe).
void write_charts(const TuneReport& report, const std::string& prefix, const std::string& caption) {
  experiments::LineChart regret_chart{
      fmt::format("auto's regret (measured time of its pick / the best), p = {}",
                  report.table.nranks),
      "bytes per rank",
      "regret",
      true,
      false,
      {},
      {},
      "measured; picks by " + caption};
  experiments::LineChart model_chart{
      fmt::format("the model: predicted / measured time of the best algorithm, p = {}",
                  report.table.nranks),
      "bytes per rank",
      "predicted / measured",
      true,
      true,
      {},
      {},
      "model: " + caption};
  std::map<std::string, std::size_t> series;
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    const auto& r = report.points[i];
    const auto& plan = report.plans[i];
    const std::string name = tune_case_name(plan.tune_case);
    if (!series.contains(name)) {
      series[name] = regret_chart.series.size();
      regret_chart.series.push_back({name, {}, {}});
      model_chart.series.push_back({name, {}, {}});
    }
    const std::size_t s = series[name];
    regret_chart.series[s].x.push_back(static_cast<double>(plan.bytes));
    regret_chart.series[s].y.push_back(regret(r, r.auto_pick));
    model_chart.series[s].x.push_back(static_cast<double>(plan.bytes));
    model_chart.series[s].y.push_back(plan.candidates[r.best].predicted / r.seconds[r.best]);
  }
  write_file(prefix + "-regret.svg", experiments::render_svg(regret_chart));
  write_file(prefix + "-model.svg", experiments::render_svg(model_chart));
}

TuneOptions engine_options(const TuneCommandOptions& o, const CostModel& model,
                           const TuningTable* previous) {
  TuneOptions t;
  if (!o.collectives.empty()) {
    t.cases.clear();
    for (const auto& c : o.collectives) t.cases.push_back(parse_tune_case(c));
  }
  t.sizes = tune_sizes(o.min_bytes, o.max_bytes, o.factor);
  t.rounds = o.rounds;
  t.round_seconds = o.round_ms * 1e-3;
  t.max_calls = o.max_calls;
  t.budget_seconds = o.budget;
  t.dist_k = o.dist_k;
  t.seed = o.seed;
  t.model = model;
  t.backend = o.backend;
  t.previous = previous;
  t.timeout = std::chrono::milliseconds(o.timeout_ms);
  return t;
}

void check_options(const TuneCommandOptions& o, bool mpi) {
  if (!mpi && o.backend != "threads") {
    throw_invalid("unknown --backend '{}' (known: threads, mpi)", o.backend);
  }
  if (!mpi && o.nranks < 2) throw_invalid("tune needs -p of at least 2, got {}", o.nranks);
  if (o.rounds < 1) throw_invalid("--rounds must be at least 1, got {}", o.rounds);
  if (!(o.round_ms > 0)) throw_invalid("--round-ms must be positive, got {}", o.round_ms);
  if (o.max_calls < 1) throw_invalid("--max-calls must be at least 1, got {}", o.max_calls);
  if (!(o.budget >= 0)) throw_invalid("--budget must be >= 0 seconds, got {}", o.budget);
  if (o.dist_k < 1) throw_invalid("--dist-k must be at least 1, got {}", o.dist_k);
  if (o.timeout_ms < 1) throw_invalid("--timeout must be at least 1 ms, got {}", o.timeout_ms);
  if (o.max_bytes > (std::size_t{1} << 30)) {
    throw_invalid("--max-bytes {} is above the limit of 1 GiB per rank", o.max_bytes);
  }
  if (o.out.empty()) throw_invalid("--out must name the table's file");
}

void run_tune(const TuneCommandOptions& o) {
  const bool mpi = o.backend == "mpi";
  check_options(o, mpi);
  const CostModel model = o.model.model(o.backend);
  std::optional<TuningTable> previous;
  if (!o.previous.empty()) previous = parse_tuning_json(read_file(o.previous));
  TuneOptions options = engine_options(o, model, previous ? &*previous : nullptr);
  TuneReport report;
  if (mpi) {
    ensure_mpi_initialized();
    if (o.nranks != 0 && o.nranks != mpi_world_size()) {
      throw_invalid("-p {} differs from the {} MPI processes tune runs on", o.nranks,
                    mpi_world_size());
    }
    report = tune_on_mpi(options, show_progress);
    if (mpi_world_rank() != 0) return;
  } else {
    report = tune_on_threads(o.nranks, options, show_progress);
  }
  if (previous) {
    for (const auto& w : previous->warnings) {
      std::cerr << "optcoll: warning: " << o.previous << ": " << w << "\n";
    }
  }
  const std::string model_source =
      o.model.file.empty() ? o.model.describe(model, o.backend) : o.model.file;
  write_file(o.out, tuning_to_json(report.table) + "\n");
  const std::string markdown = report_markdown(report, report.ran_on, model_source);
  if (!o.report.empty()) write_file(o.report, markdown);
  if (!o.svg.empty()) write_charts(report, o.svg, o.model.describe(model, o.backend));
  std::cout << markdown.substr(0, markdown.find("\n| collective")) << "\n";
  std::cout << fmt::format("table: {} ({} grid points)\n", o.out, report.points.size());
  bool wrong = false;
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    for (const auto& name : report.points[i].wrong) {
      std::cout << fmt::format("WRONG: {} at {} B computed a wrong result\n", name,
                               report.plans[i].bytes);
      wrong = true;
    }
  }
  if (wrong) throw CheckFailed{};
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCommandOptions>();
  auto* sub = app.add_subcommand(
      "tune",
      "measure every algorithm over a grid of collectives x sizes: a tuning table and a "
      "report of the model's error and auto's regret");
  sub->add_option("--backend", o->backend,
                  "threads (default, -p ranks) or mpi (under mpirun: one rank per process)");
  sub->add_option("-p,--nranks", o->nranks, "ranks (threads; under mpirun the world size)");
  sub->add_option("--collectives", o->collectives,
                  "comma-separated cases (default: allreduce, bcast, allgather, "
                  "reduce_scatter_block, reduce, alltoall, gatherv:spikes, scatterv:skewed)")
      ->delimiter(',');
  add_bytes_option(*sub, "--min-bytes", o->min_bytes, "smallest size per rank (default 8)");
  add_bytes_option(*sub, "--max-bytes", o->max_bytes, "largest size per rank (default 8M)");
  add_bytes_option(*sub, "--factor", o->factor, "sizes grow by this factor (default 8)");
  sub->add_option("--rounds", o->rounds, "interleaved rounds per candidate (default 5)");
  sub->add_option("--round-ms", o->round_ms, "a round of a candidate takes about this long");
  sub->add_option("--max-calls", o->max_calls, "at most this many calls per round");
  sub->add_option("--budget", o->budget,
                  "seconds: stop after the grid point that exceeds it (default: no limit)");
  sub->add_option("--dist-k", o->dist_k, "the distributions' parameter k (default 5)");
  sub->add_option("--seed", o->seed, "the distributions' random seed (default 1)");
  o->model.add_to(*sub);
  sub->add_option("--tuning", o->previous,
                  "an earlier tuning table: its choices are measured too (tuned regret)");
  sub->add_option("--out", o->out, "the tuning table (JSON; default tuning.json)");
  sub->add_option("--report", o->report, "the report (Markdown)");
  sub->add_option("--svg", o->svg, "charts: PREFIX-regret.svg and PREFIX-model.svg");
  sub->add_option("--timeout", o->timeout_ms, "ms without progress before a rank fails");
  sub->callback([o] { run_tune(*o); });
}

}  // namespace optcoll::cli
