// SPDX-License-Identifier: Apache-2.0
// File: `optcoll verify`: prove a schedule correct, or show why it is not (exit status 1).
#include "optcoll/verify/verify.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/options.h"

namespace optcoll::cli {
namespace {

struct VerifyOptionsCli {
  ScheduleSource source;
  ModelOptions model;  // model-optimized algorithms are built for it
  bool json = false;
};

void run_verify(const VerifyOptionsCli& o) {
  const Schedule schedule = o.source.load(o.model.model());
  const VerifyReport report = verify(schedule);
  if (o.json) {
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const auto& d : report.diagnostics) {
      diagnostics.push_back({{"check", verify_check_name(d.check)},
                             {"rank", d.rank},
                             {"op", d.op},
                             {"element", d.element},
                             {"expected", d.expected},
                             {"actual", d.actual},
                             {"message", d.message}});
    }
    const nlohmann::json out = {{"ok", report.ok()},
                                {"algorithm", schedule.algorithm},
                                {"collective", collective_name(schedule.spec.kind)},
                                {"p", schedule.spec.nranks},
                                {"ops", report.ops},
                                {"messages", report.messages},
                                {"truncated", report.truncated},
                                {"diagnostics", diagnostics}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} ({}): {}\n", schedule.algorithm, describe(schedule.spec),
                             report.summary());
  }
  if (!report.ok()) throw CheckFailed{};
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto o = std::make_shared<VerifyOptionsCli>();
  auto* sub = app.add_subcommand("verify", "prove a schedule correct by symbolic execution");
  o->source.add_to(*sub);
  o->model.add_to(*sub);
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([o] { run_verify(*o); });
}

}  // namespace optcoll::cli
