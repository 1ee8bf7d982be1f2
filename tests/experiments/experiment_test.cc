// SPDX-License-Identifier: Apache-2.0
// File: the experiment registry, and every experiment's quick run produces a table, valid
// JSON and well-formed files.
#include "optcoll/experiments/experiment.h"

#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"

namespace optcoll::experiments {
namespace {

// Each experiment has its own name and folder; "all" (`optcoll experiment all`) is no
// experiment's name.
TEST(Experiments, NamesAreUniqueAndFindable) {
  std::set<std::string_view> names, directories;
  for (const auto& info : all_experiments()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(directories.insert(info.directory).second) << info.directory;
    EXPECT_EQ(&find_experiment(info.name), &info);
  }
  EXPECT_FALSE(names.contains("all"));
  EXPECT_THROW(find_experiment("nope"), Error);
}

// The full crossover run (p = 64, about 7 s in the release build; sanitizer builds skip it):
// every paper value stands on the row of the algorithm its formula describes, and the
// simulated crossover lies within a block (64 B) of it. The 2-D broadcasts run on the
// paper's 8 x 8 grid (their crossovers are 18,065 and 34,729 B there, 4,002 B under
// dims=auto's grid).
TEST(Experiments, CrossoverRowsCarryTheirOwnPaperValues) {
#ifdef OPTCOLL_SANITIZED_BUILD
  GTEST_SKIP() << "the full p = 64 run is too slow under sanitizers";
#endif
  const ExperimentResult r = find_experiment("crossover").run(ExperimentOptions{});
  const auto doc = nlohmann::json::parse(r.json);
  std::set<std::string> with_paper;
  for (const auto& row : doc["crossovers"]) {
    if (!row.contains("paper_bytes")) continue;
    const std::string other = row["other"];
    with_paper.insert(other);
    const double simulated = row["simulated_bytes"];
    const double paper = row["paper_bytes"];
    EXPECT_GE(simulated, paper) << other;
    EXPECT_LT(simulated - paper, 64) << other;
  }
  EXPECT_EQ(with_paper,
            (std::set<std::string>{"bcast/scatter_ring_allgather", "bcast/hybrid_2d_scatter_mst",
                                   "bcast/hybrid_2d_scatter", "reduce/bucket", "allgather/ring",
                                   "reduce_scatter_block/ring", "allreduce/ring"}));
}

// registry-costs sets each algorithm's closed form beside its simulated time: every
// algorithm of the registry has a row at the largest p (or is refused there), and a formula
// that claims to be exact equals the simulation.
TEST(Experiments, RegistryCostsShowsEachClosedFormBesideTheSimulation) {
  ExperimentOptions options;
  options.quick = true;  // p = 2, 4, 8
  const ExperimentResult r = find_experiment("registry-costs").run(options);
  const auto doc = nlohmann::json::parse(r.json);
  std::size_t exact = 0;
  std::set<std::string> at_largest;
  for (const auto& row : doc) {
    if (row["p"] == 8) at_largest.insert(row["algorithm"].get<std::string>());
    if (!row.contains("closed_form_seconds") || !row["closed_form_exact"].get<bool>()) continue;
    ++exact;
    const double formula = row["closed_form_seconds"];
    const double simulated = row["predicted_seconds"];
    EXPECT_NEAR(formula, simulated, 1e-9 * simulated + 1e-15) << row.dump();
  }
  EXPECT_GT(exact, 100u);  // most of the registry's formulas are exact under this model
  for (const std::string& name : at_largest) {
    EXPECT_NE(r.table.find("| " + name + " |"), std::string::npos) << name;
  }
  EXPECT_NE(r.table.find("Closed forms beside the simulation at p = 8"), std::string::npos);
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
