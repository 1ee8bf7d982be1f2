// SPDX-License-Identifier: Apache-2.0
// File: gatherv/scatterv without a count exchange (optcoll/plan/counts_free.h): the claim
// "linear is no slower than any algorithm after the exchange, for every count vector",
// checked against the simulator over rank counts, roots, counts (zeros, spikes) and models;
// the threshold it gives where it can be derived by hand; which algorithms run from each
// rank's own counts (gatherv, scatterv, alltoallv: every rank's program from its own spec
// against the whole spec's); and the argument errors.
#include "optcoll/plan/counts_free.h"

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/model/placement.h"
#include "optcoll/plan/select.h"
#include "optcoll/schedule/builder.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

CostModel model_of(Time alpha, Time beta, Time copy, bool per_byte) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = 0;
  m.copy = copy;
  m.per_byte = per_byte;
  return m;
}

// Counts with zeros, a spike and small blocks, from `seed`; seed 0: one element each (where
// trees gain most on linear).
std::vector<Count> counts_for(Rank p, unsigned seed) {
  std::vector<Count> counts(static_cast<std::size_t>(p), 1);
  if (seed == 0) return counts;
  std::mt19937 random(seed);
  for (Count& c : counts) {
    const unsigned pick = random() % 4;
    c = pick == 0   ? 0
        : pick == 1 ? static_cast<Count>(random() % 3)
                    : static_cast<Count>(random() % 200);
  }
  counts[random() % counts.size()] = 5000;  // a spike
  return counts;
}

TEST(CountsFree, LinearIsNoSlowerThanAnyAlgorithmAfterTheExchange) {
  CostModel calibrated = model_of(2.15e-6, 7.3e-11, 1.4e-10, /*per_byte=*/true);
  calibrated.send_mode = SendMode::kShared;
  calibrated.send_mode_min_bytes = 16384;
  CostModel calibrated_gap = calibrated;
  calibrated_gap.send_gap = 1.5e-7;
  CostModel latency_gap = model_of(1, 0, 0, false);
  latency_gap.send_gap = 0.1;
  CostModel unit_gap = model_of(1, 1, 0, false);
  unit_gap.send_gap = 0.25;
  CostModel wide_gap = model_of(1, 0.01, 0.5, false);
  wide_gap.send_gap = 2;                       // longer than alpha: no effect
  CostModel calibrated_gaps = calibrated_gap;  // as `optcoll calibrate` writes it
  calibrated_gaps.receive_gap = 1.5e-7;
  CostModel latency_receive_gap = model_of(1, 0, 0, false);
  latency_receive_gap.receive_gap = 0.1;
  CostModel unit_gaps = unit_gap;
  unit_gaps.receive_gap = 0.25;
  CostModel wide_receive_gap = model_of(1, 0.01, 0.5, false);
  wide_receive_gap.receive_gap = 2;
  const std::vector<std::pair<std::string, CostModel>> models = {
      {"reference cluster", reference_cluster_model()},
      {"calibrated node", calibrated},
      {"unit", model_of(1, 1, 0, false)},
      {"latency only", model_of(1, 0, 0, false)},
      {"expensive copy", model_of(1, 0.01, 0.5, false)},
      {"calibrated node, send gap", calibrated_gap},
      {"latency only, send gap 0.1", latency_gap},
      {"unit, send gap 0.25", unit_gap},
      {"expensive copy, send gap 2", wide_gap},
      {"calibrated node, both gaps", calibrated_gaps},
      {"latency only, receive gap 0.1", latency_receive_gap},
      {"unit, both gaps 0.25", unit_gaps},
      {"expensive copy, receive gap 2", wide_receive_gap},
  };
  int claimed = 0;
  for (const auto& [name, model] : models) {
    for (const CollectiveKind kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
      for (Rank p = 1; p <= 16; ++p) {
        if (!linear_wins_without_exchange(kind, p, model)) continue;
        const Time exchange = count_exchange_time(kind, p, model);
        for (unsigned seed = 0; seed <= 2; ++seed) {
          for (const Rank root : {Rank{0}, p - 1}) {
            CollectiveSpec spec = make_spec_v(kind, p, counts_for(p, seed), root);
            spec.elem_bytes = 8;
            const Time linear = plan(spec, model, "linear").predicted_time;
            const Plan best = plan(spec, model, "auto", {}, PlanOptions{.prune = false});
            ++claimed;
            EXPECT_LE(linear, best.predicted_time + exchange)
                << name << ": " << describe(spec) << ": linear " << linear << ", " << best.algorithm
                << " " << best.predicted_time << " + exchange " << exchange;
          }
        }
      }
    }
  }
  EXPECT_GT(claimed, 100);  // the claim was made, and checked, often
}

