// SPDX-License-Identifier: Apache-2.0
// File: lower_bound (optcoll/model/cost_model.cc) against hand-computed values per collective,
// never above any registry algorithm's simulated time under many models, and attained by the
// algorithms known to attain it, under the models where they do.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

CostModel abstract_model(double alpha, double beta, double gamma = 0) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = gamma;
  return m;
}

Time bound_of(CollectiveKind kind, Rank p, Count count, const CostModel& m) {
  return lower_bound(Layout(make_spec(kind, p, count)), m).value();
}

// ---- hand-computed values (alpha = 100, beta = 1 unless said; R = ceil(log_{k+1} p))

TEST(LowerBoundValues, RootedDataCollectives) {
  CostModel m = abstract_model(100, 1);
  // scatter p = 8, blocks of 100: the root sends 700 elements: alpha + 700; R(8) = 3.
  EXPECT_EQ(bound_of(CollectiveKind::kScatter, 8, 100, m), 800.0);
  EXPECT_EQ(bound_of(CollectiveKind::kScatter, 8, 10, m), 300.0);  // latency: 3 alpha
  // gather: the root takes in 700.
  EXPECT_EQ(bound_of(CollectiveKind::kGather, 8, 100, m), 800.0);
  // scatterv: the root sends the other blocks (1 + 2 + 400 + 0), to 3 ranks: R(4) = 2.
  EXPECT_EQ(lower_bound(Layout(make_spec_v(CollectiveKind::kScatterv, 5, {9, 1, 2, 400, 0})), m),
            503.0);
  // bcast: 3 alpha + n beta (Chan et al.), k = 2 ports: R(9) = 2, n beta / 2.
  EXPECT_EQ(bound_of(CollectiveKind::kBcast, 8, 1000, m), 1300.0);
  m.ports = 2;
  EXPECT_EQ(bound_of(CollectiveKind::kBcast, 9, 1000, m), 700.0);
  EXPECT_EQ(bound_of(CollectiveKind::kScatter, 9, 100, m), 500.0);  // alpha + 800 / 2
}

// A rank's own block reaches its output by a copy or by a round trip through another rank
// (own_block_bound). Träff's example (docs/math/gather-scatter-trees.md §7): gatherv of
// 3,3,3,200,3,3,3 at root 3, alpha = 10, beta = copy = 1.
TEST(LowerBoundValues, TheOwnBlockIsCopiedOrReceived) {
  const CollectiveSpec spec = make_spec_v(CollectiveKind::kGatherv, 7, {3, 3, 3, 200, 3, 3, 3}, 3);
  CostModel m = abstract_model(10, 1);
  EXPECT_EQ(lower_bound(Layout(spec), m), 30.0);  // copies free: 6 sources, R(7) = 3 alphas
  m.copy = 1;
  // Copy 200, then (the processor does one at a time) receive 18: 200 + 10 + 18. Receiving
  // the own block too costs as much (10 + 218); nothing in between is cheaper.
  EXPECT_EQ(lower_bound(Layout(spec), m), 228.0);
  // two_block attains it (TWO_Gatherv: one message over the root's two runs).
  EXPECT_EQ(simulate(algorithms::build("gatherv/two_block", spec, {}, m), m).makespan, 228.0);
  // With overlap the copy runs beside the transfers: copy x while receiving 218 - x,
  // max(x, 10 + 218 - x) is least at x = 114.
  m.overlap = true;
  EXPECT_EQ(lower_bound(Layout(spec), m), 114.0);
  // Two cores per rank copy 200 in 100 (no overlap): 100 + 28.
  m.overlap = false;
  m.cores_per_rank = 2;
  EXPECT_EQ(lower_bound(Layout(spec), m), 128.0);
  // allgather p = 4, blocks of 50, copy 2: each rank copies its 50 (100) or receives it
  // (50 more, then 10 + 200 in all); copying: 100 + 10 + 150 = 260 > 210.
  m = abstract_model(10, 1);
  m.copy = 2;
  EXPECT_EQ(bound_of(CollectiveKind::kAllgather, 4, 50, m), 210.0);
}

