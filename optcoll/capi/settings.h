// SPDX-License-Identifier: Apache-2.0
// File: every OPTCOLL_* environment setting of the C API and the PMPI library, in one
// declarative table (settings.cc: name, what it accepts, its default, whether a bad value
// is fatal, how it is parsed). They are read once per process, here and nowhere else: the
// PMPI library at MPI_Init, the C API at its first call. A bad value is never ignored in
// silence: the reading lists it as a problem, which the PMPI library prints at MPI_Init
// (the lowest rank that has problems) and the C API gives through OPTCOLL_Last_error. A
// fatal one (the model, the PMPI mode, the timeout, the same-node channel) stops the program
// at MPI_Init under the PMPI library, and fails every C API call, unless OPTCOLL_STRICT=0;
// then, like a non-fatal one, it is replaced by its default and reported as a warning.
// An empty value is the same as an unset one. A variable named OPTCOLL_* that is not in
// the table (a misspelt setting) is reported as a warning too.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/plan/tuning.h"

namespace optcoll::capi {

// $OPTCOLL_PMPI: which calls the PMPI library sends through optcoll (pmpi/route.h).
enum class PmpiMode : std::uint8_t { kAuto, kAlways, kNever };

// The settings' values: each the default unless the environment set it well.
struct SettingValues {
  PmpiMode pmpi_mode = PmpiMode::kAuto;
  double pmpi_margin = 0.1;
  std::string pmpi_log;                       // "" = no call log
  std::string model_path;                     // "" = the MPI backend's default (default_mpi_model)
  std::optional<CostModel> model;             // unset: each communicator's transport's default
  std::string tuning_path;                    // "" = no tuning table: auto follows the model
  std::shared_ptr<const TuningTable> tuning;  // optcoll tune's table, where it has the call
  std::chrono::milliseconds timeout{30000};
  mpi::MpiTransport::Options shm;
  bool progress_thread = false;  // CommOptions::progress_thread for every communicator
  bool strict = true;
};

// One row of the table, for people (docs/c_api.md shows the same table).
struct SettingInfo {
  std::string_view name;      // "OPTCOLL_PMPI"
  std::string_view accepts;   // "auto, always or never"
  std::string_view fallback;  // what applies when it is unset (or bad and not fatal)
  bool fatal;                 // a bad value stops the program unless OPTCOLL_STRICT=0
  std::string_view used_by;   // "PMPI library", "C API"
};
std::span<const SettingInfo> all_settings();

struct SettingProblem {
  std::string name;     // the variable
  std::string message;  // "OPTCOLL_PMPI='ALWAYS' is not a routing policy (...)"
  bool fatal = false;
  std::string instead;  // what applies instead when it does not stop the program
};

struct EnvSettings {
  SettingValues values;
  std::vector<SettingProblem> problems;

  // Whether a fatal problem stops the program (OPTCOLL_STRICT is not 0).
  bool stops() const;
  // One line per problem, "error: ..." for those that stop the program, "warning: ...;
  // using ..." for the others (no trailing newline; "" without problems).
  std::string report() const;
  // The fatal problems' messages, for the C API's calls while they stop it.
  std::string fatal_message() const;
};

// Reads the settings from `environment` (variable -> value; only OPTCOLL_* names matter).
// Never throws for a bad value: that is a problem of the result.
EnvSettings read_settings(const std::map<std::string, std::string>& environment);

// The OPTCOLL_* variables of this process's environment.
std::map<std::string, std::string> optcoll_environment();
// read_settings(optcoll_environment()), read once, on the first call.
const EnvSettings& process_settings();

}  // namespace optcoll::capi