TEST(CountsFree, ThresholdUnderPureLatencyIsFiveRanks) {
  // alpha = 1, nothing else: an allgather or bcast takes ceil(log2 p) rounds and linear
  // loses at most p - 2 of them, so linear wins exactly while p - 2 <= ceil(log2 p): p <= 5.
  const CostModel latency = model_of(1, 0, 0, false);
  for (const CollectiveKind kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
    for (Rank p = 1; p <= 16; ++p) {
      EXPECT_EQ(linear_wins_without_exchange(kind, p, latency), p <= 5)
          << collective_name(kind) << " p = " << p;
    }
    EXPECT_EQ(count_exchange_time(kind, 16, latency), 4);  // log2 16 rounds
  }
}

// alpha = 1 and a gap of 0.1 at one end: the linear root whose messages leave (scatterv,
// send gap) or arrive (gatherv, receive gap) at that end loses at most (p - 2) * 0.1, under
// the exchange's one alpha at least, for every p <= 11; the other kind's messages still take
// alpha each at its root, so its threshold stays p <= 5. A gap of alpha is as none.
void expect_gap_widens_only(CollectiveKind widened, CollectiveKind unchanged,
                            std::optional<Time> CostModel::*gap) {
  CostModel model = model_of(1, 0, 0, false);
  model.*gap = 0.1;
  for (Rank p = 1; p <= 16; ++p) {
    EXPECT_EQ(linear_wins_without_exchange(unchanged, p, model), p <= 5) << "p = " << p;
    if (p <= 11) {
      EXPECT_TRUE(linear_wins_without_exchange(widened, p, model)) << "p = " << p;
    }
  }
  model.*gap = 1;
  for (Rank p = 1; p <= 16; ++p) {
    EXPECT_EQ(linear_wins_without_exchange(widened, p, model), p <= 5) << "p = " << p;
  }
}

TEST(CountsFree, ASendGapWidensTheScattervThresholdOnly) {
  expect_gap_widens_only(CollectiveKind::kScatterv, CollectiveKind::kGatherv, &CostModel::send_gap);
}

TEST(CountsFree, AReceiveGapWidensTheGathervThresholdOnly) {
  expect_gap_widens_only(CollectiveKind::kGatherv, CollectiveKind::kScatterv,
                         &CostModel::receive_gap);
}

TEST(CountsFree, OnlyOnePortedHomogeneousModelsWithoutOverlap) {
  CostModel two_ports = model_of(1, 0, 0, false);
  two_ports.ports = 2;
  CostModel overlap = model_of(1, 0, 0, false);
  overlap.overlap = true;
  for (const CostModel& model : {two_ports, overlap}) {
    EXPECT_TRUE(linear_wins_without_exchange(CollectiveKind::kGatherv, 2, model));  // one message
    EXPECT_FALSE(linear_wins_without_exchange(CollectiveKind::kGatherv, 3, model));
    EXPECT_FALSE(linear_wins_without_exchange(CollectiveKind::kScatterv, 4, model));
  }
  EXPECT_FALSE(linear_wins_without_exchange(CollectiveKind::kScatterv, kMaxCountsFreeRanks + 1,
                                            model_of(1, 1, 0, false)));
}

