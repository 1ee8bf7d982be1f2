// SPDX-License-Identifier: Apache-2.0
// File: `optcoll plan`: choose (or take) an algorithm for a call, predict its time under a
// model, show every candidate, and optionally dump the schedule.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/memory.h"
#include "cli/options.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"
#include "optcoll/schedule/io/io.h"

namespace optcoll::cli {
namespace {

struct PlanCommandOptions {
  ProblemOptions problem;
  ModelOptions model;
  AlgorithmOptions algorithm;
  MemoryOptions memory;
  bool json = false;
  bool explain = false;
  bool all_candidates = false;
  bool exhaustive = false;
  int planning_workers = static_cast<int>(kDefaultPlanningWorkers);
  std::optional<Rank> rank;  // plan as that rank's MPI process does
  std::string dump;
};

nlohmann::json candidates_json(const Plan& p) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : p.candidates) {
    nlohmann::json entry = {{"algorithm", c.algorithm}};
    entry["predicted_time"] = c.predicted ? nlohmann::json(*c.predicted) : nlohmann::json(nullptr);
    entry["evaluation"] = std::string(evaluation_name(c.how));
    if (!c.why_not.empty()) entry["why_not"] = c.why_not;
    if (!c.params.empty()) entry["params"] = c.params;
    if (c.bound) entry["lower_bound"] = *c.bound;  // not built: this bound ruled it out
    list.push_back(std::move(entry));
  }
  return list;
}

void run_plan(const PlanCommandOptions& o) {
  const CollectiveSpec spec = o.problem.spec();
  const CostModel model = o.model.model();
  if (o.planning_workers < 1) {
    throw_invalid("--planning-workers must be at least 1, got {}", o.planning_workers);
  }
  const PlanOptions options{.exhaustive = o.exhaustive,
                            .prune = !o.all_candidates,
                            .workers = static_cast<unsigned>(o.planning_workers),
                            .only_rank = o.rank};
  const auto params = o.algorithm.parsed_params();
  // One rank's plan holds one rank's program (or a whole schedule small enough to build).
  if (!o.rank) {
    check_memory(o.memory, spec, o.algorithm.algorithm, params, model, /*threads_run=*/false);
  }
  const Activity planning(
      fmt::format("planning {} with {}", describe(spec), o.algorithm.algorithm));
  const Plan p = o.algorithm.choose(o.problem, spec, model, /*backend=*/{}, options);
  if (!o.dump.empty()) {
    const bool as_json = o.dump.size() > 5 && o.dump.ends_with(".json");
    write_file(o.dump, as_json ? io::to_json(p.schedule) : io::to_text(p.schedule));
  }
  if (o.json) {
    nlohmann::json out = {
        {"collective", collective_name(spec.kind)},
        {"algorithm", p.algorithm},
        {"params", p.params.to_string()},
        {"p", spec.nranks},
        {"root", p.schedule.spec.root},
        {"predicted_time", p.predicted_time},
        {"ops", p.schedule.op_count()},
        {"only_rank", p.only_rank ? nlohmann::json(*p.only_rank) : nlohmann::json(nullptr)},
        {"candidates", candidates_json(p)}};
    out["lower_bound"] = p.lower_bound ? nlohmann::json(*p.lower_bound) : nlohmann::json(nullptr);
    if (!p.decided_by.empty()) out["decided_by"] = p.decided_by;
    out["model"] = o.model.describe(model);
    if (p.schedule.tree) {
      out["tree"] = {{"root", p.schedule.tree->root},
                     {"parent", p.schedule.tree->parents()},
                     {"children", p.schedule.tree->children}};
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << describe(p.schedule.spec) << "\n";
  std::cout << "model           " << o.model.describe(model) << "\n";
  std::cout << fmt::format("algorithm       {}{}\n", p.algorithm,
                           p.params.empty() ? "" : " (" + p.params.to_string() + ")");
  std::cout << fmt::format("predicted time  {}\n", format_time(p.predicted_time, model));
  if (p.lower_bound) {
    std::cout << fmt::format("lower bound     {}  (predicted / bound = {:.2f})\n",
                             format_time(*p.lower_bound, model),
                             *p.lower_bound > 0 ? p.predicted_time / *p.lower_bound : 1.0);
  }
  if (p.only_rank) {
    std::cout << fmt::format(
        "ops             {} (rank {}'s program: the plan of its MPI process)\n",
        p.schedule.op_count(), *p.only_rank);
  } else {
    std::cout << fmt::format("ops             {}\n", p.schedule.op_count());
  }
  if (model.cores && *model.cores < spec.nranks) {
    std::cout << fmt::format(
        "note            the model's {} cores are shared by {} ranks: while more than {} are "
        "busy, everything slows (up to x{:.3g}); the lower bound does not count that\n",
        *model.cores, spec.nranks, *model.cores, static_cast<double>(spec.nranks) / *model.cores);
  }
  if (!p.decided_by.empty()) std::cout << "decided by      " << p.decided_by << "\n";
  if (o.explain || p.candidates.size() > 1) std::cout << "\n" << p.explain();
  if (o.explain && p.decided_by.starts_with("the tuning table")) {
    // Both: what the measurement chose (above) and what the model alone would choose.
    const Plan by_model = plan(spec, model, "auto", {}, options);
    std::cout << "\nthe model alone would choose:\n" << by_model.explain();
  }
  if (!o.dump.empty()) std::cout << "\nschedule written to " << o.dump << "\n";
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanCommandOptions>();
  auto* sub = app.add_subcommand("plan", "choose an algorithm for a call and predict its time");
  o->problem.add_to(*sub);
  o->model.add_to(*sub);
  o->algorithm.add_to(*sub, /*allow_auto=*/true);
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->add_flag("--explain", o->explain, "list every candidate with its predicted time or reason");
  sub->add_flag("--exhaustive", o->exhaustive,
                "simulate every candidate, skipping only those a lower bound shows cannot win "
                "(auto otherwise prices candidates by their cost formulas and simulates a few "
                "finalists: the same choice, or one within 1%, at a fraction of the cost)");
  sub->add_flag("--all-candidates", o->all_candidates,
                "simulate every candidate, also those a lower bound shows cannot win (implies "
                "--exhaustive; slow at large p)");
  sub->add_option("--planning-workers", o->planning_workers,
                  "threads that evaluate candidates (default 2; at most this machine's processors "
                  "and the candidates): how fast auto decides, never what");
  sub->add_option("--rank", o->rank,
                  "plan as the MPI process of this rank does: keep this rank's program only, "
                  "built alone wherever the time needs no whole schedule; a choice whose whole "
                  "schedule would exceed about 2^20 ops is not simulated (its formula's time)");
  sub->add_option("--dump", o->dump, "write the schedule (text, or JSON if FILE ends in .json)");
  o->memory.add_to(*sub);
  sub->footer(kLimitsHelp);
  sub->callback([o] { run_plan(*o); });
}

}  // namespace optcoll::cli