TEST(LowerBoundValues, Reductions) {
  CostModel m = abstract_model(100, 1, 1);
  // reduce p = 8, n = 1000: the root's sum 3 alpha + n beta = 1300; all ranks together:
  // 7 messages and 7n element transfers, 7n combinations over 8 ranks:
  // (700 + 7000 + 7000) / 8 = 1837.5.
  EXPECT_EQ(bound_of(CollectiveKind::kReduce, 8, 1000, m), 1837.5);
  // allreduce: 14 messages and 14n transfers (one-way gossip), 7n combinations:
  // (1400 + 14000 + 7000) / 8 = 2800.
  EXPECT_EQ(bound_of(CollectiveKind::kAllreduce, 8, 1000, m), 2800.0);
  // reduce_scatter_block, blocks of 100 (n = 800): (700 + 5600 + 5600) / 8 = 1487.5.
  EXPECT_EQ(bound_of(CollectiveKind::kReduceScatterBlock, 8, 100, m), 1487.5);
  // scan, n = 100: rank 7 combines 8 inputs: 3 alpha + 100 = 400 (the aggregate:
  // (700 + 700 + 700) / 8 = 262.5).
  EXPECT_EQ(bound_of(CollectiveKind::kScan, 8, 100, m), 400.0);
  // With overlap the reduction work may hide behind the transfers: the larger alone.
  m.overlap = true;
  EXPECT_EQ(bound_of(CollectiveKind::kReduce, 8, 1000, m), 1300.0);  // max(7700, 7000) / 8 < 1300
  EXPECT_EQ(bound_of(CollectiveKind::kAllreduce, 8, 1000, m), 1925.0);  // 15400 / 8
  // gamma = 0: the aggregate is the transfers alone.
  m = abstract_model(100, 1, 0);
  EXPECT_EQ(bound_of(CollectiveKind::kAllreduce, 8, 1000, m), 1925.0);
}

TEST(LowerBoundValues, AlltoallAndBarrier) {
  CostModel m = abstract_model(100, 1);
  // Bruck et al.: R(p) rounds; each rank takes in (p-1) blocks through k ports.
  EXPECT_EQ(bound_of(CollectiveKind::kAlltoall, 8, 10, m), 300.0);
  EXPECT_EQ(bound_of(CollectiveKind::kAlltoall, 8, 100, m), 800.0);
  m.ports = 2;
  EXPECT_EQ(bound_of(CollectiveKind::kAlltoall, 9, 10, m), 200.0);
  EXPECT_EQ(bound_of(CollectiveKind::kAlltoall, 9, 100, m), 500.0);
  // Barrier: messages of no elements cost nothing in the model, so nothing is certain.
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBarrier, 8, 0)), m), 0.0);
}

// The reference cluster (per byte: alpha = 2 us, beta = gamma = 0.1 ns/B).
TEST(LowerBoundValues, ReferenceCluster) {
  const CostModel m = reference_cluster_model();
  // scatter p = 64 of n = 1e6 B (blocks of 15625 B): the root sends 63/64 n:
  // alpha + 63 * 15625 B * 1e-10 s/B.
  CollectiveSpec scatter = make_spec(CollectiveKind::kScatter, 64, 15625);
  scatter.elem_bytes = 1;
  EXPECT_DOUBLE_EQ(*lower_bound(Layout(scatter), m), 2e-6 + 63 * 15625 * 1e-10);
  // bcast p = 64 of 1000 doubles: 6 alpha + 8000 B beta.
  CollectiveSpec bcast = make_spec(CollectiveKind::kBcast, 64, 1000);
  bcast.elem_bytes = 8;
  EXPECT_DOUBLE_EQ(*lower_bound(Layout(bcast), m), 6 * 2e-6 + 8000 * 1e-10);
  // allreduce p = 64 of 1e6 doubles (8e6 B): (126 alpha + 126 * 8e6 B beta + 63 * 8e6 B
  // gamma) / 64.
  CollectiveSpec allreduce = make_spec(CollectiveKind::kAllreduce, 64, 1000000);
  allreduce.elem_bytes = 8;
  EXPECT_DOUBLE_EQ(*lower_bound(Layout(allreduce), m),
                   (126 * 2e-6 + 126 * 8e6 * 1e-10 + 63 * 8e6 * 1e-10) / 64);
}

