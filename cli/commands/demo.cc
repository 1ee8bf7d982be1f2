// SPDX-License-Identifier: Apache-2.0
// File: `optcoll demo`: the README's first command. For an irregular gatherv and an
// allreduce it shows every algorithm's predicted time side by side, proves the chosen
// schedule correct, runs it on threads with real data and confirms the result.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "optcoll/api/threads_check.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"
#include "optcoll/verify/verify.h"

namespace optcoll::cli {
namespace {

struct DemoOptions {
  Rank nranks = 16;
  Count count = 1 << 18;
};

// Plans under the reference cluster model, verifies, runs, and reports; true if correct.
bool show(const std::string& title, const CollectiveSpec& spec) {
  std::cout << "== " << title << "\n";
  const CostModel model = reference_cluster_model();
  const Plan p = plan(spec, model, "auto");
  std::cout << "predicted times under the reference cluster model (alpha 2 us, beta 0.1 ns/B):\n"
            << p.explain();
  const VerifyReport report = verify(p.schedule);
  std::cout << fmt::format("chosen: {}; verifier: {}\n", p.algorithm, report.summary());
  const CheckedRun run =
      run_checked_on_threads(p.schedule, Datatype::float64(), "sum", CheckedRunOptions{});
  std::cout << fmt::format(
      "ran on {}: median {:.3g} ms per call; result {}\n\n", run.ran_on, run.median_seconds * 1e3,
      run.correct ? "correct (equals the naive reference on every rank)" : "WRONG");
  return report.ok() && run.correct;
}

void run_demo(const DemoOptions& o) {
  if (o.nranks < 2 || o.nranks > 256) throw_invalid("--nranks must be in 2..256, got {}", o.nranks);
  if (o.count < 1) throw_invalid("--count must be positive, got {}", o.count);
  std::cout << "optcoll demo: every algorithm is a schedule that is planned, verified, simulated "
               "and executed.\n\n";
  CollectiveSpec gatherv;
  gatherv.kind = CollectiveKind::kGatherv;
  gatherv.nranks = o.nranks;
  gatherv.counts = distribution_counts(Distribution::kSpikes, o.nranks, 1000, 7);
  gatherv.elem_bytes = 8;
  CollectiveSpec allreduce;
  allreduce.kind = CollectiveKind::kAllreduce;
  allreduce.nranks = o.nranks;
  allreduce.count = o.count;
  allreduce.elem_bytes = 8;
  bool ok =
      show(fmt::format("gatherv of doubles, p = {}, 'spikes' block sizes (Träff's distribution, "
                       "b = 1000)",
                       o.nranks),
           gatherv);
  ok = show(fmt::format("allreduce of {} doubles, p = {}", o.count, o.nranks), allreduce) && ok;
  std::cout << (ok ? "demo: all results correct\n" : "demo: FAILED\n");
  if (!ok) throw CheckFailed{};
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* sub =
      app.add_subcommand("demo", "plan, verify and run an irregular gatherv and an allreduce");
  sub->add_option("-p,--nranks", o->nranks, "ranks (threads), default 16");
  sub->add_option("--count", o->count, "allreduce elements, default 262144");
  sub->callback([o] { run_demo(*o); });
}

}  // namespace optcoll::cli
