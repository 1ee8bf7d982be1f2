// SPDX-License-Identifier: Apache-2.0
// File: the CLI's subcommands. Each add_* registers one subcommand whose callback calls the
// library and prints; errors are thrown as optcoll::Error and turned into exit codes by
// main.cc (2: bad usage or input; 1: a failed check; 3: an internal error).
#pragma once

#include <CLI/CLI.hpp>

namespace optcoll::cli {

// Thrown by a command whose check failed (verify not ok, run incorrect, simulated deadlock),
// after it has printed its result: main exits with status 1.
struct CheckFailed {};

void add_list_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_experiment_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_diagnose_command(CLI::App& app);

}  // namespace optcoll::cli
