// SPDX-License-Identifier: Apache-2.0
// File: the experiment registry, and every experiment's quick run produces a table, valid
// JSON and well-formed files.
#include "optcoll/experiments/experiment.h"

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"

namespace optcoll::experiments {
namespace {

TEST(Experiments, NamesAreUniqueAndFindable) {
  std::set<std::string_view> names;
  for (const auto& info : all_experiments()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(&find_experiment(info.name), &info);
  }
  EXPECT_THROW(find_experiment("nope"), Error);
}

class QuickRun : public ::testing::TestWithParam<ExperimentInfo> {};

TEST_P(QuickRun, ProducesTableJsonAndFiles) {
  ExperimentOptions options;
  options.quick = true;
  const ExperimentResult result = GetParam().run(options);
  EXPECT_FALSE(result.table.empty());
  EXPECT_NO_THROW({
    const auto doc = nlohmann::json::parse(result.json);
    EXPECT_FALSE(doc.is_null());
  });
  for (const auto& [name, contents] : result.files) {
    EXPECT_FALSE(contents.empty()) << name;
    if (name.ends_with(".svg")) {
      EXPECT_EQ(contents.rfind("<svg", 0), 0u) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, QuickRun,
                         ::testing::ValuesIn(all_experiments().begin(), all_experiments().end()),
                         [](const auto& param_info) {
                           std::string name(param_info.param.name);
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace optcoll::experiments
