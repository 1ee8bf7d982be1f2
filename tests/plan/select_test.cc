// SPDX-License-Identifier: Apache-2.0
// File: algorithm selection: auto picks the least simulated time and says why it skipped
// the rest; explicit choices are honoured; best-root search.
#include "optcoll/plan/select.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/search.h"
#include "optcoll/plan/search_steps.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

CostModel unit_model(double alpha, double beta, double gamma = 0) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = gamma;
  return m;
}

TEST(Select, AutoPicksTheLeastSimulatedTime) {
  for (const Count n : {Count{1}, Count{100000}}) {
    const auto spec = make_spec(CollectiveKind::kAllreduce, 16, n);
    const CostModel model = unit_model(1000, 1, 0.5);
    const Plan p = plan(spec, model);
    Time best = -1;
    for (const auto* info : algorithms::algorithms_for(spec.kind)) {
      const Time t = simulate(algorithms::build(*info, spec), model).makespan;
      if (best < 0 || t < best) best = t;
    }
    // At most the best registry default (parameter variants and reduce + bcast may win),
    // or a near-tie with it (kTieTolerance).
    EXPECT_LE(p.predicted_time, best * (1 + kTieTolerance));
    EXPECT_EQ(simulate(p.schedule, model).makespan, p.predicted_time);
    // Every registry algorithm, plus the composition reduce + bcast: the built ones sorted
    // by predicted time, then those a lower bound ruled out.
    EXPECT_EQ(p.candidates.size(), algorithms::algorithms_for(spec.kind).size() + 1);
    bool ruled_out_seen = false;
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
      const Candidate& c = p.candidates[i];
      if (c.predicted) {
        EXPECT_FALSE(ruled_out_seen) << c.algorithm;
        if (i > 0) {
          EXPECT_LE(*p.candidates[i - 1].predicted, *c.predicted);
        }
      } else if (!c.why_not.empty()) {
        // Not applicable: the node-aware ones without a placement in the model.
        EXPECT_NE(c.algorithm.find("/node_"), std::string::npos)
            << c.algorithm << ": " << c.why_not;
      } else {
        ASSERT_TRUE(c.bound) << c.algorithm;
        ruled_out_seen = true;
        EXPECT_GT(*c.bound, p.predicted_time * (1 + kTieTolerance)) << c.algorithm;
      }
    }
  }
  // Latency-bound small messages and bandwidth-bound large ones choose differently.
  const CostModel model = unit_model(1000, 1, 0.5);
  EXPECT_NE(plan(make_spec(CollectiveKind::kAllreduce, 16, 1), model).algorithm,
            plan(make_spec(CollectiveKind::kAllreduce, 16, 100000), model).algorithm);
}

// The largest message of a schedule, in bytes.
std::size_t largest_message(const Schedule& schedule) {
  std::size_t largest = 0;
  for (const RankProgram& program : schedule.ranks) {
    for (const Op& op : program.ops) {
      if (const auto* send = std::get_if<Send>(&op.action)) {
        largest =
            std::max(largest, static_cast<std::size_t>(send->src.count) * schedule.spec.elem_bytes);
      }
    }
  }
  return largest;
}

