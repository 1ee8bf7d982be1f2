// SPDX-License-Identifier: Apache-2.0
// File: the optcoll command-line tool: subcommand dispatch and exit codes only. The work is
// done by the library; see commands/.
#include <algorithm>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands/commands.h"
#include "cli/memory.h"
#include "optcoll/model/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "optcoll: collective communication algorithms as verified, simulated, executable schedules"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "show help for every subcommand");
  app.set_version_flag("--version", std::string("optcoll ") + OPTCOLL_VERSION);
  optcoll::cli::add_list_command(app);
  optcoll::cli::add_plan_command(app);
  optcoll::cli::add_verify_command(app);
  optcoll::cli::add_simulate_command(app);
  optcoll::cli::add_run_command(app);
  optcoll::cli::add_demo_command(app);
  optcoll::cli::add_experiment_command(app);
  optcoll::cli::add_calibrate_command(app);
  optcoll::cli::add_bench_command(app);
  optcoll::cli::add_tune_command(app);
  optcoll::cli::add_export_command(app);
  optcoll::cli::add_diagnose_command(app);
  const auto all = app.get_subcommands([](const CLI::App*) { return true; });
  const bool known_command =
      argc > 1 && std::any_of(all.begin(), all.end(),
                              [&](const CLI::App* sub) { return sub->get_name() == argv[1]; });
  if (argc > 1 && argv[1][0] != '-' && !known_command) {
    std::string known;
    for (const auto* sub : all) known += (known.empty() ? "" : ", ") + sub->get_name();
    std::cerr << "optcoll: error: unknown command '" << argv[1] << "' (known: " << known << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, or the usage error
    return code == 0 ? 0 : 2;
  } catch (const optcoll::cli::CheckFailed&) {
    return 1;
  } catch (const optcoll::InternalError& e) {
    std::cerr << "optcoll: internal error (please report): " << e.what() << "\n";
    return 3;
  } catch (const optcoll::Error& e) {
    std::cerr << "optcoll: error: " << e.what() << "\n";
    return e.code() == optcoll::ErrorCode::kTransport ? 1 : 2;
  } catch (const std::bad_alloc&) {
    // Not bad input (2): the machine, or an estimate (cli/memory.h) that fell short.
    const std::string& what = optcoll::cli::Activity::current();
    std::cerr << "optcoll: out of memory" << (what.empty() ? "" : " while " + what)
              << " (--max-memory refuses what is estimated not to fit; the practical limits: "
                 "optcoll plan --help)\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "optcoll: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