// What rank `rank` knows of `whole`'s counts under MPI semantics, as the spec it runs without
// the exchange: gatherv/scatterv its own count (the root all), alltoallv its row and column.
CollectiveSpec own_counts_spec(const CollectiveSpec& whole, Rank rank) {
  CollectiveSpec spec;
  if (whole.kind == CollectiveKind::kAlltoallv) {
    const auto p = static_cast<std::size_t>(whole.nranks);
    const auto me = static_cast<std::size_t>(rank);
    std::vector<Count> row(whole.counts.begin() + static_cast<std::ptrdiff_t>(me * p),
                           whole.counts.begin() + static_cast<std::ptrdiff_t>((me + 1) * p));
    std::vector<Count> column(p);
    for (std::size_t from = 0; from < p; ++from) column[from] = whole.counts[from * p + me];
    assign_alltoallv_counts_free_spec(spec, rank, row, column);
  } else {
    spec = counts_free_spec(whole.kind, whole.nranks, whole.root, rank, whole.counts);
  }
  spec.elem_bytes = whole.elem_bytes;
  spec.commutative = whole.commutative;
  return spec;
}

// Whether rank r's program built from `own` is the one built from `whole` (op for op:
// actions with their local slices, peers, seq and dependencies).
// The node-aware algorithms are built on three nodes (from p = 4 on; one node below).
bool same_program(const algorithms::AlgorithmInfo& algorithm, const CollectiveSpec& whole,
                  const CollectiveSpec& own, Rank r) {
  CostModel model;
  if (algorithm.name.ends_with("/node_aware")) {
    model.placement = whole.nranks >= 4 ? even_block_placement(whole.nranks, 3)
                                        : block_placement(1, whole.nranks);
  }
  const OneRankBuild only(r);
  const Schedule from_whole = algorithms::build(algorithm, whole, {}, model);
  const Schedule from_own = algorithms::build(algorithm, own, {}, model);
  const auto i = static_cast<std::size_t>(r);
  return from_whole.ranks[i].scratch_count == from_own.ranks[i].scratch_count &&
         from_whole.ranks[i].ops == from_own.ranks[i].ops;
}

// runs_from_own_counts names exactly the algorithms whose every rank's program, built from
// that rank's own counts, is the whole spec's: over the registry grid (ranks 1-64, roots,
// count patterns with zeros) for those it names, and in at least one case for every other
// algorithm of these kinds (the check can fail).
TEST(CountsFree, ExactlyTheNamedAlgorithmsRunFromEachRanksOwnCounts) {
  std::map<std::string, int, std::less<>> differing;  // by algorithm: cases whose programs differ
  int compared = 0;
  for (const auto& c : testing::registry_cases(testing::full_rank_grid())) {
    const CollectiveKind kind = c.spec.kind;
    if (kind != CollectiveKind::kGatherv && kind != CollectiveKind::kScatterv &&
        kind != CollectiveKind::kAlltoallv) {
      continue;
    }
    const std::string name(c.algorithm->name);
    differing.try_emplace(name, 0);
    // The first two ranks, the middle and the last (roots are 0, the middle and the last).
    std::set<Rank> ranks{0, c.spec.nranks / 2, c.spec.nranks - 1};
    if (c.spec.nranks > 1) ranks.insert(1);
    for (const Rank r : ranks) {
      const bool same = same_program(*c.algorithm, c.spec, own_counts_spec(c.spec, r), r);
      ++compared;
      if (runs_from_own_counts(name)) {
        EXPECT_TRUE(same) << c.name << ", rank " << r;
      } else if (!same) {
        ++differing[name];
      }
    }
  }
  EXPECT_GT(compared, 0);
  for (const auto& [name, cases] : differing) {
    if (!runs_from_own_counts(name)) {
      EXPECT_GT(cases, 0) << name << " runs from own counts";
    }
  }
  for (const char* named : {"gatherv/linear", "gatherv/lpt_star", "scatterv/linear",
                            "scatterv/lpt_star", "alltoallv/linear", "alltoallv/pairwise"}) {
    EXPECT_TRUE(differing.contains(named)) << named << " is not in the registry grid";
  }
  RecordProperty("programs_compared", compared);
}

