// SPDX-License-Identifier: Apache-2.0
// File: the two model fields that price what the executors do beyond a schedule's ops:
// folded copies (CostModel::folds_copies) and helped transfers (helped_bytes, the thread
// backend's shared copies). Every expected time is computed by hand from the semantics in
// simulator.cc under the textbook model (alpha 100, beta 1, gamma 3 per element).
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::kAlpha;
using testing::kBeta;
using testing::kGamma;

Slice out(Count offset, Count count) { return Slice{Buf::kOutput, offset, count}; }
Slice in(Count offset, Count count) { return Slice{Buf::kInput, offset, count}; }

const OpTiming& timing(const SimResult& r, Rank rank, OpId op) {
  return r.timing.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(op));
}

constexpr Count kN = 10;
constexpr Time kCopy = 2;  // per element

CostModel with_copies() {
  CostModel m = testing::textbook_model();
  m.copy = kCopy;
  return m;
}

// Rank 0 starts from its own contribution (a Copy into its output) and receive-reduces rank
// 1's into it: reduce/linear at p = 2.
Schedule copy_then_receive_reduce() {
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 2, kN), "test/copy_then_receive_reduce");
  b.copy(0, in(0, kN), out(0, kN));
  b.transfer_reduce(1, 0, in(0, kN), out(0, kN), Side::kRight);
  return std::move(b).finish();
}

TEST(FoldedCopies, ACopyIntoAReceiveReduceCostsNothing) {
  const Schedule s = copy_then_receive_reduce();
  CostModel m = with_copies();
  // Unfolded: the copy [0, 20], then the transfer [20, 130] and its reduction [130, 160].
  EXPECT_EQ(simulate(s, m).makespan, kN * kCopy + kAlpha + kN * kBeta + kN * kGamma);
  m.folds_copies = true;
  // Folded: the copy completes at 0 and holds nothing; the rest starts at once.
  const auto folded = simulate(s, m, {.trace = true});
  EXPECT_EQ(folded.makespan, kAlpha + kN * kBeta + kN * kGamma);
  EXPECT_EQ(timing(folded, 0, 0).start, 0);
  EXPECT_EQ(timing(folded, 0, 0).end, 0);
  // The same schedule from the registry.
  const Schedule linear =
      algorithms::build("reduce/linear", make_spec(CollectiveKind::kReduce, 2, kN));
  EXPECT_EQ(simulate(linear, m).makespan, kAlpha + kN * kBeta + kN * kGamma);
}

TEST(FoldedCopies, ACopyIntoALocalReduceCostsNothing) {
  // allreduce on one rank as a copy and a reduction of the input into the output: folded,
  // only the reduction's 7 * gamma remains.
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 1, 7), "test/copy_then_reduce");
  b.copy(0, in(0, 7), out(0, 7));
  b.reduce(0, in(0, 7), out(0, 7), Side::kLeft);
  const Schedule s = std::move(b).finish();
  CostModel m = with_copies();
  EXPECT_EQ(simulate(s, m).makespan, 7 * kCopy + 7 * kGamma);
  m.folds_copies = true;
  EXPECT_EQ(simulate(s, m).makespan, 7 * kGamma);
}

TEST(FoldedCopies, ACopyWithAnotherDependentStillRuns) {
  // Rank 0 copies its input into its output, sends the output to rank 1 (which reads the
  // copy), then receive-reduces rank 1's contribution into it: the copy has two dependents,
  // so the executors run it, and so does the simulator: [0, 20], then the send [20, 130].
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 2, kN), "test/copy_read_twice");
  b.copy(0, in(0, kN), out(0, kN));
  b.transfer(0, 1, out(0, kN), b.scratch(1, kN));
  b.transfer_reduce(1, 0, in(0, kN), out(0, kN), Side::kRight);
  const Schedule s = std::move(b).finish();
  CostModel m = with_copies();
  m.folds_copies = true;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 0, 0).end, kN * kCopy);
  EXPECT_EQ(timing(r, 0, 1).start, kN * kCopy);
}

