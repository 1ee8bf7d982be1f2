// SPDX-License-Identifier: Apache-2.0
// File: several-slice messages (SendSlices / RecvSlices) on real data: the random allgather
// patterns of tests/testing/slice_patterns.h (empty slices, zero totals, receive slices out of
// buffer order, sizes through the ring, eager, mailbox and hand-over paths) on the thread
// transport's native vectored calls, as threads and as fibers, and on Transport's default
// staging (a forwarding transport that does not override isendv / irecvv); a vectored send
// into a receive-reduce; the patterns also verify and simulate as one message each.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/schedule/validate.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/slice_patterns.h"

namespace optcoll::testing {
namespace {

Bytes bytes_of(const std::vector<std::int64_t>& values) {
  Bytes bytes(values.size() * sizeof(std::int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

enum class Backend { kThreads, kFibers, kStaged };

// Runs `c` on `backend`; returns every rank's output.
std::vector<Bytes> run_case(const SlicePatternCase& c, Backend backend) {
  const Rank p = c.schedule.spec.nranks;
  ThreadWorld& world = shared_world(
      p, backend == Backend::kFibers ? RankExecution::kFibers : RankExecution::kThreads);
  const Datatype type = Datatype::int64();
  const ReduceOp& op = ReduceOp::builtin("sum", type);
  std::vector<Bytes> inputs;
  for (const auto& in : c.inputs) inputs.push_back(bytes_of(in));
  if (backend != Backend::kStaged) return run_schedule(world, c.schedule, type, op, inputs);
  std::vector<Bytes> outputs(static_cast<std::size_t>(p));
  for (auto& out : outputs) out.assign(c.expected[0].size() * sizeof(std::int64_t), kPoison);
  world.run([&](Transport& inner) {
    ForwardingTransport staged(inner);  // isendv / irecvv: Transport's defaults
    const auto me = static_cast<std::size_t>(inner.rank());
    execute(c.schedule, staged, {inputs[me], outputs[me]}, type, op);
  });
  return outputs;
}

TEST(SlicesExec, RandomPatternsOnEveryThreadBackend) {
  int cases = 0;
  for (const Rank p : {2, 3, 5}) {
    for (const Count count : {0, 1, 7, 13, 600, 9000}) {
      for (std::uint64_t seed = 0; seed < 3; ++seed) {
        const auto c = slice_pattern_case(p, count, seed * 1000 + static_cast<std::uint64_t>(p));
        ASSERT_TRUE(structure_issues(c.schedule).empty()) << describe_op(c.schedule, 0, 0);
        for (const auto backend : {Backend::kThreads, Backend::kFibers, Backend::kStaged}) {
          const auto outputs = run_case(c, backend);
          for (Rank r = 0; r < p; ++r) {
            EXPECT_EQ(first_difference(outputs[static_cast<std::size_t>(r)],
                                       bytes_of(c.expected[static_cast<std::size_t>(r)]), 8),
                      "")
                << "p " << p << " count " << count << " seed " << seed << " backend "
                << static_cast<int>(backend) << " rank " << r;
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 6 * 3 * 3);
}

TEST(SlicesExec, RandomPatternsVerifyAndSimulateAsOneMessageEach) {
  for (const Rank p : {2, 4}) {
    for (const Count count : {0, 5, 40}) {
      const auto c = slice_pattern_case(p, count, 77 + static_cast<std::uint64_t>(count));
      const auto report = verify(c.schedule);
      EXPECT_TRUE(report.ok()) << report.summary();
      // Each message costs alpha + beta·(its total), whatever its slices: the same schedule
      // with every message made a plain Send / Recv of its total simulates to the same time.
      CostModel model;
      model.alpha = 10;
      model.beta = 1;
      model.copy = 0.5;
      Schedule plain = c.schedule;
      for (auto& program : plain.ranks) {
        for (Op& op : program.ops) {
          if (!is_communication(op.action)) continue;
          const Count n = message_count(op.action);
          op.action = is_send(op.action) ? Action{Send{peer_of(op.action), {Buf::kInput, 0, n}}}
                                         : Action{Recv{peer_of(op.action), {Buf::kOutput, 0, n}}};
        }
      }
      const auto sliced = simulate(c.schedule, model);
      const auto reference = simulate(plain, model);
      ASSERT_EQ(sliced.status, SimStatus::kOk);
      ASSERT_EQ(reference.status, SimStatus::kOk);
      EXPECT_EQ(sliced.makespan, reference.makespan) << p << " " << count;
    }
  }
}

// A vectored send into a receive-reduce: rank 0 sends its input as two pieces (in order),
// rank 1 combines them into its copy of its own input and sends the sum back; the thread
// transport gathers the pieces for the combine step, the staged default receives them whole.
TEST(SlicesExec, SendSlicesIntoReceiveReduce) {
  for (const Count n : {Count{3}, Count{1000}, Count{20000}}) {
    Schedule s;
    s.spec = make_spec(CollectiveKind::kAllreduce, 2, n);
    s.spec.elem_bytes = 8;
    s.algorithm = "test/slices_reduce";
    s.ranks.resize(2);
    const Count k = n / 3;
    s.ranks[0].ops.push_back(Op{
        SendSlices{1, {{Buf::kInput, 0, k}, {Buf::kInput, k, 0}, {Buf::kInput, k, n - k}}}, {}, 0});
    s.ranks[0].ops.push_back(Op{Recv{1, {Buf::kOutput, 0, n}}, {}, 0});
    s.ranks[1].ops.push_back(Op{Copy{{Buf::kInput, 0, n}, {Buf::kOutput, 0, n}}, {}, -1});
    s.ranks[1].ops.push_back(Op{RecvReduce{0, {Buf::kOutput, 0, n}, Side::kLeft}, {0}, 0});
    s.ranks[1].ops.push_back(Op{Send{0, {Buf::kOutput, 0, n}}, {1}, 0});
    ASSERT_TRUE(verify(s).ok()) << verify(s).summary();
    std::vector<std::int64_t> a(static_cast<std::size_t>(n));
    std::vector<std::int64_t> b(static_cast<std::size_t>(n));
    std::vector<std::int64_t> sum(static_cast<std::size_t>(n));
    for (Count i = 0; i < n; ++i) {
      a[static_cast<std::size_t>(i)] = 3 * i + 1;
      b[static_cast<std::size_t>(i)] = 1000 * i - 7;
      sum[static_cast<std::size_t>(i)] =
          a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i)];
    }
    for (const auto execution : {RankExecution::kThreads, RankExecution::kFibers}) {
      const auto outputs =
          run_schedule(shared_world(2, execution), s, Datatype::int64(),
                       ReduceOp::builtin("sum", Datatype::int64()), {bytes_of(a), bytes_of(b)});
      EXPECT_EQ(first_difference(outputs[0], bytes_of(sum), 8), "") << n;
      EXPECT_EQ(first_difference(outputs[1], bytes_of(sum), 8), "") << n;
    }
  }
}

}  // namespace
}  // namespace optcoll::testing
