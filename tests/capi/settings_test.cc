// SPDX-License-Identifier: Apache-2.0
// File: the table of OPTCOLL_* settings (optcoll/capi/settings.h): every setting's good and
// bad values, what a bad one does (fatal or a warning, under OPTCOLL_STRICT), the report's
// lines, unknown names, and that docs/c_api.md lists the same settings. (The same table
// under mpirun: tests/pmpi pmpi_setting_*, tests/capi capi_settings_*.)
#include "optcoll/capi/settings.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace optcoll::capi {
namespace {

using Env = std::map<std::string, std::string>;

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

// The one problem of reading `env`.
SettingProblem only_problem(const Env& env) {
  const EnvSettings read = read_settings(env);
  EXPECT_EQ(read.problems.size(), 1U);
  return read.problems.empty() ? SettingProblem{} : read.problems.front();
}

TEST(Settings, UnsetAndEmptyMeanTheDefaults) {
  for (const Env& env : {Env{}, Env{{"OPTCOLL_PMPI", ""}, {"OPTCOLL_MODEL", ""}}}) {
    const EnvSettings read = read_settings(env);
    EXPECT_TRUE(read.problems.empty());
    EXPECT_FALSE(read.stops());
    EXPECT_EQ(read.values.pmpi_mode, PmpiMode::kAuto);
    EXPECT_DOUBLE_EQ(read.values.pmpi_margin, 0.1);
    EXPECT_EQ(read.values.pmpi_log, "");
    EXPECT_EQ(read.values.model_path, "");
    EXPECT_FALSE(read.values.model.has_value());  // each communicator's transport's default
    EXPECT_EQ(read.values.timeout.count(), 30000);
    EXPECT_TRUE(read.values.shm.shared_memory);
    EXPECT_FALSE(read.values.progress_thread);
    EXPECT_TRUE(read.values.strict);
    EXPECT_EQ(read.report(), "");
  }
}

TEST(Settings, GoodValuesAreTaken) {
  const std::string model = temp_file("optcoll_settings_model.json", R"({"alpha": 3e-6})");
  const std::string log = (std::filesystem::temp_directory_path() / "calls").string();
  const EnvSettings read = read_settings({{"OPTCOLL_PMPI", "always"},
                                          {"OPTCOLL_PMPI_MARGIN", "0.25"},
                                          {"OPTCOLL_PMPI_LOG", log},
                                          {"OPTCOLL_MODEL", model},
                                          {"OPTCOLL_TIMEOUT_MS", "5000"},
                                          {"OPTCOLL_SHM", "0"},
                                          {"OPTCOLL_SHM_BYTES", "1M"},
                                          {"OPTCOLL_SHM_MIN_BYTES", "4K"},
                                          {"OPTCOLL_PROGRESS_THREAD", "1"},
                                          {"OPTCOLL_STRICT", "0"}});
  EXPECT_TRUE(read.problems.empty()) << read.report();
  EXPECT_EQ(read.values.pmpi_mode, PmpiMode::kAlways);
  EXPECT_DOUBLE_EQ(read.values.pmpi_margin, 0.25);
  EXPECT_EQ(read.values.pmpi_log, log);
  EXPECT_EQ(read.values.model_path, model);
  EXPECT_DOUBLE_EQ(read.values.model->alpha, 3e-6);
  EXPECT_EQ(read.values.timeout.count(), 5000);
  EXPECT_FALSE(read.values.shm.shared_memory);
  EXPECT_EQ(read.values.shm.shm_bytes, std::size_t{1} << 20);
  EXPECT_EQ(read.values.shm.shm_min_bytes, std::size_t{4} << 10);
  EXPECT_TRUE(read.values.progress_thread);
  EXPECT_FALSE(read.values.strict);
  EXPECT_EQ(read_settings({{"OPTCOLL_PMPI", "never"}}).values.pmpi_mode, PmpiMode::kNever);
}

// A tuning table (optcoll tune's format) is read once; a bad file stops the program like a
// bad model, and entries this optcoll cannot use are each a warning.
TEST(Settings, TuningTableIsReadAndWhatItSetsAsideIsSaid) {
  TuningTable table;
  table.backend = "mpi";
  table.nranks = 4;
  table.registry = registry_fingerprint();
  TuningPoint point;
  point.kind = CollectiveKind::kAllreduce;
  point.bytes = 1024;
  point.runs = {{"allreduce/ring", "", "", 2e-6, 3e-6},
                {"allreduce/no_such_algorithm", "", "", 1e-6, -1}};
  table.points.push_back(point);
  const std::string path = temp_file("optcoll_settings_tuning.json", tuning_to_json(table));
  const EnvSettings read = read_settings({{"OPTCOLL_TUNING", path}});
  ASSERT_TRUE(read.values.tuning);
  EXPECT_EQ(read.values.tuning_path, path);
  EXPECT_EQ(read.values.tuning->nranks, 4);
  ASSERT_EQ(read.values.tuning->points.size(), 1U);
  EXPECT_EQ(read.values.tuning->points[0].runs.size(), 1U);  // the unknown one set aside
  ASSERT_EQ(read.problems.size(), 1U) << read.report();
  EXPECT_FALSE(read.problems[0].fatal);
  EXPECT_NE(read.problems[0].message.find("no_such_algorithm"), std::string::npos)
      << read.problems[0].message;
  EXPECT_FALSE(read.stops());

  const EnvSettings missing = read_settings({{"OPTCOLL_TUNING", "/nope.json"}});
  EXPECT_TRUE(missing.stops());
  ASSERT_EQ(missing.problems.size(), 1U);
  EXPECT_EQ(missing.problems[0].message,
            "OPTCOLL_TUNING: cannot read the tuning file '/nope.json'");
  EXPECT_FALSE(missing.values.tuning);
  const std::string model = temp_file("optcoll_settings_not_tuning.json", R"({"alpha": 1})");
  const EnvSettings wrong = read_settings({{"OPTCOLL_TUNING", model}});
  EXPECT_TRUE(wrong.stops());
  ASSERT_EQ(wrong.problems.size(), 1U);
  EXPECT_NE(wrong.problems[0].message.find("OPTCOLL_TUNING: tuning file '" + model + "': "),
            std::string::npos)
      << wrong.problems[0].message;
}

struct BadCase {
  const char* name;
  const char* value;
  const char* message;  // the whole message
  bool fatal;
};

TEST(Settings, EachBadValueIsAProblemNamingIt) {
  const std::string invalid = temp_file("optcoll_settings_invalid.json", "{\"alpha\": 1e-6,\n");
  const std::string dir = std::filesystem::temp_directory_path().string();
  const BadCase cases[] = {
      {"OPTCOLL_PMPI", "bogus",
       "OPTCOLL_PMPI='bogus' is not a routing policy (auto, always or never)", true},
      {"OPTCOLL_PMPI", "ALWAYS",
       "OPTCOLL_PMPI='ALWAYS' is not a routing policy (auto, always or never, in lower case)",
       true},
      {"OPTCOLL_PMPI_MARGIN", "abc", "OPTCOLL_PMPI_MARGIN='abc' is not a number in [0, 10)", false},
      {"OPTCOLL_PMPI_MARGIN", "-5", "OPTCOLL_PMPI_MARGIN='-5' is not a number in [0, 10)", false},
      {"OPTCOLL_PMPI_MARGIN", "0.1x", "OPTCOLL_PMPI_MARGIN='0.1x' is not a number in [0, 10)",
       false},
      {"OPTCOLL_PMPI_MARGIN", "nan", "OPTCOLL_PMPI_MARGIN='nan' is not a number in [0, 10)", false},
      {"OPTCOLL_PMPI_LOG", "/nope/calls",
       "OPTCOLL_PMPI_LOG='/nope/calls': no directory '/nope' to write '/nope/calls.<rank>' into",
       false},
      {"OPTCOLL_MODEL", "/nope.json", "OPTCOLL_MODEL: cannot read the model file '/nope.json'",
       true},
      {"OPTCOLL_MODEL", dir.c_str(), nullptr /* below */, true},
      {"OPTCOLL_TIMEOUT_MS", "abc",
       "OPTCOLL_TIMEOUT_MS='abc' is not a positive number of ms (at most 86400000)", true},
      {"OPTCOLL_TIMEOUT_MS", "0",
       "OPTCOLL_TIMEOUT_MS='0' is not a positive number of ms (at most 86400000)", true},
      {"OPTCOLL_SHM", "banana", "OPTCOLL_SHM must be 0 or 1, got 'banana'", true},
      {"OPTCOLL_SHM_BYTES", "0",
       "OPTCOLL_SHM_BYTES must be positive (OPTCOLL_SHM=0 turns the channel off)", true},
      {"OPTCOLL_SHM_MIN_BYTES", "12X",
       "OPTCOLL_SHM_MIN_BYTES must be a byte count (digits, optionally K, M or G), got '12X'",
       true},
      {"OPTCOLL_PROGRESS_THREAD", "on", "OPTCOLL_PROGRESS_THREAD='on' must be 0 or 1", true},
      {"OPTCOLL_STRICT", "yes", "OPTCOLL_STRICT='yes' must be 0 or 1", false},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(std::string(c.name) + "=" + c.value);
    const EnvSettings read = read_settings({{c.name, c.value}});
    ASSERT_EQ(read.problems.size(), 1U);
    const SettingProblem& p = read.problems.front();
    EXPECT_EQ(p.name, c.name);
    if (c.message != nullptr) {
      EXPECT_EQ(p.message, c.message);
    } else {
      EXPECT_EQ(p.message, "OPTCOLL_MODEL: '" + dir + "' is a directory, not a model file");
    }
    EXPECT_EQ(p.fatal, c.fatal);
    EXPECT_EQ(read.stops(), c.fatal);
    // The value stays the default.
    const SettingValues defaults;
    EXPECT_EQ(read.values.pmpi_mode, defaults.pmpi_mode);
    EXPECT_DOUBLE_EQ(read.values.pmpi_margin, defaults.pmpi_margin);
    EXPECT_EQ(read.values.timeout, defaults.timeout);
    EXPECT_EQ(read.values.shm.shared_memory, defaults.shm.shared_memory);
    EXPECT_EQ(read.values.shm.shm_bytes, defaults.shm.shm_bytes);
    EXPECT_EQ(read.values.model_path, "");
  }
  const SettingProblem invalid_json = only_problem({{"OPTCOLL_MODEL", invalid}});
  EXPECT_EQ(invalid_json.message.rfind(
                "OPTCOLL_MODEL: model file '" + invalid + "': model file is not valid JSON: ", 0),
            0U)
      << invalid_json.message;
}

TEST(Settings, StrictZeroTurnsFatalProblemsIntoWarnings) {
  const EnvSettings strict = read_settings({{"OPTCOLL_PMPI", "ALWAYS"}});
  EXPECT_TRUE(strict.stops());
  EXPECT_EQ(strict.report(),
            "error: OPTCOLL_PMPI='ALWAYS' is not a routing policy (auto, always or never, in "
            "lower case)");
  EXPECT_EQ(strict.fatal_message(),
            "OPTCOLL_PMPI='ALWAYS' is not a routing policy (auto, always or never, in lower "
            "case) (OPTCOLL_STRICT=0 runs with the defaults instead)");
  const EnvSettings lenient = read_settings({{"OPTCOLL_PMPI", "ALWAYS"}, {"OPTCOLL_STRICT", "0"}});
  EXPECT_FALSE(lenient.stops());
  EXPECT_EQ(lenient.values.pmpi_mode, PmpiMode::kAuto);
  EXPECT_EQ(lenient.report(),
            "warning: OPTCOLL_PMPI='ALWAYS' is not a routing policy (auto, always or never, in "
            "lower case); using the default (auto)");
  // A bad OPTCOLL_STRICT keeps the program strict.
  EXPECT_TRUE(read_settings({{"OPTCOLL_MODEL", "/nope.json"}, {"OPTCOLL_STRICT", "no"}}).stops());
}

TEST(Settings, WarningsSayWhatIsUsedInstead) {
  const EnvSettings read =
      read_settings({{"OPTCOLL_PMPI_MARGIN", "abc"}, {"OPTCOLL_MODLE", "m.json"}});
  EXPECT_FALSE(read.stops());
  ASSERT_EQ(read.problems.size(), 2U);
  // One line each, in the variables' order.
  EXPECT_EQ(
      read.report(),
      "warning: OPTCOLL_MODLE is not an optcoll setting (known: OPTCOLL_PMPI, "
      "OPTCOLL_PMPI_MARGIN, OPTCOLL_PMPI_LOG, OPTCOLL_MODEL, OPTCOLL_TUNING, OPTCOLL_TIMEOUT_MS, "
      "OPTCOLL_SHM, OPTCOLL_SHM_BYTES, OPTCOLL_SHM_MIN_BYTES, OPTCOLL_PROGRESS_THREAD, "
      "OPTCOLL_STRICT); ignored\n"
      "warning: OPTCOLL_PMPI_MARGIN='abc' is not a number in [0, 10); using the default "
      "(0.1)");
  EXPECT_TRUE(read_settings({{"HOME", "/root"}, {"OPTCOLLECTIVE", "x"}}).problems.empty());
}

TEST(Settings, TheTableIsTheDocumentedOne) {
  std::ifstream doc(std::string(OPTCOLL_SOURCE_DIR) + "/docs/c_api.md");
  std::stringstream text;
  text << doc.rdbuf();
  std::set<std::string_view> names;
  for (const SettingInfo& s : all_settings()) {
    EXPECT_TRUE(s.name.starts_with("OPTCOLL_")) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << s.name << " twice";
    const std::string row = fmt::format("| `{}` | {} | {} | {} |", s.name, s.accepts, s.fallback,
                                        s.fatal ? "stops" : "warning");
    EXPECT_NE(text.str().find(row), std::string::npos) << "docs/c_api.md lacks the row " << row;
  }
}

}  // namespace
}  // namespace optcoll::capi