// Where a model switch voids an argument the bound falls back to what still holds.
TEST(LowerBoundValues, WeakerWhereTheModelAllowsMore) {
  CostModel m = abstract_model(100, 1);
  // Receiver-driven sends: the scatter root holds no port, so only a receiver's block
  // counts (alpha + 100) and the receivers' fan-in (one source each): latency 100.
  m.send_mode = SendMode::kReceiver;
  EXPECT_EQ(bound_of(CollectiveKind::kScatter, 8, 100, m), 200.0);
  // Shared sends: the root's data still leave it once, but reach everyone in one latency.
  m.send_mode = SendMode::kShared;
  EXPECT_EQ(bound_of(CollectiveKind::kScatter, 8, 10, m), 170.0);
  EXPECT_EQ(bound_of(CollectiveKind::kBcast, 8, 1000, m), 1100.0);
  // A receive gap: reduce's latency sum goes, the root still takes in n (alpha + n).
  m = abstract_model(100, 1);
  m.receive_gap = 1;
  EXPECT_EQ(bound_of(CollectiveKind::kReduce, 8, 1000, m), 1100.0);
  // Pair matrices: no bound.
  m = abstract_model(100, 1);
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 1, 0};
  m.pair_beta = {0, 1, 1, 0};
  EXPECT_FALSE(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 2, 1)), m).has_value());
}

// Why scatterv keeps the maximum of its latency and bandwidth bounds rather than Chan et
// al.'s sum: a correct schedule beats the sum. The root sends the three small blocks to
// rank 2 first (alpha + 3 beta), which passes them on while the root sends the large block
// to rank 1: max(3 alpha + 5 beta, 2 alpha + 103 beta) = 123 < ceil(log2 5) alpha + 103 beta
// = 133, and the bound, alpha + 103 beta = 113, stays below it.
TEST(LowerBoundValues, ScattervBeatsTheLatencyBandwidthSum) {
  const CollectiveSpec spec = make_spec_v(CollectiveKind::kScatterv, 5, {0, 100, 1, 1, 1});
  ScheduleBuilder b(spec, "test/small_blocks_first");
  const Slice relay = b.scratch(2, 3);
  b.transfer(0, 2, Slice{Buf::kInput, 100, 3}, relay);
  b.transfer(0, 1, Slice{Buf::kInput, 0, 100}, Slice{Buf::kOutput, 0, 100});
  b.copy(2, Slice{Buf::kScratch, relay.offset, 1}, Slice{Buf::kOutput, 0, 1});
  b.transfer(2, 3, Slice{Buf::kScratch, relay.offset + 1, 1}, Slice{Buf::kOutput, 0, 1});
  b.transfer(2, 4, Slice{Buf::kScratch, relay.offset + 2, 1}, Slice{Buf::kOutput, 0, 1});
  const Schedule s = std::move(b).finish();
  ASSERT_TRUE(verify(s).ok());
  const CostModel m = abstract_model(10, 1);
  EXPECT_EQ(simulate(s, m).makespan, 123.0);
  EXPECT_LT(simulate(s, m).makespan, 3 * 10.0 + 103);
  EXPECT_EQ(lower_bound(Layout(spec), m), 113.0);
}

// ---- soundness: no registry algorithm beats the bound, under any of these models

struct NamedModel {
  std::string name;
  CostModel model;
};