// Every alltoallv algorithm of the registry builds from one rank's row and column
// (counts_of) the schedule it builds from the whole matrix with zeros elsewhere, every rank's
// program op for op, and estimates the same time: the algorithms read the counts through
// Layout, alltoallv_pair and for_each_alltoallv_pair, which take both forms. So do the lower
// bounds.
TEST(CountsFree, AlltoallvOfOneRanksCountsBuildsAsTheMatrixWithZerosElsewhere) {
  const CostModel model = reference_cluster_model();
  int compared = 0;
  for (const Rank p : {1, 2, 3, 5, 8, 13}) {
    const auto n = static_cast<std::size_t>(p);
    for (const Rank owner : std::set<Rank>{0, p / 2, p - 1}) {
      const std::vector<Count> row = counts_for(p, 3 + static_cast<unsigned>(owner));
      std::vector<Count> column = counts_for(p, 11 + static_cast<unsigned>(p));
      column[static_cast<std::size_t>(owner)] = row[static_cast<std::size_t>(owner)];
      std::vector<Count> matrix(n * n, 0);
      for (std::size_t i = 0; i < n; ++i) {
        matrix[static_cast<std::size_t>(owner) * n + i] = row[i];
        matrix[i * n + static_cast<std::size_t>(owner)] = column[i];
      }
      const CollectiveSpec whole = make_spec_v(CollectiveKind::kAlltoallv, p, matrix);
      CollectiveSpec own;
      assign_alltoallv_counts_free_spec(own, owner, row, column);
      CostModel placed = model;  // the lower bounds, flat and with nodes (NIC traffic)
      if (p >= 4) placed.placement = even_block_placement(p, 3);
      for (const CostModel& m : {model, placed}) {
        EXPECT_EQ(lower_bound(Layout(whole), m), lower_bound(Layout(own), m))
            << "p " << p << " owner " << owner;
      }
      for (const algorithms::AlgorithmInfo* algorithm :
           algorithms::algorithms_for(CollectiveKind::kAlltoallv)) {
        CostModel at = model;
        if (algorithm->name.ends_with("/node_aware") && p >= 4) {
          at.placement = even_block_placement(p, 3);
        }
        const std::string what = std::string(algorithm->name) + " p " + std::to_string(p) +
                                 " owner " + std::to_string(owner);
        Schedule from_whole;
        try {
          from_whole = algorithms::build(*algorithm, whole, {}, at);
        } catch (const Error&) {  // a restriction (a torus's shape, ...): the same for both
          EXPECT_THROW(algorithms::build(*algorithm, own, {}, at), Error) << what;
          continue;
        }
        const Schedule from_own = algorithms::build(*algorithm, own, {}, at);
        ASSERT_EQ(from_whole.ranks.size(), from_own.ranks.size()) << what;
        for (std::size_t r = 0; r < n; ++r) {
          EXPECT_EQ(from_whole.ranks[r].scratch_count, from_own.ranks[r].scratch_count) << what;
          EXPECT_EQ(from_whole.ranks[r].ops, from_own.ranks[r].ops) << what << " rank " << r;
        }
        if (algorithm->estimate != nullptr) {
          const algorithms::Params params = algorithms::resolve_params(*algorithm, {});
          const auto a = algorithm->estimate(whole, params, at);
          const auto b = algorithm->estimate(own, params, at);
          ASSERT_EQ(a.has_value(), b.has_value()) << what;
          if (a) {
            EXPECT_EQ(a->time, b->time) << what;
            EXPECT_EQ(a->bytes, b->bytes) << what;
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 40);
}

TEST(CountsFree, AlltoallvSpecHoldsTheRowAndTheColumn) {
  CollectiveSpec spec;
  const std::vector<Count> row = {1, 2, 3};
  const std::vector<Count> column = {4, 2, 0};
  assign_alltoallv_counts_free_spec(spec, 1, row, column);
  EXPECT_EQ(spec.kind, CollectiveKind::kAlltoallv);
  EXPECT_EQ(spec.nranks, 3);
  EXPECT_EQ(spec.counts_of, 1);
  EXPECT_EQ(spec.counts, (std::vector<Count>{1, 2, 3, 4, 2, 0}));  // 2p, not p^2
  const std::vector<Count> matrix = {0, 4, 0,                      //
                                     1, 2, 3,                      //
                                     0, 0, 0};
  for (Rank from = 0; from < 3; ++from) {
    for (Rank to = 0; to < 3; ++to) {
      EXPECT_EQ(alltoallv_pair(spec, from, to), matrix[static_cast<std::size_t>(from * 3 + to)]);
    }
  }
  assign_alltoallv_counts_free_spec(spec, 0, std::vector<Count>{7}, std::vector<Count>{7});
  EXPECT_EQ(spec.counts, (std::vector<Count>{7, 7}));  // the storage reused, the spec replaced
  const std::vector<Count> other_self = {4, 5, 0};     // receives 5 from itself, sends 2
  EXPECT_THROW(assign_alltoallv_counts_free_spec(spec, 1, row, other_self), Error);
  EXPECT_THROW(assign_alltoallv_counts_free_spec(spec, 3, row, column), Error);
  EXPECT_THROW(assign_alltoallv_counts_free_spec(spec, 0, row, std::vector<Count>{1, 2}), Error);
  EXPECT_THROW(assign_alltoallv_counts_free_spec(spec, 0, row, std::vector<Count>{1, -2, 0}),
               Error);
  EXPECT_THROW(counts_free_spec(CollectiveKind::kAlltoallv, 3, 0, 1, row), Error);
  // The exchange's price: an allgather of p int64 per rank.
  const CostModel model = reference_cluster_model();
  CollectiveSpec allgather = make_spec(CollectiveKind::kAllgather, 6, 6);
  allgather.elem_bytes = sizeof(std::int64_t);
  EXPECT_DOUBLE_EQ(count_exchange_time(CollectiveKind::kAlltoallv, 6, model),
                   plan(allgather, model).predicted_time);
  // auto skips the matrix exchange only where one message at most is sent.
  EXPECT_TRUE(linear_wins_without_exchange(CollectiveKind::kAlltoallv, 2, model));
  EXPECT_FALSE(linear_wins_without_exchange(CollectiveKind::kAlltoallv, 3, model));
}

TEST(CountsFree, BadArgumentsAreInvalid) {
  const CostModel model = reference_cluster_model();
  EXPECT_THROW(linear_wins_without_exchange(CollectiveKind::kAllreduce, 4, model), Error);
  EXPECT_NO_THROW(linear_wins_without_exchange(CollectiveKind::kAlltoallv, 4, model));
  EXPECT_THROW(linear_wins_without_exchange(CollectiveKind::kGatherv, 0, model), Error);
  CostModel bad = model;
  bad.alpha = -1;
  EXPECT_THROW(linear_wins_without_exchange(CollectiveKind::kGatherv, 4, bad), Error);
  const std::vector<Count> three = {1, 2, 3};
  EXPECT_THROW(counts_free_spec(CollectiveKind::kScatterv, 4, 0, 0, three), Error);  // root: 4
  EXPECT_THROW(counts_free_spec(CollectiveKind::kScatterv, 4, 0, 1, three), Error);  // 1 or 4
  EXPECT_THROW(counts_free_spec(CollectiveKind::kScatterv, 4, 0, 4, three), Error);  // no rank 4
  EXPECT_THROW(counts_free_spec(CollectiveKind::kScatterv, 4, 5, 1, std::vector<Count>{2}),
               Error);  // no root 5
  try {
    linear_wins_without_exchange(CollectiveKind::kBcast, 4, model);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not bcast"), std::string::npos) << e.what();
  }
  // A non-root's spec: its own count at its place, zeros elsewhere.
  const CollectiveSpec spec =
      counts_free_spec(CollectiveKind::kGatherv, 4, 2, 1, std::vector<Count>{7});
  EXPECT_EQ(spec.counts, (std::vector<Count>{0, 7, 0, 0}));
  EXPECT_EQ(spec.root, 2);
}

}  // namespace
}  // namespace optcoll
