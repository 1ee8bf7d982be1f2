// SPDX-License-Identifier: Apache-2.0
// File: the table of OPTCOLL_* settings and its reader (settings.h).
#include "optcoll/capi/settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "optcoll/capi/model_file.h"
#include "optcoll/model/error.h"

extern char** environ;  // POSIX: the process's environment

namespace optcoll::capi {
namespace {

constexpr long kMaxTimeoutMs = 86400000;  // one day

// Sets `values` from the setting's (non-empty) text; throws Error naming the problem.
using ApplyFn = void (*)(std::string_view text, SettingValues& values);

void apply_mode(std::string_view text, SettingValues& values) {
  static constexpr std::pair<std::string_view, PmpiMode> kModes[] = {
      {"auto", PmpiMode::kAuto}, {"always", PmpiMode::kAlways}, {"never", PmpiMode::kNever}};
  for (const auto& [name, mode] : kModes) {
    if (text == name) {
      values.pmpi_mode = mode;
      return;
    }
  }
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool wrong_case = std::any_of(std::begin(kModes), std::end(kModes),
                                      [&](const auto& m) { return lower == m.first; });
  throw_invalid("OPTCOLL_PMPI='{}' is not a routing policy (auto, always or never{})", text,
                wrong_case ? ", in lower case" : "");
}

void apply_margin(std::string_view text, SettingValues& values) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0' || !std::isfinite(value) || value < 0 || value >= 10) {
    throw_invalid("OPTCOLL_PMPI_MARGIN='{}' is not a number in [0, 10)", text);
  }
  values.pmpi_margin = value;
}

void apply_log(std::string_view text, SettingValues& values) {
  const std::filesystem::path path(text);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw_invalid("OPTCOLL_PMPI_LOG='{}': no directory '{}' to write '{}.<rank>' into", text,
                  dir.string(), text);
  }
  values.pmpi_log = std::string(text);
}

void apply_model(std::string_view text, SettingValues& values) {
  try {
    values.model = read_model_file(text);
  } catch (const Error& e) {
    throw_invalid("OPTCOLL_MODEL: {}", e.what());
  }
  values.model_path = std::string(text);
}

void apply_tuning(std::string_view text, SettingValues& values) {
  try {
    values.tuning = std::make_shared<const TuningTable>(read_tuning_file(text));
  } catch (const Error& e) {
    throw_invalid("OPTCOLL_TUNING: {}", e.what());
  }
  values.tuning_path = std::string(text);
}

void apply_timeout(std::string_view text, SettingValues& values) {
  const std::string copy(text);
  char* end = nullptr;
  const long value = std::strtol(copy.c_str(), &end, 10);
  if (end == copy.c_str() || *end != '\0' || value <= 0 || value > kMaxTimeoutMs) {
    throw_invalid("OPTCOLL_TIMEOUT_MS='{}' is not a positive number of ms (at most {})", text,
                  kMaxTimeoutMs);
  }
  values.timeout = std::chrono::milliseconds(value);
}

// The same-node channel's three settings parse as the transport's own (mpi_transport.h).
template <int kIndex>
void apply_shm(std::string_view text, SettingValues& values) {
  values.shm.apply(mpi::MpiTransport::Options::kVariables[kIndex], text);
}

void apply_progress_thread(std::string_view text, SettingValues& values) {
  if (text != "0" && text != "1") {
    throw_invalid("OPTCOLL_PROGRESS_THREAD='{}' must be 0 or 1", text);
  }
  values.progress_thread = text == "1";
}

void apply_strict(std::string_view text, SettingValues& values) {
  if (text != "0" && text != "1") throw_invalid("OPTCOLL_STRICT='{}' must be 0 or 1", text);
  values.strict = text == "1";
}

struct Entry {
  SettingInfo info;
  ApplyFn apply;
};