std::vector<NamedModel> soundness_models() {
  std::vector<NamedModel> models;
  const auto add = [&](std::string name, CostModel m) {
    models.push_back({std::move(name), std::move(m)});
  };
  add("unit", CostModel{});
  const CostModel base = abstract_model(50, 1, 2);
  add("alpha50_gamma2", base);
  add("latency_only", abstract_model(1, 0, 0));
  add("bandwidth_gamma", abstract_model(0, 1, 1));
  add("reference", reference_cluster_model());
  CostModel m = base;
  m.ports = 2;
  add("ports2", m);
  m.duplex = Duplex::kHalf;
  add("ports2_half", m);
  m = base;
  m.duplex = Duplex::kHalf;
  add("half", m);
  m = base;
  m.overlap = true;
  add("overlap", m);
  m.gamma = 20;
  add("overlap_gamma20", m);
  m = base;
  m.copy = 0.5;
  add("copy", m);
  // Copies dearer than a transfer's per-element time: receiving one's own block beats
  // copying it; with cores, overlap, a receive gap and k ports the own-block term changes.
  m.copy = 3;
  add("copy3", m);
  m.cores_per_rank = 2;
  add("copy3_cores2", m);
  m.cores_per_rank = 1;
  m.overlap = true;
  add("copy3_overlap", m);
  m.overlap = false;
  m.receive_gap = 3;
  add("copy3_receive_gap", m);
  m.receive_gap.reset();
  m.ports = 2;
  add("copy3_ports2", m);
  m = base;
  m.send_mode = SendMode::kShared;
  add("shared", m);
  m.send_mode = SendMode::kReceiver;
  add("receiver", m);
  m.send_gap = 3;
  add("receiver_send_gap", m);
  m = base;
  m.send_gap = 3;
  add("send_gap", m);
  m.receive_gap = 3;
  add("both_gaps", m);
  m.send_gap.reset();
  add("receive_gap", m);
  m = base;
  m.cores = 1;
  add("cores1", m);
  m.cores = 2;
  add("cores2", m);
  m.send_gap = 3;
  add("cores2_send_gap", m);
  m = base;
  m.node_beta = 0.25;
  add("node_beta", m);
  m.send_mode = SendMode::kReceiver;
  add("node_beta_receiver", m);
  m.node_beta = 4;
  m.send_gap = 3;
  add("node_beta4_receiver_send_gap", m);
  m = base;
  m.ports = 2;
  m.duplex = Duplex::kHalf;
  m.send_mode = SendMode::kShared;
  m.receive_gap = 3;
  add("ports2_half_shared_receive_gap", m);
  // What the executors do beyond the ops: folded copies, and transfers an idle sender helps
  // with (every one, or only the larger ones).
  m = base;
  m.copy = 3;
  m.folds_copies = true;
  add("folds_copies", m);
  m.helped_bytes = 1;
  add("folds_copies_helped", m);
  m = base;
  m.helped_bytes = 64;
  m.send_mode = SendMode::kReceiver;
  m.receive_gap = 3;
  add("helped64_receiver_receive_gap", m);
  m.node_beta = 0.25;
  m.cores = 2;
  add("helped64_receiver_node", m);
  m = base;
  m.combines_in_place = true;
  add("in_place", m);
  m.gamma = 0.25;  // a combine in place cheaper than a copy
  add("in_place_cheap_gamma", m);
  m.helped_bytes = 1;
  m.receive_gap = 3;
  add("in_place_cheap_gamma_helped_receive_gap", m);
  // Messages past a handshake at another rate: faster (the bound must take the lesser) and
  // slower, with and without a band the channel takes over (rendezvous_max_bytes).
  m = base;
  m.rendezvous_bytes = 8;
  m.rendezvous_alpha = 5;
  m.rendezvous_beta = 0.25;
  add("rendezvous_faster", m);
  m.rendezvous_beta = 3;
  m.rendezvous_max_bytes = 64;
  add("rendezvous_slower_band", m);
  add("mpi_node", mpi_node_model(2, std::size_t{16} << 10));
  return models;
}

class LowerBoundRegistry : public ::testing::TestWithParam<testing::RegistryCase> {};

TEST_P(LowerBoundRegistry, NoAlgorithmBeatsTheBound) {
  const auto& c = GetParam();
  const Schedule s = algorithms::build(*c.algorithm, c.spec);
  static const std::vector<NamedModel> models = soundness_models();
  for (const auto& [name, model] : models) {
    const auto bound = lower_bound(Layout(c.spec), model);
    ASSERT_TRUE(bound.has_value()) << name;
    const SimResult result = simulate(s, model);
    ASSERT_EQ(result.status, SimStatus::kOk) << name;
    // (The memory term can be attained: the stretched clock sums fractions.)
    EXPECT_GE(result.makespan, *bound * (1 - 1e-9)) << name;
  }
}

// The sanitizer builds stop at p = 17 (tests/testing/registry_cases.h) and leave out 13 and 16.
std::vector<Rank> soundness_ranks() {
  if (testing::kSanitizedBuild) return {1, 2, 3, 5, 8, 17};
  return {1, 2, 3, 5, 8, 13, 16, 17, 32, 33, 64};
}