TEST(Select, AHandshakeAboveTheEagerLimitMakesAutoSplitTheMessage) {
  // p = 2, allreduce of 4 KiB (Open MPI over shared memory on the project machine: eager up
  // to about 4 KiB, then a handshake of about 3 us). Without the handshake one exchange of
  // 4 KiB wins; with it, two exchanges of 2 KiB (reduce-scatter + allgather) are cheaper.
  auto spec = make_spec(CollectiveKind::kAllreduce, 2, 512);
  spec.elem_bytes = 8;
  CostModel model = reference_cluster_model();
  model.alpha = 0.3e-6;
  model.beta = 1e-10;
  model.gamma = 3e-11;
  model.copy = 3e-11;
  const CostModel no_handshake = model;
  const Plan eager = plan(spec, model);
  EXPECT_EQ(largest_message(eager.schedule), 4096u) << eager.algorithm;
  model.rendezvous_bytes = 2048;
  model.rendezvous_alpha = 3e-6;
  const Plan waits = plan(spec, model);
  EXPECT_LE(largest_message(waits.schedule), 2048u) << waits.algorithm;
  EXPECT_LT(waits.predicted_time, 2 * model.alpha + 1e-6) << waits.algorithm;
  // The one exchange is still a candidate, priced with its handshake.
  const std::string one = "allreduce/recursive_doubling";
  EXPECT_NEAR(plan(spec, model, one).predicted_time - plan(spec, no_handshake, one).predicted_time,
              model.rendezvous_alpha, 1e-12);
}