TEST(InPlaceCombines, AReceiveReduceTakesGammaInsteadOfBeta) {
  // Rank 0 receive-reduces rank 1's 10 elements (in place: 100 + 3 * 10, the reduction no
  // time; otherwise 100 + 10, then 30), then takes rank 2's 10 elements into scratch. With a
  // receive gap of 5 the first transfer would free the port at 15; in place it holds it
  // to its end, so the second transfer runs on [130, 240].
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 3, kN), "test/in_place");
  b.transfer_reduce(1, 0, in(0, kN), out(0, kN), Side::kRight);
  b.transfer(2, 0, in(0, kN), b.scratch(0, kN));
  const Schedule s = std::move(b).finish();
  CostModel m = testing::textbook_model();
  m.receive_gap = 5;
  const auto apart = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(apart, 0, 1).start, 5 + kN * kBeta);  // after the gap
  m.combines_in_place = true;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 0, 0).end, kAlpha + kN * kGamma);
  EXPECT_EQ(timing(r, 0, 1).start, kAlpha + kN * kGamma);
  EXPECT_EQ(r.makespan, kAlpha + kN * kGamma + kAlpha + kN * kBeta);
  // Helped (rank 1 waits for its send): half the combine.
  m.helped_bytes = 8;
  EXPECT_EQ(timing(simulate(s, m, {.trace = true}), 0, 0).end, kAlpha + kN * kGamma / 2);
}

TEST(HelpedTransfers, AnIdleSenderHalvesTheDataTime) {
  // One transfer of 10 elements from rank 1 to rank 0.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 2, kN), "test/one_transfer");
  b.transfer(1, 0, in(0, kN), out(kN, kN));
  const Schedule s = std::move(b).finish();
  CostModel m = testing::textbook_model();
  const std::size_t bytes = kN * s.spec.elem_bytes;
  m.helped_bytes = bytes;  // exactly the message: helped
  EXPECT_EQ(simulate(s, m).makespan, kAlpha + kN * kBeta / 2);
  m.helped_bytes = bytes + 1;  // one byte more than the message: not helped
  EXPECT_EQ(simulate(s, m).makespan, kAlpha + kN * kBeta);
  m.helped_bytes.reset();
  EXPECT_EQ(simulate(s, m).makespan, kAlpha + kN * kBeta);
}

TEST(HelpedTransfers, NotWhereRanksOutnumberTheCores) {
  // Three ranks, one transfer from rank 1 to rank 0: with 3 cores a waiting rank spins and
  // helps (100 + 5); with 2 the thread backend's ranks do not spin, and none helps (two
  // ranks busy on 2 cores: no slowdown, 100 + 10).
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 3, kN), "test/three_ranks");
  b.transfer(1, 0, in(0, kN), out(kN, kN));
  const Schedule s = std::move(b).finish();
  CostModel m = testing::textbook_model();
  m.helped_bytes = 8;
  m.cores = 3;
  EXPECT_EQ(simulate(s, m).makespan, kAlpha + kN * kBeta / 2);
  m.cores = 2;
  EXPECT_EQ(simulate(s, m).makespan, kAlpha + kN * kBeta);
}

TEST(HelpedTransfers, OnlyASenderWithNothingInProgressHelps) {
  // Rank 0 sends to ranks 1 and 2 at once (two ports): the first send starts with rank 0
  // idle and is helped (100 + 5); the second starts at the same instant while the first is
  // in progress and is not (100 + 10).
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 3, kN), "test/two_sends");
  b.transfer(0, 1, out(0, kN), out(0, kN));
  b.transfer(0, 2, out(0, kN), out(0, kN));
  const Schedule s = std::move(b).finish();
  CostModel m = testing::textbook_model();
  m.ports = 2;
  m.helped_bytes = 8;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 1, 0).end, kAlpha + kN * kBeta / 2);
  EXPECT_EQ(timing(r, 2, 0).end, kAlpha + kN * kBeta);
  EXPECT_EQ(r.makespan, kAlpha + kN * kBeta);
}