INSTANTIATE_TEST_SUITE_P(Registry, LowerBoundRegistry,
                         ::testing::ValuesIn(testing::registered_cases(soundness_ranks(), true,
                                                                       false)),
                         testing::case_name);

// ---- attainment: the algorithms known to meet a bound meet it (within rounding)

struct Attained {
  std::string algorithm;
  Rank p;
  Count count;
  double alpha, beta, gamma;
  int ports = 1;
};

// Found by simulating every registry algorithm (optcoll plan ... --abstract): each meets
// lower_bound exactly here. Latency only (beta = 0): the trees and the dissemination-style
// exchanges take R(p) rounds. Bandwidth only (alpha = 0): the root's (or each rank's) data
// through its port, and for the reductions Chan et al.'s (p-1)/p·n(beta + gamma) (allreduce:
// 2(p-1)/p·n·beta + (p-1)/p·n·gamma). Both at p = 2: alpha + n·beta.
std::vector<Attained> attained_cases() {
  std::vector<Attained> cases;
  for (const Rank p : {2, 4, 5, 8, 16}) {
    for (const char* a :
         {"bcast/binomial", "scatter/binomial", "gather/binomial", "allgather/bruck",
          "reduce/binomial", "scan/recursive_doubling", "exscan/recursive_doubling"}) {
      cases.push_back({a, p, 64, 1, 0, 0});
    }
    for (const char* a : {"scatter/linear", "scatter/binomial", "gather/linear", "gather/binomial",
                          "allgather/ring", "allgather/bruck", "alltoall/pairwise"}) {
      cases.push_back({a, p, 64, 0, 1, 0});
    }
    for (const char* a : {"reduce_scatter_block/ring", "reduce_scatter/ring"}) {
      cases.push_back({a, p, 64, 0, 1, 1});
    }
  }
  for (const Rank p : {2, 4, 8, 16}) {  // powers of two (and 64 | count)
    for (const char* a : {"allgather/recursive_doubling", "reduce_scatter/recursive_halving",
                          "allreduce/recursive_doubling", "alltoall/bruck"}) {
      cases.push_back({a, p, 64, 1, 0, 0});
    }
    for (const char* a : {"allgather/recursive_doubling", "alltoall/linear"}) {
      cases.push_back({a, p, 64, 0, 1, 0});
    }
    for (const char* a :
         {"reduce_scatter/recursive_halving", "allreduce/ring", "allreduce/rabenseifner"}) {
      cases.push_back({a, p, 64, 0, 1, 1});
    }
  }
  // p = 2: one message, latency and bandwidth together.
  for (const char* a : {"bcast/binomial", "scatter/binomial", "gather/binomial", "allgather/ring",
                        "alltoall/pairwise", "reduce/binomial"}) {
    cases.push_back({a, 2, 64, 1, 1, 0});
  }
  // k = 2 ports: a 3-nomial tree reaches 9 ranks in 2 rounds.
  cases.push_back({"bcast/knomial", 9, 64, 1, 0, 0, 2});
  return cases;
}

TEST(LowerBoundAttainment, KnownOptimaMeetTheBound) {
  for (const auto& c : attained_cases()) {
    const auto* info = algorithms::find_algorithm(c.algorithm);
    ASSERT_NE(info, nullptr) << c.algorithm;
    const CollectiveSpec spec =
        takes_counts(info->collective)
            ? make_spec_v(info->collective, c.p,
                          std::vector<Count>(static_cast<std::size_t>(c.p), c.count))
            : make_spec(info->collective, c.p, c.count);
    algorithms::Params params;
    if (c.algorithm == "bcast/knomial") params = algorithms::Params::parse("radix=3");
    const Schedule s = algorithms::build(*info, spec, params);
    CostModel m = abstract_model(c.alpha, c.beta, c.gamma);
    m.ports = c.ports;
    const Time bound = lower_bound(Layout(spec), m).value();
    const Time time = simulate(s, m).makespan;
    EXPECT_GT(bound, 0) << c.algorithm << " p=" << c.p;
    EXPECT_NEAR(time, bound, 1e-9 * bound)
        << c.algorithm << " p=" << c.p << " alpha=" << c.alpha << " beta=" << c.beta
        << " gamma=" << c.gamma << " ports=" << c.ports;
  }
}

}  // namespace
}  // namespace optcoll