// THE table. docs/c_api.md ("Settings") shows it to users; keep the two alike.
constexpr Entry kTable[] = {
    {{"OPTCOLL_PMPI", "auto, always or never", "auto", true, "PMPI library"}, apply_mode},
    {{"OPTCOLL_PMPI_MARGIN", "a number in [0, 10)", "0.1", false, "PMPI library"}, apply_margin},
    {{"OPTCOLL_PMPI_LOG", "a path prefix in an existing directory", "no call log", false,
      "PMPI library"},
     apply_log},
    {{"OPTCOLL_MODEL", "a model file (JSON, as optcoll calibrate writes)",
      "the MPI backend's default: its one-node model on one node, else the reference cluster", true,
      "C API and PMPI library"},
     apply_model},
    {{"OPTCOLL_TUNING", "a tuning table (JSON, as optcoll tune writes)",
      "none: auto follows the model", true, "C API and PMPI library"},
     apply_tuning},
    {{"OPTCOLL_TIMEOUT_MS", "milliseconds, 1 to 86400000", "30000", true, "C API and PMPI library"},
     apply_timeout},
    {{"OPTCOLL_SHM", "0 or 1", "1 (the same-node channel on)", true, "C API and PMPI library"},
     apply_shm<0>},
    {{"OPTCOLL_SHM_BYTES", "bytes (K, M, G suffixes), at least 1", "32M", true,
      "C API and PMPI library"},
     apply_shm<1>},
    {{"OPTCOLL_SHM_MIN_BYTES", "bytes (K, M, G suffixes)", "16K", true, "C API and PMPI library"},
     apply_shm<2>},
    {{"OPTCOLL_PROGRESS_THREAD", "0 or 1 (1 needs MPI_THREAD_MULTIPLE)",
      "0 (requests progress inside optcoll's calls)", true, "C API and PMPI library"},
     apply_progress_thread},
    {{"OPTCOLL_STRICT", "0 or 1", "1 (a bad fatal setting stops the program)", false,
      "C API and PMPI library"},
     apply_strict},
};

std::string known_names() {
  std::string names;
  for (const Entry& e : kTable)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", e.info.name);
  return names;
}

const Entry* find_entry(std::string_view name) {
  for (const Entry& e : kTable) {
    if (e.info.name == name) return &e;
  }
  return nullptr;
}

}  // namespace

std::span<const SettingInfo> all_settings() {
  static const auto infos = [] {
    std::vector<SettingInfo> list;
    for (const Entry& e : kTable) list.push_back(e.info);
    return list;
  }();
  return infos;
}

bool EnvSettings::stops() const {
  return values.strict &&
         std::any_of(problems.begin(), problems.end(), [](const auto& p) { return p.fatal; });
}

std::string EnvSettings::report() const {
  std::string text;
  for (const SettingProblem& p : problems) {
    if (!text.empty()) text += "\n";
    text += p.fatal && values.strict ? fmt::format("error: {}", p.message)
                                     : fmt::format("warning: {}; {}", p.message, p.instead);
  }
  return text;
}

std::string EnvSettings::fatal_message() const {
  std::string text;
  for (const SettingProblem& p : problems) {
    if (p.fatal) text += fmt::format("{}{}", text.empty() ? "" : "; ", p.message);
  }
  return text + " (OPTCOLL_STRICT=0 runs with the defaults instead)";
}

EnvSettings read_settings(const std::map<std::string, std::string>& environment) {
  EnvSettings result;
  for (const auto& [name, text] : environment) {
    if (!name.starts_with("OPTCOLL_") || text.empty()) continue;
    const Entry* entry = find_entry(name);
    if (entry == nullptr) {
      result.problems.push_back(
          {name, fmt::format("{} is not an optcoll setting (known: {})", name, known_names()),
           false, "ignored"});
      continue;
    }
    try {
      entry->apply(text, result.values);
    } catch (const Error& e) {
      result.problems.push_back({name, e.what(), entry->info.fatal,
                                 fmt::format("using the default ({})", entry->info.fallback)});
    }
  }
  // Entries of a tuning table this optcoll cannot use (an algorithm it lacks, another
  // registry) are set aside, each said.
  if (result.values.tuning) {
    for (const std::string& warning : result.values.tuning->warnings) {
      result.problems.push_back(
          {"OPTCOLL_TUNING",
           fmt::format("OPTCOLL_TUNING='{}': {}", result.values.tuning_path, warning), false,
           "the rest of the table is used"});
    }
  }
  return result;
}

std::map<std::string, std::string> optcoll_environment() {
  std::map<std::string, std::string> found;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos || !text.starts_with("OPTCOLL_")) continue;
    found.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return found;
}

const EnvSettings& process_settings() {
  static const EnvSettings settings = read_settings(optcoll_environment());
  return settings;
}

}  // namespace optcoll::capi
