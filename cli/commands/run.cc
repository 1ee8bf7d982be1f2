// SPDX-License-Identifier: Apache-2.0
// File: `optcoll run`: plan a call, execute it on real data, time it, and check the result
// against a naive reference computed without the schedule (exit status 1 if it differs).
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/commands/mpi_backend.h"
#include "cli/memory.h"
#include "cli/options.h"
#include "optcoll/api/threads_check.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"

namespace optcoll::cli {
namespace {

std::string mpi_processes(Rank n) { return fmt::format("{} MPI process{}", n, n == 1 ? "" : "es"); }

struct RunOptions {
  ProblemOptions problem;
  ModelOptions model;
  AlgorithmOptions algorithm;
  MemoryOptions memory;
  std::string backend = "threads";
  int iterations = 10;
  int rounds = 5;
  int timeout_ms = 30000;
  bool json = false;
};

void run_run(const RunOptions& o) {
  const bool mpi = o.backend == "mpi";
  if (!mpi && o.backend != "threads") {
    throw_invalid("unknown --backend '{}' (known: threads, mpi)", o.backend);
  }
  if (o.timeout_ms < 1) throw_invalid("--timeout must be at least 1 ms, got {}", o.timeout_ms);
  ProblemOptions problem = o.problem;
  if (mpi) {
    ensure_mpi_initialized();
    problem.default_nranks = mpi_world_size();  // one rank per process
    if (problem.nranks && *problem.nranks != mpi_world_size()) {
      throw_invalid("--backend mpi runs one rank per MPI process: -p {} but mpirun started {}",
                    *problem.nranks, mpi_world_size());
    }
  }
  const CollectiveSpec spec = problem.spec();
  const CostModel model = o.model.model(o.backend);
  const auto params = o.algorithm.parsed_params();
  check_memory(o.memory, spec, o.algorithm.algorithm, params, model, /*threads_run=*/!mpi);
  Activity activity(fmt::format("planning {} with {}", describe(spec), o.algorithm.algorithm));
  const Plan p = o.algorithm.choose(problem, spec, model, o.backend);
  const Datatype scalar = *parse_datatype(o.problem.dtype);
  const CheckedRunOptions timing{o.iterations, o.rounds, std::chrono::milliseconds(o.timeout_ms)};
  const Activity running(fmt::format(
      "running {} on {}", p.algorithm,
      mpi ? mpi_processes(spec.nranks) : fmt::format("a thread world of {} ranks", spec.nranks)));
  const CheckedRun run = mpi ? run_checked_on_mpi(p.schedule, scalar, o.problem.op, timing)
                             : run_checked_on_threads(p.schedule, scalar, o.problem.op, timing);
  const bool speaker = !mpi || mpi_world_rank() == 0;  // one report per run
  if (speaker && o.json) {
    const nlohmann::json out = {{"collective", collective_name(spec.kind)},
                                {"algorithm", p.algorithm},
                                {"backend", o.backend},
                                {"p", spec.nranks},
                                {"root", p.schedule.spec.root},
                                {"dtype", o.problem.dtype},
                                {"op", o.problem.op},
                                {"correct", run.correct},
                                {"mismatches", run.mismatches},
                                {"seconds", run.median_seconds},
                                {"iterations", o.iterations},
                                {"rounds", o.rounds},
                                {"ran_on", run.ran_on},
                                {"predicted_time", p.predicted_time},
                                {"model", o.model.describe(model, o.backend)},
                                {"decided_by", !p.decided_by.empty()     ? p.decided_by
                                               : p.candidates.size() > 1 ? "the model"
                                                                         : "--algorithm"}};
    std::cout << out.dump(2) << "\n";
  } else if (speaker) {
    std::cout << fmt::format("{} with {} on {}\n", describe(p.schedule.spec), p.algorithm,
                             run.ran_on);
    std::cout << fmt::format(
        "{} per call: median over {} rounds of {} back-to-back calls (model predicted {})\n",
        format_time(run.median_seconds, reference_cluster_model()), o.rounds, o.iterations,
        format_time(p.predicted_time, model));
    std::cout << "model: " << o.model.describe(model, o.backend) << "\n";
    std::cout << (run.correct ? "result: correct (matches the naive reference on every rank)\n"
                              : "result: WRONG\n");
  }
  if (!run.correct) {
    for (const auto& m : run.mismatches) std::cout << "  " << m << "\n";
    throw CheckFailed{};
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "execute a call on real data and check the result");
  o->problem.add_to(*sub);
  o->model.add_to(*sub);
  o->algorithm.add_to(*sub, /*allow_auto=*/true);
  sub->add_option("--backend", o->backend,
                  "threads (default) or mpi (under mpirun: one rank per process; -p defaults "
                  "to -np)");
  sub->add_option("--iterations", o->iterations, "back-to-back calls per timed round (default 10)");
  sub->add_option("--rounds", o->rounds, "timed rounds: the median counts (default 5)");
  sub->add_option("--timeout", o->timeout_ms,
                  "ms without progress before a rank fails (default 30000)");
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  o->memory.add_to(*sub);
  sub->footer(kLimitsHelp);
  sub->callback([o] { run_run(*o); });
}

}  // namespace optcoll::cli