// Pruning in the exhaustive search (select.h, PlanOptions::prune): with and without it, auto
// makes the same choice, and every candidate it did build has the same prediction; a
// candidate it did not build is slower than the choice by more than the tie tolerance and at
// least its bound. Small counts at many ranks prune the rings; large counts, where a ring
// wins, prune nothing that could. (The default search, which prices candidates by their
// formulas, is compared with the exhaustive one in select_equivalence_test.cc.)
TEST(Select, PruningChangesNothingButWhatIsBuilt) {
  CostModel two_ports = unit_model(50, 1, 0.5);
  two_ports.ports = 2;
  CostModel send_gap = unit_model(1000, 1, 0.5);
  // Linear fan-outs become competitive (docs/design.md, "Send and receive gaps").
  send_gap.send_gap = 100;
  CostModel both_gaps = send_gap;
  both_gaps.receive_gap = 100;  // and linear fan-ins
  CostModel two_cores = both_gaps;
  // Ranks share two processors: the predictions stretch (docs/design.md, "Shared processors
  // and node memory").
  two_cores.cores = 2;
  const std::vector<CostModel> models{unit_model(1000, 1, 0.5),
                                      reference_cluster_model(),
                                      two_ports,
                                      send_gap,
                                      both_gaps,
                                      two_cores};
  int ruled_out = 0;
  for (const auto kind :
       {CollectiveKind::kAllreduce, CollectiveKind::kAllgather, CollectiveKind::kReduceScatterBlock,
        CollectiveKind::kBcast, CollectiveKind::kReduceScatter, CollectiveKind::kAllgatherv}) {
    // The sanitizer builds stop at p = 17 (tests/testing/registry_cases.h).
    for (const Rank p : {2, 7, testing::kSanitizedBuild ? 17 : 48}) {
      for (const Count per_rank : {Count{1}, Count{2048}}) {
        for (const auto& model : models) {
          CollectiveSpec spec;
          if (kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllgatherv) {
            std::vector<Count> counts;
            for (Rank r = 0; r < p; ++r) counts.push_back(per_rank * (r % 3));  // with zeros
            spec = make_spec_v(kind, p, counts);
          } else {
            spec = make_spec(
                kind, p,
                kind == CollectiveKind::kAllgather || kind == CollectiveKind::kReduceScatterBlock
                    ? per_rank
                    : per_rank * p);
          }
          const Plan pruned = plan(spec, model, "auto", {}, PlanOptions{.exhaustive = true});
          const Plan full = plan(spec, model, "auto", {}, PlanOptions{.prune = false});
          const std::string what = describe(spec);
          EXPECT_EQ(pruned.algorithm, full.algorithm) << what;
          EXPECT_EQ(pruned.params, full.params) << what;
          EXPECT_EQ(pruned.predicted_time, full.predicted_time) << what;
          EXPECT_EQ(pruned.schedule, full.schedule) << what;
          ASSERT_EQ(pruned.candidates.size(), full.candidates.size()) << what;
          for (const Candidate& c : full.candidates) EXPECT_FALSE(c.bound) << c.algorithm;
          for (const Candidate& c : pruned.candidates) {
            const auto same =
                std::find_if(full.candidates.begin(), full.candidates.end(),
                             [&](const Candidate& f) { return f.algorithm == c.algorithm; });
            ASSERT_NE(same, full.candidates.end()) << c.algorithm;
            if (c.predicted) {
              EXPECT_EQ(*c.predicted, *same->predicted) << c.algorithm << " " << what;
            } else if (c.bound) {
              ++ruled_out;
              ASSERT_TRUE(same->predicted) << c.algorithm;
              EXPECT_LE(*c.bound, *same->predicted * (1 + 1e-9)) << c.algorithm << " " << what;
              EXPECT_GT(*same->predicted, full.predicted_time * (1 + kTieTolerance))
                  << c.algorithm << " " << what;
            } else {
              EXPECT_EQ(c.why_not, same->why_not);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(ruled_out, 50);  // pruning happens
}

// The bytes a schedule's messages carry, counted here independently of select.cc.
std::uint64_t sent_bytes(const Schedule& s) {
  std::uint64_t bytes = 0;
  for (const auto& program : s.ranks) {
    for (const auto& op : program.ops) {
      if (std::holds_alternative<Send>(op.action)) {
        bytes +=
            static_cast<std::uint64_t>(std::get<Send>(op.action).src.count) * s.spec.elem_bytes;
      }
    }
  }
  return bytes;
}

// Candidates are evaluated on two threads; the choice must not depend on which thread
// finished first. With free messages every applicable algorithm predicts 0, a tie among all:
// the one that moves the fewest bytes must win, and among those the earlier registry entry;
// the candidate list keeps registry order among equal times; planning twice gives the same.
TEST(Select, AutoIsDeterministicAndBreaksTiesByBytesThenRegistryOrder) {
  const CostModel zero_cost = unit_model(0, 0, 0);
  for (const auto kind :
       {CollectiveKind::kAllreduce, CollectiveKind::kBcast, CollectiveKind::kAllgather,
        CollectiveKind::kReduceScatterBlock, CollectiveKind::kGather}) {
    const auto spec = make_spec(kind, 8, 16);
    const Plan p = plan(spec, zero_cost);
    std::vector<std::string> registry_order;
    std::string expected;
    std::uint64_t fewest = 0;
    for (const auto* info : algorithms::algorithms_for(kind)) {
      const auto params = algorithms::resolve_params(*info, {});
      // (The node-aware ones are no candidates without a placement in the model.)
      if (info->why_not(spec, params) || algorithms::patterns::is_node_aware(*info)) continue;
      registry_order.emplace_back(info->name);
      const std::uint64_t bytes = sent_bytes(algorithms::build(*info, spec, params, zero_cost));
      if (expected.empty() || bytes < fewest) {
        expected = info->name;
        fewest = bytes;
      }
    }
    ASSERT_FALSE(registry_order.empty());
    EXPECT_EQ(p.algorithm, expected) << collective_name(kind);
    EXPECT_EQ(sent_bytes(p.schedule), fewest) << collective_name(kind);
    std::vector<std::string> listed;
    for (const auto& c : p.candidates) {
      if (c.predicted && c.algorithm.rfind("compose(", 0) != 0) listed.push_back(c.algorithm);
    }
    EXPECT_EQ(listed, registry_order) << collective_name(kind);
  }
  for (const Rank p : {5, 16, 33}) {
    const auto spec = make_spec(CollectiveKind::kAllreduce, p, 1000);
    const CostModel model = unit_model(100, 1, 0.5);
    const Plan a = plan(spec, model);
    for (int again = 0; again < 3; ++again) {
      const Plan b = plan(spec, model);
      EXPECT_EQ(a.algorithm, b.algorithm);
      EXPECT_EQ(a.schedule.params, b.schedule.params);
      EXPECT_EQ(a.predicted_time, b.predicted_time);
      ASSERT_EQ(a.candidates.size(), b.candidates.size());
      for (std::size_t i = 0; i < a.candidates.size(); ++i) {
        EXPECT_EQ(a.candidates[i].algorithm, b.candidates[i].algorithm);
      }
    }
  }
}

// A near-tie goes to the fewer bytes; a real difference does not. gatherv of 4 equal blocks
// of m elements, alpha = a, beta = 1 per element: linear 3(a + m), binomial (a + m) + (a + 2m)
// = 2a + 3m, moving 3m and 4m elements.
TEST(Select, NearTiesGoToTheFewestBytesButNotBeyondTheTolerance) {
  {  // a = 1, m = 1000: binomial 3002, linear 3003 (0.03% apart): linear
    const Plan p = plan(make_spec_v(CollectiveKind::kGatherv, 4, {1000, 1000, 1000, 1000}, 0),
                        unit_model(1, 1));
    EXPECT_EQ(p.algorithm, "gatherv/linear") << p.explain();
    EXPECT_EQ(p.predicted_time, 3003);
    EXPECT_NE(p.explain().find("it moves the fewest bytes"), std::string::npos) << p.explain();
  }
  {  // a = 1000, m = 1: binomial 2003, linear 3003: the binomial tree
    const Plan p =
        plan(make_spec_v(CollectiveKind::kGatherv, 4, {1, 1, 1, 1}, 0), unit_model(1000, 1));
    EXPECT_NE(p.algorithm, "gatherv/linear") << p.explain();
    EXPECT_EQ(p.predicted_time, 2003);
    EXPECT_EQ(p.explain().find("it moves the fewest bytes"), std::string::npos) << p.explain();
  }
}

TEST(Select, InapplicableCandidatesCarryTheirReason) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 8, 1000);
  spec.commutative = false;
  const Plan p = plan(spec, unit_model(1, 1));
  EXPECT_NE(p.algorithm, "allreduce/ring");
  bool found = false;
  for (const auto& c : p.candidates) {
    if (c.algorithm == "allreduce/ring") {
      found = true;
      EXPECT_FALSE(c.predicted.has_value());
      EXPECT_NE(c.why_not.find("commutative"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NE(p.explain().find("allreduce/ring"), std::string::npos);
}

TEST(Select, ExplicitChoiceAndErrors) {
  const auto spec = make_spec(CollectiveKind::kBcast, 8, 100);
  const Plan p = plan(spec, unit_model(10, 1), "bcast/linear");
  EXPECT_EQ(p.algorithm, "bcast/linear");
  EXPECT_EQ(p.predicted_time, 7 * (10 + 100));
  EXPECT_EQ(plan(spec, unit_model(10, 1), "linear").algorithm, "bcast/linear");
  EXPECT_THROW(plan(spec, unit_model(10, 1), "bcast/carrier_pigeon"), Error);
  EXPECT_THROW(plan(spec, unit_model(10, 1), "auto", algorithms::Params::parse("radix=2")), Error);
  CostModel bad = unit_model(10, 1);
  bad.alpha = -1;
  EXPECT_THROW(plan(spec, bad), Error);
}

// The decision cache holds at most kCachedDecisionCounts counts in all (the newest entry
// whatever its size), so alltoallv calls whose counts change do not pile up p^2 copies.
TEST(DecisionCache, IsBoundedByTheCountsItHolds) {
  clear_decision_cache();
  const auto spec_of = [](Count fill, std::size_t counts) {
    CollectiveSpec spec;  // the cache takes specs as they are: only their counts matter here
    spec.kind = CollectiveKind::kAlltoallv;
    spec.nranks = 2;
    spec.counts.assign(counts, fill);
    return spec;
  };
  const std::size_t half = search::kCachedDecisionCounts / 2 + 1;
  const CostModel model;
  const PlanOptions options;
  Decision d;
  d.algorithm = "alltoallv/linear";
  const CollectiveSpec small = make_spec(CollectiveKind::kBcast, 8, 1);
  search::cache_decision(small, model, options, d);
  search::cache_decision(spec_of(1, half), model, options, d);
  EXPECT_TRUE(search::cached_decision(spec_of(1, half), model, options).has_value());
  search::cache_decision(spec_of(2, half), model, options, d);  // together over the bound
  EXPECT_FALSE(search::cached_decision(spec_of(1, half), model, options).has_value());
  EXPECT_TRUE(search::cached_decision(spec_of(2, half), model, options).has_value());
  EXPECT_FALSE(search::cached_decision(small, model, options).has_value());  // older still
  // An entry larger than the bound stays while it is the newest, and goes with the next.
  search::cache_decision(spec_of(3, 2 * half), model, options, d);
  EXPECT_TRUE(search::cached_decision(spec_of(3, 2 * half), model, options).has_value());
  EXPECT_FALSE(search::cached_decision(spec_of(2, half), model, options).has_value());
  search::cache_decision(small, model, options, d);
  EXPECT_FALSE(search::cached_decision(spec_of(3, 2 * half), model, options).has_value());
  EXPECT_TRUE(search::cached_decision(small, model, options).has_value());
  clear_decision_cache();
}

// docs/errors.md: each planning error, with its code and message.
TEST(Select, ErrorsNameTheProblem) {
  auto expect_invalid = [](auto&& call, const std::string& fragment) {
    try {
      call();
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const CostModel model = unit_model(10, 1);
  const auto spec = make_spec(CollectiveKind::kBcast, 8, 100);
  expect_invalid([&] { plan(spec, model, "auto", algorithms::Params::parse("radix=2")); },
                 "algorithm parameters (radix=2) need an explicit algorithm, not auto");
  expect_invalid([&] { plan_best_root(make_spec(CollectiveKind::kAllreduce, 4, 4), model); },
                 "allreduce has no root to choose");
  expect_invalid([&] { plan_best_root(spec, model, "auto", {}, 4); },
                 "choosing the best root plans every root; 8 ranks exceed the limit of 4");
  expect_invalid([&] { plan(spec, model, "auto", {}, PlanOptions{.workers = 0}); },
                 "PlanOptions::workers is 0: planning needs at least 1");
  expect_invalid([&] { decide(spec, model, "auto", {}, PlanOptions{.workers = 0}); },
                 "PlanOptions::workers is 0: planning needs at least 1");
}

// parallel_for runs every index once on at most `workers` threads (the caller's included):
// with 1 every index runs on the calling thread; with more, never more threads than asked.
TEST(Select, ParallelForTakesAtMostItsWorkers) {
  for (const unsigned workers : {1u, 2u, 3u}) {
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<int> runs(24, 0);
    search::parallel_for(runs.size(), workers, [&](std::size_t i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // room for every worker
      const std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
      ++runs[i];
    });
    EXPECT_EQ(runs, std::vector<int>(24, 1)) << workers;
    EXPECT_LE(threads.size(), workers) << workers;
    if (workers == 1) {
      EXPECT_EQ(*threads.begin(), std::this_thread::get_id());
    }
  }
}

// The planning threads change how fast auto decides, not what: 1, 2 and 7 workers give the
// same plan, candidate for candidate, by the default search (under a node model whose
// switches no formula prices, so candidates are simulated) and the exhaustive one. The
// options compare equal whatever the workers (decisions cached with 2 serve 7).
TEST(Select, TheWorkersChangeHowFastNotWhat) {
  EXPECT_EQ(PlanOptions{.workers = 1}, PlanOptions{.workers = 7});
  const CostModel node = thread_node_model(4);
  for (const bool exhaustive : {false, true}) {
    for (const auto& spec :
         {make_spec(CollectiveKind::kAllreduce, 12, 4096),
          make_spec(CollectiveKind::kBcast, 9, 100), make_spec(CollectiveKind::kAlltoall, 6, 512),
          make_spec_v(CollectiveKind::kGatherv, 5, {1, 4000, 2, 0, 70}, 1)}) {
      clear_decision_cache();
      const Plan one = plan(spec, node, "auto", {}, {.exhaustive = exhaustive, .workers = 1});
      for (const unsigned workers : {2u, 7u}) {
        clear_decision_cache();
        const Plan many =
            plan(spec, node, "auto", {}, {.exhaustive = exhaustive, .workers = workers});
        const std::string what = std::string(collective_name(spec.kind)) + " with " +
                                 std::to_string(workers) + " workers";
        EXPECT_EQ(many.algorithm, one.algorithm) << what;
        EXPECT_EQ(many.schedule.params, one.schedule.params) << what;
        EXPECT_EQ(many.predicted_time, one.predicted_time) << what;
        ASSERT_EQ(many.candidates.size(), one.candidates.size()) << what;
        for (std::size_t i = 0; i < one.candidates.size(); ++i) {
          EXPECT_EQ(many.candidates[i].algorithm, one.candidates[i].algorithm) << what;
          EXPECT_EQ(many.candidates[i].predicted, one.candidates[i].predicted) << what;
        }
      }
    }
  }
}

TEST(Select, BestRootIsTheMinimumOverEveryRoot) {
  const CostModel model = unit_model(100, 1);
  const auto spec = make_spec_v(CollectiveKind::kGatherv, 9, {1, 500, 2, 3, 900, 0, 7, 1, 40});
  const Plan best = plan_best_root(spec, model, "gatherv/binomial");
  for (Rank root = 0; root < spec.nranks; ++root) {
    CollectiveSpec other = spec;
    other.root = root;
    EXPECT_LE(best.predicted_time, plan(other, model, "gatherv/binomial").predicted_time) << root;
  }
  EXPECT_THROW(plan_best_root(make_spec(CollectiveKind::kAllreduce, 4, 4), model), Error);
}

// Under a placement no flat algorithm's formula describes the model: the shared network's
// model prices them (every pair at the inter-node costs, times the turns the largest node's
// ranks take at its NICs).
TEST(Select, TheSharedNetworkModelTakesTheLargestNodesTurnsAtItsNics) {
  CostModel m;
  m.alpha = 1;
  m.beta = 0.5;
  m.inter_alpha = 2;
  m.inter_beta = 3;
  m.nic_ports = 2;
  m.placement = Placement{{0, 0, 0, 0, 0, 1, 1, 2}};  // nodes of 5, 2 and 1 ranks
  const CostModel shared = algorithms::patterns::shared_network_model(m);
  EXPECT_FALSE(shared.placement.has_value());
  EXPECT_FALSE(shared.inter_alpha.has_value());
  EXPECT_EQ(shared.alpha, 2 * 3);  // ceil(5 / 2) = 3 turns
  EXPECT_EQ(shared.beta, 3 * 3);
  m.inter_alpha.reset();  // unset: the intra-node costs
  EXPECT_EQ(algorithms::patterns::shared_network_model(m).alpha, 1 * 3);
}

// A flat candidate too large to simulate at this p is estimated at the shared network's
// costs (a ranking estimate, said so) instead of left out; one small enough is simulated.
TEST(Select, FlatCandidatesUnderAPlacementAreEstimatedAtTheSharedNetworksCosts) {
  CostModel m;
  m.per_byte = true;
  m.alpha = 5e-7;
  m.beta = 2e-11;
  m.inter_alpha = 2e-6;
  m.inter_beta = 1e-10;
  m.placement = block_placement(64, 64);
  const auto spec = make_spec(CollectiveKind::kAllgather, 4096, 128);
  search::Entry ring;
  ring.info = &algorithms::lookup("ring", CollectiveKind::kAllgather);
  search::prepare_entry(ring, spec, m, /*price=*/true);
  ASSERT_TRUE(ring.options[0].estimate.has_value());
  EXPECT_TRUE(ring.options[0].estimate->at_inter_costs);
  EXPECT_FALSE(ring.options[0].estimate->exact);
  EXPECT_TRUE(ring.not_evaluated.empty()) << ring.not_evaluated;
  const auto formula = ring.info->estimate(spec, ring.options[0].params,
                                           algorithms::patterns::shared_network_model(m));
  ASSERT_TRUE(formula.has_value());
  EXPECT_EQ(ring.options[0].estimate->time, formula->time);
  EXPECT_GT(ring.options[0].work, search::kMaxSimulatedWork);  // too large to simulate

  m.placement = block_placement(4, 4);
  const Plan small = plan(make_spec(CollectiveKind::kAllgather, 16, 128), m);
  bool seen = false;
  for (const auto& c : small.candidates) {
    if (c.algorithm != "allgather/ring") continue;
    seen = true;
    EXPECT_EQ(c.how, Evaluation::kSimulated);
  }
  EXPECT_TRUE(seen);
}

// A bcast candidate for rank_unpriced: its defaults, their work and that of its variants too.
search::Entry unpriced_bcast_entry(const char* name, double work, double with_variants) {
  search::Entry e;
  e.info = &algorithms::lookup(name, CollectiveKind::kBcast);
  e.options.resize(1);
  e.options[0].params = algorithms::resolve_params(*e.info, {});
  e.options[0].work = work;
  e.simulation_work = with_variants;
  return e;
}

// Candidates no formula prices, over the unpriced budget: those ranked first are simulated
// while they fit; one is simulated whatever its cost, but with its defaults only when its
// variants would not fit; a candidate left out keeps its estimate if it has one.
TEST(Select, TheUnpricedBudgetSimulatesTheFirstRankedsDefaultsWhenItAloneExceedsIt) {
  const auto spec = make_spec(CollectiveKind::kBcast, 8, 1000);
  search::Search s{spec, unit_model(1, 1), {}, {}, std::nullopt, 0, nullptr};
  auto entry = [](const char* name, Time ranking, double work, double with_variants) {
    search::Entry e = unpriced_bcast_entry(name, work, with_variants);
    e.ranking = ranking;
    return e;
  };
  const double budget = search::kUnpricedWork;
  s.entries.push_back(entry("binomial", 3, budget / 4, budget / 4));
  s.entries.push_back(entry("pipelined_chain", 1, budget / 2, budget * 1.5));  // ranked first
  s.entries.push_back(entry("linear", 2, budget / 4, budget / 4));
  s.entries.push_back(entry("knomial", 4, budget / 2, budget * 2));
  s.entries[3].options[0].estimate = algorithms::Estimate{};  // a from-above estimate
  EXPECT_EQ(search::rank_unpriced(s, {0, 1, 2, 3}), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(s.entries[1].defaults_only);
  EXPECT_FALSE(s.entries[0].defaults_only);
  EXPECT_FALSE(s.entries[2].defaults_only);
  EXPECT_TRUE(s.entries[3].not_evaluated.empty()) << s.entries[3].not_evaluated;

  // Simulated: pipelined_chain's defaults only, binomial and linear (no parameters) whole.
  search::simulate_entries(s, {0, 1, 2}, [] { return std::nullopt; });
  EXPECT_EQ(s.entries[1].options.size(), 1u);
  EXPECT_TRUE(s.entries[1].options[0].simulated.has_value());
  // Without the flag the same entry gets its segment variants (halved and doubled).
  s.entries[1].defaults_only = false;
  search::simulate_entries(s, {1}, [] { return std::nullopt; });
  EXPECT_EQ(s.entries[1].options.size(), 3u);
}

// A plan for one rank (an MPI process) simulates no whole schedule beyond kOneRankBuildWork
// while some candidate has an estimate, even when every candidate fits the unpriced budget:
// the large one keeps its estimate at the shared network's costs (or, without one, is not
// evaluated). A plan of the whole schedule simulates them all. (At 65,536 ranks under
// 1024x64 a bcast's one-rank plan spent 6 of its 10 s simulating bcast/hybrid's 1.9 M ops,
// within the budget, to find it 27x slower than the node-aware choice.)
TEST(Select, APlanForOneRankSimulatesNoLargeScheduleWithinTheUnpricedBudget) {
  const auto spec = make_spec(CollectiveKind::kBcast, 8, 1000);
  const double large = kOneRankBuildWork * 1.5;
  ASSERT_LT(large + 2.0 * 1000, search::kUnpricedWork);  // all of them fit the budget
  // binomial, hybrid (1.5 x 2^20 ops; with or without an estimate from above), linear.
  auto search_for = [&](std::optional<Rank> only_rank, bool estimated) {
    PlanOptions options;
    options.only_rank = only_rank;
    search::Search s{spec, unit_model(1, 1), options, {}, std::nullopt, 0, nullptr};
    for (const auto& [name, work] :
         {std::pair{"binomial", 1000.0}, std::pair{"hybrid", large}, std::pair{"linear", 1000.0}}) {
      s.entries.push_back(unpriced_bcast_entry(name, work, work));
    }
    // linear's exact formula: a choice can rest on it.
    s.entries[2].options[0].estimate = algorithms::Estimate{};
    s.entries[2].options[0].estimate->exact = true;
    if (estimated) s.entries[1].options[0].estimate = algorithms::Estimate{};
    return s;
  };
  const std::vector<std::size_t> all{0, 1, 2};
  for (const bool estimated : {true, false}) {
    SCOPED_TRACE(estimated ? "hybrid estimated from above" : "hybrid without an estimate");
    search::Search one = search_for(Rank{0}, estimated);
    EXPECT_EQ(search::rank_unpriced(one, all), (std::vector<std::size_t>{0, 2}));
    if (estimated) {
      EXPECT_TRUE(one.entries[1].not_evaluated.empty()) << one.entries[1].not_evaluated;
    } else {
      EXPECT_NE(one.entries[1].not_evaluated.find("a plan for one rank"), std::string::npos)
          << one.entries[1].not_evaluated;
    }
    search::Search whole = search_for(std::nullopt, estimated);
    EXPECT_EQ(search::rank_unpriced(whole, all), all);
    EXPECT_TRUE(whole.entries[1].not_evaluated.empty());
  }
}

// The search's kept schedule: the fastest offered so far, taken only by its own key, and
// taken once.
TEST(Select, TheKeptScheduleIsTheFastestOfferedAndTakenOnlyByItsKey) {
  const auto spec = make_spec(CollectiveKind::kBcast, 6, 100);
  const CostModel model = unit_model(1, 1);
  auto built = [&](const char* name) {
    return algorithms::build(algorithms::lookup(name, CollectiveKind::kBcast), spec, {}, model);
  };
  const algorithms::Params none;
  const std::string binomial = search::kept_key("bcast/binomial", none);
  const std::string linear = search::kept_key("bcast/linear", none);
  search::KeptSchedule kept;
  kept.offer(binomial, 2, built("binomial"));
  kept.offer(linear, 3, built("linear"));  // slower: not kept
  kept.offer(linear, 2, built("linear"));  // a tie: not kept either
  EXPECT_FALSE(kept.take(linear).has_value());
  const auto taken = kept.take(binomial);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->algorithm, "bcast/binomial");
  EXPECT_FALSE(kept.take(binomial).has_value());  // moved out
  kept.offer(linear, 5, built("linear"));         // after a take, any offer is the fastest
  ASSERT_TRUE(kept.take(linear).has_value());
}

// The lower bound's soundness over the registry: tests/plan/lower_bound_test.cc.

}  // namespace
}  // namespace optcoll