TEST(HelpedTransfers, AnExchangeIsNotHelped) {
  // Ranks 0 and 1 swap 10 elements at once: each receives while its send is in progress, so
  // neither waits and neither transfer is helped (both 100 + 10, side by side). Rank 0's send
  // starts first, while rank 0 receives nothing yet: only the end of the instant decides.
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 2, kN), "test/exchange");
  b.transfer(0, 1, in(0, kN), out(0, kN));
  b.transfer(1, 0, in(0, kN), out(kN, kN));
  CostModel m = testing::textbook_model();
  m.helped_bytes = 8;
  EXPECT_EQ(simulate(std::move(b).finish(), m).makespan, kAlpha + kN * kBeta);
}

TEST(HelpedTransfers, AHelperReceivesOnlyOnceItIsDone) {
  // Rank 1 sends 10 elements to rank 0 (helped: 100 + 5); rank 2's message to rank 1 is
  // ready only at 1 (a release time), so it waits for rank 1 to finish helping, then rank 2
  // (which waits for it) helps it: [105, 210].
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 3, kN), "test/helper_receives");
  b.transfer(1, 0, in(0, kN), out(kN, kN));
  const auto late = b.transfer(2, 1, in(0, kN), out(2 * kN, kN));
  Schedule s = std::move(b).finish();
  s.ranks[2].ops.at(static_cast<std::size_t>(late.send)).not_before = 1;
  CostModel m = testing::textbook_model();
  m.helped_bytes = 8;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 1, late.recv).start, kAlpha + kN * kBeta / 2);
  EXPECT_EQ(r.makespan, 2 * (kAlpha + kN * kBeta / 2));
}

TEST(HelpedTransfers, AHelpedReceiveReduceIsOnePass) {
  // reduce/linear at p = 2 with folded copies: rank 1 waits for its send, so it helps both
  // the transfer and the reduction: 100 + (10 + 30) / 2, the reduction itself no time.
  const Schedule s = copy_then_receive_reduce();
  CostModel m = with_copies();
  m.folds_copies = true;
  m.helped_bytes = 8;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(r.makespan, kAlpha + (kN * kBeta + kN * kGamma) / 2);
  EXPECT_EQ(timing(r, 1, 0).end, r.makespan);  // the sender is busy to the end
  // Receiving into the output first and reducing the own contribution after (the order
  // reduce/optimal_ordered uses at p = 2): only the transfer is helped, the local reduction
  // runs on one rank: 100 + 10 / 2 + 30.
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 2, kN), "test/receive_then_reduce");
  b.transfer(1, 0, in(0, kN), out(0, kN));
  b.reduce(0, in(0, kN), out(0, kN), Side::kLeft);
  EXPECT_EQ(simulate(std::move(b).finish(), m).makespan, kAlpha + kN * kBeta / 2 + kN * kGamma);
}

TEST(HelpedTransfers, AutoPicksTheSharedReceiveReduce) {
  // The regret this pricing closes (docs/results/node/threads_reduce_p2.table): a 2 MiB
  // reduce at p = 2 under a model shaped like the thread backend's calibration (per byte,
  // copy and gamma about beta). Unhelped, receiving into the output and reducing after
  // looks cheapest; helped, the receive-reduce that both ranks combine is.
  CostModel m;
  m.per_byte = true;
  m.alpha = 3e-7;
  m.beta = 3e-11;
  m.gamma = 2.5e-11;
  m.copy = 2.3e-11;
  m.folds_copies = true;
  const CollectiveSpec spec = make_spec(CollectiveKind::kReduce, 2, 262144);
  const auto time = [&](const char* algorithm) {
    return simulate(algorithms::build(algorithm, spec, {}, m), m).makespan;
  };
  EXPECT_EQ(time("reduce/linear"), time("reduce/optimal_ordered"));  // alpha + n(beta + gamma)
  m.helped_bytes = std::size_t{256} << 10;
  EXPECT_LT(time("reduce/linear"), time("reduce/optimal_ordered"));
}

}  // namespace
}  // namespace optcoll
