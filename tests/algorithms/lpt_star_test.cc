// SPDX-License-Identifier: Apache-2.0
// File: gather(v)/lpt_star and scatter(v)/lpt_star on k ports: the simulated time is Graham's
// LPT list schedule of the root's messages (computed here on its own) plus the root's copy,
// and equals the estimate; on Träff's Theorem 6 instances (α = 0: the best star is the best
// multiprocessor schedule, found here by brute force) LPT lies within 4/3 − 1/(3k) of the
// best, the lower bound below it, and the one-ported algorithms above it.
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"

namespace optcoll {
namespace {

CostModel ported(int ports, Time alpha, Time beta, Time copy) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.copy = copy;
  m.gamma = 0;
  m.ports = ports;
  return m;
}

// Graham's list schedule of `times` in the given order on k machines (each job on the machine
// that frees first); its makespan.
Time list_schedule(const std::vector<Time>& times, int k) {
  std::vector<Time> load(static_cast<std::size_t>(k), 0);
  for (const Time t : times) *std::min_element(load.begin(), load.end()) += t;
  return *std::max_element(load.begin(), load.end());
}

// The root's messages: α + m·β of each non-empty block but the root's, largest first.
std::vector<Time> message_times(const std::vector<Count>& counts, Rank root, const CostModel& m) {
  std::vector<Count> sizes;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    if (static_cast<Rank>(q) != root && counts[q] > 0) sizes.push_back(counts[q]);
  }
  std::stable_sort(sizes.begin(), sizes.end(), std::greater<>());
  std::vector<Time> times;
  for (const Count s : sizes) times.push_back(m.alpha + m.beta * static_cast<Time>(s));
  return times;
}

// The best assignment of `times` to k machines, by trying every one (k^n).
Time best_schedule(const std::vector<Time>& times, int k) {
  Time best = 1e300;
  std::vector<Time> load(static_cast<std::size_t>(k), 0);
  const std::function<void(std::size_t)> place = [&](std::size_t i) {
    if (i == times.size()) {
      best = std::min(best, *std::max_element(load.begin(), load.end()));
      return;
    }
    for (auto& l : load) {
      l += times[i];
      place(i + 1);
      l -= times[i];
    }
  };
  place(0);
  return best;
}

Time simulated(const std::string& name, const CollectiveSpec& spec, const CostModel& m) {
  const Schedule s = algorithms::build(name, spec, {}, m);
  EXPECT_TRUE(verify(s).ok()) << name << ": " << verify(s).summary();
  const auto result = simulate(s, m);
  EXPECT_EQ(result.status, SimStatus::kOk) << name;
  return result.makespan;
}

TEST(LptStar, SimulatesToGrahamsListScheduleAndItsEstimate) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> size(0, 40);
  for (const auto kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
    const std::string name = fmt::format("{}/lpt_star", collective_name(kind));
    const auto& info = *algorithms::find_algorithm(name);
    for (const Rank p : {1, 2, 3, 5, 8, 12, 17}) {
      for (const int k : {1, 2, 3, 4}) {
        for (const Time alpha : {0.0, 3.0}) {
          std::vector<Count> counts(static_cast<std::size_t>(p));
          for (auto& c : counts) c = size(rng) < 8 ? 0 : size(rng);
          const Rank root = static_cast<Rank>(rng() % static_cast<unsigned>(p));
          auto spec = make_spec_v(kind, p, counts, root);
          spec.elem_bytes = 1;
          const CostModel m = ported(k, alpha, 1, 0.25);
          const Time copy = 0.25 * static_cast<Time>(counts[static_cast<std::size_t>(root)]);
          const Time expected = list_schedule(message_times(counts, root, m), k) + copy;
          const std::string where = fmt::format("{} p={} k={} alpha={} root={} counts={}", name, p,
                                                k, alpha, root, fmt::join(counts, ","));
          EXPECT_DOUBLE_EQ(simulated(name, spec, m), expected) << where;
          const auto estimate = info.estimate(spec, algorithms::resolve_params(info, {}), m);
          ASSERT_TRUE(estimate) << where;
          EXPECT_DOUBLE_EQ(estimate->time, expected) << where;
        }
      }
    }
  }
}

// Träff's Theorem 6: with α = 0 a k-ported star is a multiprocessor schedule of the blocks.
TEST(LptStar, TheoremSixInstancesStayWithinGrahamsBoundOfTheBestStar) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> job(1, 20);
  for (const int k : {2, 3}) {
    for (int instance = 0; instance < 40; ++instance) {
      std::vector<Count> counts{0};  // the root's own block: nothing to copy
      const int n = 3 + instance % 6;
      for (int j = 0; j < n; ++j) counts.push_back(job(rng));
      const auto p = static_cast<Rank>(counts.size());
      const CostModel m = ported(k, 0, 1, 0);
      auto spec = make_spec_v(CollectiveKind::kGatherv, p, counts, 0);
      spec.elem_bytes = 1;
      const Time best = best_schedule(message_times(counts, 0, m), k);
      const Time lpt = simulated("gatherv/lpt_star", spec, m);
      const std::string where = fmt::format("k={} instance {}", k, instance);
      EXPECT_GE(lpt, best) << where;
      EXPECT_LE(lpt, (4.0 / 3.0 - 1.0 / (3.0 * k)) * best + 1e-9) << where;
      EXPECT_LE(*lower_bound(Layout(spec), m), best + 1e-9) << where;
    }
  }
  // The classic instance: LPT 7 (3+2+2 | 3+2), the best 6 (3+3 | 2+2+2).
  auto classic = make_spec_v(CollectiveKind::kGatherv, 6, {0, 3, 3, 2, 2, 2}, 0);
  classic.elem_bytes = 1;
  EXPECT_EQ(simulated("gatherv/lpt_star", classic, ported(2, 0, 1, 0)), 7);
  EXPECT_EQ(best_schedule(message_times({0, 3, 3, 2, 2, 2}, 0, ported(2, 0, 1, 0)), 2), 6);
  // Where rank order is worse: linear puts the 4 last (6), LPT first (4, the best).
  auto late = make_spec_v(CollectiveKind::kGatherv, 6, {0, 1, 1, 1, 1, 4}, 0);
  late.elem_bytes = 1;
  EXPECT_EQ(simulated("gatherv/linear", late, ported(2, 0, 1, 0)), 6);
  EXPECT_EQ(simulated("gatherv/lpt_star", late, ported(2, 0, 1, 0)), 4);
}

}  // namespace
}  // namespace optcoll
