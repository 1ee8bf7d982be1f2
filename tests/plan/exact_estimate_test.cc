// SPDX-License-Identifier: Apache-2.0
// File: every cost formula's claim to be exact (algorithms/estimate.h: Estimate::exact, "the
// time equals the simulated makespan") against the simulator. Selection trusts an exact
// estimate as it would a simulation, and plan() does not simulate a choice so priced when its
// schedule is large (select.h), so a wrong claim would be a wrong prediction nobody checks.
// The grid: every registry algorithm, its defaults and the parameter variants the search
// prices (search_steps.h, prepare_entry), over the selection tests' grid (registry_cases.h,
// kind_grid_specs: ranks, roots, count patterns, operators), under the models the formulas
// describe (per element and per byte).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/plan/search_steps.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::CountPattern;

struct NamedModel {
  std::string name;
  CostModel model;
};

// The models the formulas describe: homogeneous alpha, beta, gamma, copy (estimate.h).
std::vector<NamedModel> closed_form_models() {
  return {{"unit", CostModel{}},
          {"reference cluster (per byte)", reference_cluster_model()},
          {"latency-bound", testing::abstract_model(1000, 1, 0.5, 0)},
          {"copies", testing::abstract_model(100, 1, 3, 1)}};
}

std::vector<Rank> ranks() {
  return testing::kSanitizedBuild ? std::vector<Rank>{1, 2, 3, 5, 8, 16, 17}
                                  : std::vector<Rank>{1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 32, 33, 64};
}

// Equal up to floating-point rounding: the formula adds the same terms in another order.
bool same_time(Time formula, Time simulated) {
  return std::abs(formula - simulated) <= 1e-9 * std::max(std::abs(simulated), Time{1e-300});
}

class ExactEstimates : public ::testing::TestWithParam<CollectiveKind> {};

TEST_P(ExactEstimates, EqualTheSimulatedMakespan) {
  int checked = 0;
  for (const NamedModel& m : closed_form_models()) {
    for (const Rank p : ranks()) {
      for (CollectiveSpec spec : testing::kind_grid_specs(GetParam(), p)) {
        spec.elem_bytes = m.model.per_byte ? 8 : 4;
        for (search::Entry& e : search::make_entries(spec, m.model)) {
          search::prepare_entry(e, spec, m.model, /*price=*/true);
          if (e.why_not) continue;
          for (const search::Option& o : e.options) {
            if (!o.estimate || !o.estimate->exact) continue;
            const Schedule schedule = algorithms::build(*e.info, spec, o.params, m.model);
            const SimResult sim = simulate(schedule, m.model);
            ASSERT_EQ(sim.status, SimStatus::kOk) << e.info->name << " " << describe(spec);
            ++checked;
            EXPECT_TRUE(same_time(o.estimate->time, sim.makespan))
                << e.info->name << " (" << o.params.to_string() << ") " << describe(spec)
                << " under " << m.name << ": formula " << o.estimate->time << ", simulated "
                << sim.makespan;
          }
        }
      }
    }
  }
  RecordProperty("exact_claims_checked", checked);
}

// The grid above checks something: the formulas of plain alltoall claim exactness under the
// reference cluster (where plan() relies on them at large p).
TEST(ExactEstimates, AreClaimedWhereTheSearchReliesOnThem) {
  const CollectiveSpec spec =
      testing::grid_spec(CollectiveKind::kAlltoall, 8, 0, CountPattern::kFive);
  int exact = 0;
  for (search::Entry& e : search::make_entries(spec, reference_cluster_model())) {
    search::prepare_entry(e, spec, reference_cluster_model(), /*price=*/true);
    if (!e.why_not && e.options[0].estimate && e.options[0].estimate->exact) ++exact;
  }
  EXPECT_GE(exact, 2);  // linear and pairwise
}

INSTANTIATE_TEST_SUITE_P(ByCollective, ExactEstimates, ::testing::ValuesIn(all_collectives()),
                         [](const auto& test) { return std::string(collective_name(test.param)); });

}  // namespace
}  // namespace optcoll
