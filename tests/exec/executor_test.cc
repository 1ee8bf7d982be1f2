// SPDX-License-Identifier: Apache-2.0
// File: the interpreter's checks and failure handling: buffer and rank-count validation,
// operand order of RecvReduce and Reduce, zeroed scratch, size mismatches between ranks
// that disagree on the schedule, the watchdog for a rank that never sends, fast failure
// when a rank throws, and epochs keeping back-to-back collectives apart.
#include "optcoll/exec/executor.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/validate.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"

namespace optcoll::testing {
namespace {

using std::chrono::milliseconds;

Datatype int32() { return Datatype::int32(); }
ReduceOp int32_sum() { return ReduceOp::builtin("sum", Datatype::int32()); }

// Runs `fn` and returns the Error it throws (fails the test if it does not throw).
template <typename Fn>
Error expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an optcoll::Error";
  return Error(ErrorCode::kInternal, "no error");
}

// Every rank binds buffers of the given element counts (default: the layout's).
void run_with_sizes(ThreadWorld& world, const Schedule& schedule, Rank odd_rank, Count odd_input,
                    Count odd_output) {
  const Layout layout(schedule.spec);
  world.run([&](Transport& t) {
    const Rank me = t.rank();
    const Count in_count = me == odd_rank ? odd_input : layout.input_count(me);
    const Count out_count = me == odd_rank ? odd_output : layout.output_count(me);
    std::vector<std::int32_t> in(static_cast<std::size_t>(in_count), 1);
    std::vector<std::int32_t> out(static_cast<std::size_t>(out_count));
    execute(schedule, t,
            {std::as_bytes(std::span<const std::int32_t>(in)),
             std::as_writable_bytes(std::span<std::int32_t>(out))},
            int32(), int32_sum(), ExecOptions{std::chrono::seconds(20)});
  });
}

TEST(ExecutorValidation, WrongInputSizeNamesRankBufferAndBytes) {
  const Schedule s =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 3, 10));
  const Error e = expect_error([&] { run_with_sizes(shared_world(3), s, 1, 9, 10); });
  const std::string what = e.what();
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << what;
  EXPECT_TRUE(contains(what, "rank 1 first: rank 1: input buffer holds 36 bytes, expected 40"))
      << what;
}

TEST(ExecutorValidation, WrongOutputSizeNamesRankBufferAndBytes) {
  const Schedule s =
      algorithms::build("gather/linear", make_spec(CollectiveKind::kGather, 3, 4, 2));
  // The root's output holds 3 blocks of 4; give it 11 elements.
  const Error e = expect_error([&] { run_with_sizes(shared_world(3), s, 2, 4, 11); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  EXPECT_TRUE(contains(e.what(), "rank 2: output buffer holds 44 bytes, expected 48")) << e.what();
}

TEST(ExecutorValidation, RankCountMustMatchTheTransport) {
  const Schedule s = algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 3, 4));
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::int32_t> out(4);
      execute(s, t, {{}, std::as_writable_bytes(std::span<std::int32_t>(out))}, int32(),
              int32_sum());
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(
      contains(e.what(), "schedule 'bcast/binomial' is for 3 ranks but the transport has 2"))
      << e.what();
}

TEST(ExecutorValidation, ExecutionRankMustBeInRange) {
  const Schedule s = algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 3, 4));
  const Error e = expect_error([&] { Execution execution(s, 3); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e.what(), "rank 3 is out of range for schedule 'bcast/binomial' of 3 ranks"))
      << e.what();
}

// An Execution runs on the transport of the rank it was prepared for, and no other.
TEST(ExecutorValidation, ExecutionRunsOnlyOnItsOwnRank) {
  const Schedule s = algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 2, 4));
  Execution for_rank0(s, 0);
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      if (t.rank() != 1) return;
      std::vector<std::int32_t> out(4);
      for_rank0.run(t, {{}, std::as_writable_bytes(std::span<std::int32_t>(out))}, int32(),
                    int32_sum(), ExecOptions{});
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e.what(), "prepared for rank 0 run by transport rank 1")) << e.what();
}

TEST(ExecutorValidation, MalformedScheduleIsRefused) {
  Schedule s = algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 2, 8));
  // Hand-edit rank 1's receive to half the size: no longer matches the send.
  auto& recv = std::get<Recv>(s.ranks[1].ops[0].action);
  recv.dst.count = 4;
  const Error e = expect_error([&] { run_with_sizes(shared_world(2), s, kNoRank, 0, 0); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e.what(), "matched a send of 8 elems")) << e.what();
}

TEST(ExecutorValidation, WritesIntoTheInputAreRefused) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 1, 4), "test/copy");
  b.copy(0, Slice{Buf::kInput, 0, 4}, Slice{Buf::kOutput, 0, 4});
  Schedule s = std::move(b).finish();
  s.ranks[0].ops[0].action = Copy{Slice{Buf::kOutput, 0, 4}, Slice{Buf::kInput, 0, 4}};
  const Error e = expect_error([&] { run_with_sizes(shared_world(1), s, kNoRank, 0, 0); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e.what(), "rank 0 op 0: copy 4 elems out[0:+4] -> in[0:+4]: writes into"))
      << e.what();
}

TEST(ExecutorValidation, OperatorMustSuitTheScheduleAndType) {
  const Schedule ring =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 2, 3));
  const Error noncomm = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::byte> in(3 * kMat2Bytes);
      std::vector<std::byte> out(3 * kMat2Bytes);
      execute(ring, t, {in, out}, mat2_type(), mat2_product());
    });
  });
  EXPECT_EQ(noncomm.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(noncomm.what(), "assumes a commutative operator")) << noncomm.what();

  const Error mistyped = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::byte> in(3 * 8);
      std::vector<std::byte> out(3 * 8);
      execute(ring, t, {in, out}, Datatype::int64(), int32_sum());
    });
  });
  EXPECT_EQ(mistyped.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(mistyped.what(), "another element type")) << mistyped.what();
}

// docs/errors.md: a hand-made datatype or operator that the factories would have refused, and
// a user type so large that the buffer sizes overflow: refused before any message.
TEST(ExecutorValidation, HandMadeTypesAndOperatorsAreRefused) {
  const Schedule ring =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 2, 3));
  auto run = [&](const Datatype& type, const ReduceOp& op) {
    return expect_error([&] {
      shared_world(2).run([&](Transport& t) {
        std::vector<std::byte> in(3 * 4);
        std::vector<std::byte> out(3 * 4);
        execute(ring, t, {in, out}, type, op);
      });
    });
  };
  Datatype sizeless = Datatype::int32();
  sizeless.bytes = 0;
  const Error e1 = run(sizeless, int32_sum());
  EXPECT_EQ(e1.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e1.what(), "datatype 'int32' has no size")) << e1.what();
  ReduceOp hollow = int32_sum();
  hollow.combine = nullptr;
  const Error e2 = run(int32(), hollow);
  EXPECT_EQ(e2.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e2.what(), "operator 'sum' has no combine function")) << e2.what();
  const ReduceOp user =
      ReduceOp::user("first", true, [](const std::byte*, const std::byte*, std::byte*, Count) {});
  const Error e3 = run(Datatype::user("huge", std::size_t{1} << 63), user);
  EXPECT_EQ(e3.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e3.what(), "input: 3 elements of 9223372036854775808 bytes do not fit"))
      << e3.what();
}

// docs/errors.md: a non-positive timeout is refused before any message (it used to post the
// root's sends and then report a timeout).
TEST(ExecutorValidation, NonPositiveTimeoutIsRefused) {
  const Schedule s = algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 2, 4));
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::int32_t> out(4, 1);
      execute(s, t, {{}, std::as_writable_bytes(std::span<std::int32_t>(out))}, int32(),
              int32_sum(), ExecOptions{milliseconds(0)});
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  EXPECT_TRUE(contains(e.what(), "2 of 2 ranks failed")) << e.what();
  EXPECT_TRUE(contains(e.what(), "the execution timeout must be positive, got 0 ms")) << e.what();
}

// docs/errors.md: no in-place mode; the check runs in execute() itself, before any message.
TEST(ExecutorValidation, OverlappingInputAndOutputAreRefused) {
  const Schedule s =
      algorithms::build("allgather/linear", make_spec(CollectiveKind::kAllgather, 2, 3));
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::int32_t> buffer(6, 1);
      const std::span<std::int32_t> out(buffer);
      execute(s, t, {std::as_bytes(out.subspan(2, 3)), std::as_writable_bytes(out)}, int32(),
              int32_sum());
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(e.what(), "2 of 2 ranks failed")) << e.what();
  EXPECT_TRUE(contains(e.what(), "the input and output buffers overlap")) << e.what();
}

// docs/errors.md: an operator that throws while combining a message fails the collective
// with a TransportError naming the receiving rank, the sender and the operator's message.
TEST(Executor, ThrowingOperatorFailsTheCollective) {
  const Schedule s = algorithms::build("reduce/linear", make_spec(CollectiveKind::kReduce, 2, 4));
  const ReduceOp boom =
      ReduceOp::user("boom", true, [](const std::byte*, const std::byte*, std::byte*, Count) {
        throw std::runtime_error("boom refuses");
      });
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::int32_t> in(4, 1);
      std::vector<std::int32_t> out(t.rank() == 0 ? 4 : 0);
      execute(s, t,
              {std::as_bytes(std::span<const std::int32_t>(in)),
               std::as_writable_bytes(std::span<std::int32_t>(out))},
              int32(), boom);
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kTransport) << e.what();
  EXPECT_TRUE(contains(e.what(),
                       "rank 0: combining the message from rank 1 (epoch 0, seq 0) "
                       "failed: boom refuses"))
      << e.what();
}

// Side::kRight means dst = dst * incoming, kLeft dst = incoming * dst, for messages
// (RecvReduce) and local reductions (Reduce) alike.
TEST(Executor, SideSelectsOperandOrder) {
  CollectiveSpec spec = make_spec(CollectiveKind::kReduce, 2, 6, 0);
  spec.commutative = false;
  const auto contributions = make_contributions(spec, kMat2Bytes, fill_mat2(3));
  auto product = [&](Rank first, Rank second) {
    Bytes out(contributions[0].size());
    for (std::size_t at = 0; at < out.size(); at += kMat2Bytes) {
      mat2_multiply(contributions[static_cast<std::size_t>(first)].data() + at,
                    contributions[static_cast<std::size_t>(second)].data() + at, out.data() + at);
    }
    return out;
  };
  const Slice in{Buf::kInput, 0, 6};
  const Slice out{Buf::kOutput, 0, 6};
  for (const Side side : {Side::kLeft, Side::kRight}) {
    for (const bool local : {false, true}) {
      ScheduleBuilder b(spec, "test/side");
      b.copy(0, in, out);
      if (local) {
        const Slice tmp = b.scratch(0, 6);
        b.transfer(1, 0, in, tmp);
        b.reduce(0, tmp, out, side);
      } else {
        b.transfer_reduce(1, 0, in, out, side);
      }
      const Schedule s = std::move(b).finish();
      const auto outputs =
          run_schedule(shared_world(2), s, mat2_type(), mat2_product(), contributions);
      const Bytes expected = side == Side::kRight ? product(0, 1) : product(1, 0);
      EXPECT_EQ(first_difference(outputs[0], expected, kMat2Bytes), "")
          << (local ? "Reduce" : "RecvReduce") << " side "
          << (side == Side::kLeft ? "left" : "right");
    }
  }
}

// The interpreter folds "copy my contribution, then combine into it" into one pass; when
// another op also reads the copy's destination (here a send), the copy must still happen.
TEST(Executor, CopyReadByAnotherOpIsNotFolded) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 2, 4);
  spec.commutative = false;
  const auto contributions = make_contributions(spec, kMat2Bytes, fill_mat2(11));
  const Slice in{Buf::kInput, 0, 4};
  const Slice out{Buf::kOutput, 0, 4};
  ScheduleBuilder b(spec, "test/no_fold");
  b.copy(0, in, out);
  b.transfer(0, 1, out, out);  // rank 1 receives rank 0's copy
  b.transfer_reduce(1, 0, in, out, Side::kRight);
  const Schedule s = std::move(b).finish();
  const auto outputs = run_schedule(shared_world(2), s, mat2_type(), mat2_product(), contributions);
  EXPECT_EQ(first_difference(outputs[1], contributions[0], kMat2Bytes), "");
  Bytes product(contributions[0].size());
  for (std::size_t at = 0; at < product.size(); at += kMat2Bytes) {
    mat2_multiply(contributions[0].data() + at, contributions[1].data() + at, product.data() + at);
  }
  EXPECT_EQ(first_difference(outputs[0], product, kMat2Bytes), "");
}

// Messages of megabytes (the thread backend hands those to idle receivers) through the
// whole interpreter, against the reference.
TEST(Executor, LargeMessages) {
  struct Large {
    const char* algorithm;
    CollectiveSpec spec;
  };
  const Large cases[] = {
      {"allreduce/ring", make_spec(CollectiveKind::kAllreduce, 3, 300000)},
      {"allreduce/reduce_then_bcast", make_spec(CollectiveKind::kAllreduce, 4, 200000)},
      {"reduce_scatter_block/ring", make_spec(CollectiveKind::kReduceScatterBlock, 2, 150000)},
      {"allgather/ring", make_spec(CollectiveKind::kAllgather, 3, 100000)},
      {"bcast/binomial", make_spec(CollectiveKind::kBcast, 5, 250000, 3)},
  };
  for (const Large& c : cases) {
    const Schedule s = algorithms::build(c.algorithm, c.spec);
    const auto contributions = make_contributions(c.spec, 8, fill_integers<std::int64_t>(9));
    const auto expected = reference_outputs(c.spec, 8, contributions, combine_sum<std::int64_t>());
    for (int round = 0; round < 3; ++round) {
      const auto outputs = run_schedule(shared_world(c.spec.nranks), s, Datatype::int64(),
                                        ReduceOp::builtin("sum", Datatype::int64()), contributions);
      for (std::size_t r = 0; r < outputs.size(); ++r) {
        EXPECT_EQ(first_difference(outputs[r], expected[r], 8), "")
            << c.algorithm << " rank " << r << " round " << round;
      }
    }
  }
}

TEST(Executor, ScratchStartsZeroed) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 1, 5), "test/scratch");
  const Slice tmp = b.scratch(0, 5);
  b.copy(0, tmp, Slice{Buf::kOutput, 0, 5});
  const Schedule s = std::move(b).finish();
  for (int run = 0; run < 2; ++run) {
    const auto outputs =
        run_schedule(shared_world(1), s, Datatype::int64(),
                     ReduceOp::builtin("sum", Datatype::int64()), {Bytes(5 * 8, std::byte{0x42})});
    EXPECT_EQ(outputs[0], Bytes(5 * 8, std::byte{0}));
  }
}

// bcast/linear on 2 ranks where the root sends `sent` int32 and rank 1 expects `expected`
// (two schedules, each well formed): the error of the run.
Error bcast_with_mismatched_counts(Count sent, Count expected) {
  const Schedule root =
      algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 2, sent));
  const Schedule leaf =
      algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 2, expected));
  return expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      const Schedule& s = t.rank() == 0 ? root : leaf;
      std::vector<std::int32_t> out(static_cast<std::size_t>(s.spec.count));
      execute(s, t, {{}, std::as_writable_bytes(std::span<std::int32_t>(out))}, int32(),
              int32_sum(), ExecOptions{std::chrono::seconds(20)});
    });
  });
}

// Messages above the eager limit: both ranks fail, naming both sizes.
TEST(Executor, MessageSizeMismatchFailsBothRanks) {
  const Error e = bcast_with_mismatched_counts(2048, 4096);
  const std::string what = e.what();
  EXPECT_EQ(e.code(), ErrorCode::kTransport) << what;
  EXPECT_TRUE(contains(what, "2 of 2 ranks failed")) << what;
  EXPECT_TRUE(contains(what, "the send has 8192 bytes but the receive expects 16384 bytes"))
      << what;
  EXPECT_TRUE(contains(what, "rank 1 was waiting on: rank 1 op 0: recv 4096 elems from rank 0"))
      << what;
}

// The same with small (eager) messages: the receiver fails, naming both sizes (the sender
// fails too only if it was still in the collective when the world was aborted).
TEST(Executor, EagerMessageSizeMismatchFailsTheReceiver) {
  const Error e = bcast_with_mismatched_counts(8, 16);
  const std::string what = e.what();
  EXPECT_EQ(e.code(), ErrorCode::kTransport) << what;
  EXPECT_TRUE(contains(what, "the send has 32 bytes but the receive expects 64 bytes")) << what;
  EXPECT_TRUE(contains(what, "rank 1 was waiting on: rank 1 op 0: recv 16 elems from rank 0"))
      << what;
}

// A transport that fails its n-th isend (counted over its life), passing the rest through.
class FailingSendTransport final : public ForwardingTransport {
 public:
  FailingSendTransport(Transport& inner, int fail_at)
      : ForwardingTransport(inner), fail_at_(fail_at) {}
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    if (++sends_ == fail_at_) throw TransportError("injected send failure");
    return ForwardingTransport::isend(to, key, data);
  }

 private:
  const int fail_at_;
  int sends_ = 0;
};

// A run that fails halfway through issuing its ready ops (the root's second of three sends)
// leaves nothing behind in its Execution: the next run of the same Execution is correct.
TEST(Executor, PersistentExecutionRecoversFromAFailedRun) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kBcast, 4, 6);
  const Schedule s = algorithms::build("bcast/linear", spec);
  std::vector<std::unique_ptr<Execution>> executions;
  for (Rank r = 0; r < 4; ++r) executions.push_back(std::make_unique<Execution>(s, r));
  ThreadWorld& world = shared_world(4);
  std::vector<std::vector<std::int32_t>> outputs(4);
  std::vector<std::unique_ptr<FailingSendTransport>> wrappers(4);
  for (std::uint32_t round = 0; round < 2; ++round) {
    auto body = [&](Transport& t) {
      const auto me = static_cast<std::size_t>(t.rank());
      if (!wrappers[me]) wrappers[me] = std::make_unique<FailingSendTransport>(t, 2);
      outputs[me].assign(6, t.rank() == 0 ? static_cast<std::int32_t>(round + 40) : -1);
      ExecOptions options;
      options.epoch = round;
      options.timeout = milliseconds(2000);
      executions[me]->run(*wrappers[me], {{}, std::as_writable_bytes(std::span(outputs[me]))},
                          int32(), int32_sum(), options);
    };
    if (round == 0) {
      const Error e = expect_error([&] { world.run(body); });
      EXPECT_TRUE(contains(e.what(), "injected send failure")) << e.what();
    } else {
      world.run(body);
      for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(outputs[r], std::vector<std::int32_t>(6, 41)) << "rank " << r;
      }
    }
  }
}

// A persistent Execution runs many times, on other buffers each time, with the scratch
// kept between runs: every run gives the reference result for its own inputs.
TEST(Executor, PersistentExecutionRunsManyTimes) {
  for (const char* name : {"allreduce/ring", "allreduce/rabenseifner", "alltoall/bruck"}) {
    const auto kind = std::string(name).starts_with("allreduce") ? CollectiveKind::kAllreduce
                                                                 : CollectiveKind::kAlltoall;
    const CollectiveSpec spec = make_spec(kind, 6, 11);
    const Schedule s = algorithms::build(name, spec);
    const Layout layout(spec);
    ThreadWorld& world = shared_world(6);
    std::vector<std::unique_ptr<Execution>> executions;
    for (Rank r = 0; r < 6; ++r) executions.push_back(std::make_unique<Execution>(s, r));
    for (std::uint32_t round = 0; round < 5; ++round) {
      const auto contributions =
          make_contributions(spec, 4, fill_integers<std::int32_t>(static_cast<int>(round) + 3));
      const auto expected = reference_outputs(spec, 4, contributions, combine_sum<std::int32_t>());
      std::vector<Bytes> outputs(6);
      world.run([&](Transport& t) {
        const auto me = static_cast<std::size_t>(t.rank());
        outputs[me].assign(static_cast<std::size_t>(layout.output_count(t.rank())) * 4,
                           std::byte{0x5a});
        ExecOptions options;
        options.epoch = round;
        executions[me]->run(t, {contributions[me], outputs[me]}, int32(), int32_sum(), options);
      });
      for (std::size_t r = 0; r < 6; ++r) {
        EXPECT_EQ(first_difference(outputs[r], expected[r], 4), "")
            << name << " rank " << r << " round " << round;
      }
    }
  }
}

// Two relay chains between two ranks, `ops` ops per rank: each rank copies its two inputs into
// its output, then element 0 travels 0 -> 1 -> 0 ... and element 1 travels 1 -> 0 -> 1 ..., each
// hop added into the receiver's element (a Fibonacci recurrence). Every hop depends on the one
// before it, and the two chains interleave, so a run that issues an op early, skips one or
// completes one twice ends with other values.
Schedule relay_chains(Count ops) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 2, 2), "test/relay_chains");
  for (Rank r = 0; r < 2; ++r) b.copy(r, Slice{Buf::kInput, 0, 2}, Slice{Buf::kOutput, 0, 2});
  for (Count hop = 0; hop < ops - 1; ++hop) {
    const Count element = hop % 2;
    const Count step = hop / 2;
    const Rank from = static_cast<Rank>((element + step) % 2);
    const Slice slot{Buf::kOutput, element, 1};
    b.transfer_reduce(from, 1 - from, slot, slot, Side::kLeft);
  }
  return std::move(b).finish();
}

// The outputs relay_chains(ops) must produce from `inputs` (two elements per rank), computed
// hop by hop without the executor.
std::vector<std::array<std::int64_t, 2>> relay_chain_outputs(
    Count ops, const std::array<std::array<std::int64_t, 2>, 2>& inputs) {
  std::vector<std::array<std::int64_t, 2>> values{inputs[0], inputs[1]};
  for (Count hop = 0; hop < ops - 1; ++hop) {
    const auto element = static_cast<std::size_t>(hop % 2);
    const auto from = static_cast<std::size_t>((hop % 2 + hop / 2) % 2);
    values[1 - from][element] += values[from][element];
  }
  return values;
}

// Rank programs of up to 64 ops are scheduled with bit masks (op i is bit i), longer ones with
// counters and a ready queue. Programs on both sides of that limit, run several times by one
// persistent Execution per rank (a masked run resets its words), on threads and on fibers.
TEST(Executor, ProgramsAroundTheMaskedLimitKeepEveryDependency) {
  for (const Count ops : {Count{62}, Count{63}, Count{64}, Count{65}, Count{66}, Count{130}}) {
    const Schedule s = relay_chains(ops);
    ASSERT_EQ(s.ranks[0].ops.size(), static_cast<std::size_t>(ops));
    ASSERT_EQ(s.ranks[1].ops.size(), static_cast<std::size_t>(ops));
    for (const RankExecution mode : {RankExecution::kThreads, RankExecution::kFibers}) {
      ThreadWorld& world = shared_world(2, mode);
      std::vector<std::unique_ptr<Execution>> executions;
      for (Rank r = 0; r < 2; ++r) executions.push_back(std::make_unique<Execution>(s, r));
      for (std::uint32_t round = 0; round < 3; ++round) {
        const std::int64_t base = 10 * static_cast<std::int64_t>(round);
        const std::array<std::array<std::int64_t, 2>, 2> inputs{
            {{base + 1, base + 2}, {base + 3, base + 5}}};
        const auto expected = relay_chain_outputs(ops, inputs);
        std::array<std::array<std::int64_t, 2>, 2> outputs{};
        world.run([&](Transport& t) {
          const auto me = static_cast<std::size_t>(t.rank());
          ExecOptions options;
          options.epoch = round;
          executions[me]->run(t,
                              {std::as_bytes(std::span(inputs[me])),
                               std::as_writable_bytes(std::span(outputs[me]))},
                              Datatype::int64(), ReduceOp::builtin("sum", Datatype::int64()),
                              options);
        });
        for (std::size_t r = 0; r < 2; ++r) {
          EXPECT_EQ(outputs[r], expected[r])
              << ops << " ops, rank " << r << ", round " << round << ", "
              << (mode == RankExecution::kThreads ? "threads" : "fibers");
        }
      }
    }
  }
}

// A copy of `s` in which the message (rank `from`'s op `send`) is gone on both sides (each
// half replaced by an empty copy), so that it is still well formed.
Schedule without_message(const Schedule& s, Rank from, OpId send) {
  const auto match = match_messages(s);
  const OpRef recv = match[static_cast<std::size_t>(from)][static_cast<std::size_t>(send)];
  Schedule edited = s;
  const Copy nothing{Slice{Buf::kOutput, 0, 0}, Slice{Buf::kOutput, 0, 0}};
  edited.ranks[static_cast<std::size_t>(from)].ops[static_cast<std::size_t>(send)].action = nothing;
  edited.ranks[static_cast<std::size_t>(from)].ops[static_cast<std::size_t>(send)].seq = -1;
  auto& recv_op =
      edited.ranks[static_cast<std::size_t>(recv.rank)].ops[static_cast<std::size_t>(recv.op)];
  recv_op.action = nothing;
  recv_op.seq = -1;
  require_well_formed(edited);
  return edited;
}

OpId first_send(const RankProgram& program) {
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    if (std::holds_alternative<Send>(program.ops[i].action)) return static_cast<OpId>(i);
  }
  return kNoOp;
}

// Rank 2 runs a program without its first send; the ranks waiting (directly or not) for it
// fail within about the timeout, and the error names the receive that never matched.
TEST(ExecutorWatchdog, StalledSenderFailsEveryWaitingRank) {
  const Schedule s =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 4, 64));
  const OpId send = first_send(s.ranks[2]);
  ASSERT_NE(send, kNoOp);
  const Schedule stalled = without_message(s, 2, send);
  const OpRef recv = match_messages(s)[2][static_cast<std::size_t>(send)];
  const std::string pending_recv = describe_op(s, recv.rank, recv.op);

  for (const bool world_timeout : {false, true}) {
    ExecOptions options;
    options.timeout = world_timeout ? std::chrono::seconds(30) : milliseconds(200);
    ThreadWorld world(4,
                      WorldOptions{world_timeout ? milliseconds(200) : std::chrono::seconds(30)});
    const auto start = std::chrono::steady_clock::now();
    const Error e = expect_error([&] {
      std::vector<Bytes> outputs(4, Bytes(64 * 4));
      const Bytes input(64 * 4, std::byte{1});
      world.run([&](Transport& t) {
        const Rank me = t.rank();
        execute(me == 2 ? stalled : s, t, {input, outputs[static_cast<std::size_t>(me)]}, int32(),
                int32_sum(), options);
      });
    });
    const auto elapsed = std::chrono::steady_clock::now() - start;
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kTransport) << what;
    EXPECT_GE(elapsed, milliseconds(190)) << what;
    EXPECT_LT(elapsed, std::chrono::seconds(5)) << what;
    EXPECT_TRUE(contains(what, "4 of 4 ranks failed")) << what;
    EXPECT_TRUE(contains(what, "timed out: no progress for")) << what;
    EXPECT_TRUE(contains(what, pending_recv)) << pending_recv << "\n" << what;
    for (const Rank r : {0, 1, 2, 3}) {
      EXPECT_TRUE(contains(what, fmt::format("rank {} was waiting on: rank {} op", r, r)) ||
                  contains(what, fmt::format("rank {} timed out: no progress for", r)))
          << r << "\n"
          << what;
    }
  }
}

// A rank that throws (here before it even starts) makes every other rank fail at once, not
// after the timeout; the error names it; the world then runs correctly again.
TEST(ExecutorWatchdog, ThrowingRankFailsEveryRankFast) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 4, 100);
  const Schedule s = algorithms::build("allreduce/ring", spec);
  ThreadWorld& world = shared_world(4);
  const auto contributions = make_contributions(spec, 4, fill_integers<std::int32_t>(5));
  const auto start = std::chrono::steady_clock::now();
  const Error e = expect_error([&] {
    std::vector<Bytes> outputs(4, Bytes(400));
    world.run([&](Transport& t) {
      const Rank me = t.rank();
      if (me == 2) {
        std::this_thread::sleep_for(milliseconds(30));
        throw std::runtime_error("injected failure on rank 2");
      }
      execute(s, t,
              {contributions[static_cast<std::size_t>(me)], outputs[static_cast<std::size_t>(me)]},
              int32(), int32_sum(), ExecOptions{std::chrono::seconds(30)});
    });
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const std::string what = e.what();
  EXPECT_EQ(e.code(), ErrorCode::kTransport) << what;
  EXPECT_TRUE(contains(what, "4 of 4 ranks failed; rank 2 first: injected failure on rank 2"))
      << what;
  for (const Rank r : {0, 1, 3}) {
    EXPECT_TRUE(contains(what, fmt::format("rank {} aborted: rank 2 failed: injected", r))) << what;
    EXPECT_TRUE(contains(what, fmt::format("rank {} was waiting on: rank {} op", r, r))) << what;
  }
  // And again, correctly, on the same world.
  const auto expected = reference_outputs(spec, 4, contributions, combine_sum<std::int32_t>());
  const auto outputs = run_schedule(world, s, int32(), int32_sum(), contributions);
  for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(first_difference(outputs[r], expected[r], 4), "");
}

// Ranks executing with different epochs never match each other's messages.
TEST(ExecutorEpochs, DifferentEpochsDoNotMatch) {
  const Schedule s = algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 2, 4));
  const Error e = expect_error([&] {
    shared_world(2).run([&](Transport& t) {
      std::vector<std::int32_t> out(4);
      ExecOptions options;
      options.timeout = milliseconds(100);
      options.epoch = t.rank() == 0 ? 1 : 2;
      execute(s, t, {{}, std::as_writable_bytes(std::span<std::int32_t>(out))}, int32(),
              int32_sum(), options);
    });
  });
  EXPECT_EQ(e.code(), ErrorCode::kTransport);
  EXPECT_TRUE(contains(e.what(), "timed out")) << e.what();
}

// Back-to-back collectives with their own epochs on one world, with ranks drifting apart in
// time, each produce their own result.
TEST(ExecutorEpochs, BackToBackCollectivesKeepTheirMessages) {
  constexpr Rank p = 5;
  const CollectiveSpec reduce_spec = make_spec(CollectiveKind::kAllreduce, p, 33);
  const CollectiveSpec gather_spec = make_spec(CollectiveKind::kAllgather, p, 7);
  const Schedule allreduce = algorithms::build("allreduce/ring", reduce_spec);
  const Schedule allgather = algorithms::build("allgather/ring", gather_spec);
  const auto reduce_in = make_contributions(reduce_spec, 4, fill_integers<std::int32_t>(1));
  const auto gather_in = make_contributions(gather_spec, 4, fill_integers<std::int32_t>(2));
  const auto reduce_expected =
      reference_outputs(reduce_spec, 4, reduce_in, combine_sum<std::int32_t>());
  const auto gather_expected =
      reference_outputs(gather_spec, 4, gather_in, combine_sum<std::int32_t>());
  constexpr int kRounds = 10;
  std::vector<std::vector<Bytes>> reduce_out(kRounds, std::vector<Bytes>(p, Bytes(33 * 4)));
  std::vector<std::vector<Bytes>> gather_out(kRounds, std::vector<Bytes>(p, Bytes(35 * 4)));
  shared_world(p).run([&](Transport& t) {
    const auto me = static_cast<std::size_t>(t.rank());
    std::uint32_t epoch = 100;
    for (int round = 0; round < kRounds; ++round) {
      if ((round + t.rank()) % 3 == 0) std::this_thread::sleep_for(milliseconds(1));
      execute(allreduce, t, {reduce_in[me], reduce_out[static_cast<std::size_t>(round)][me]},
              int32(), int32_sum(), ExecOptions{std::chrono::seconds(20), epoch++});
      execute(allgather, t, {gather_in[me], gather_out[static_cast<std::size_t>(round)][me]},
              int32(), int32_sum(), ExecOptions{std::chrono::seconds(20), epoch++});
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t r = 0; r < p; ++r) {
      EXPECT_EQ(
          first_difference(reduce_out[static_cast<std::size_t>(round)][r], reduce_expected[r], 4),
          "")
          << "round " << round << " rank " << r;
      EXPECT_EQ(
          first_difference(gather_out[static_cast<std::size_t>(round)][r], gather_expected[r], 4),
          "")
          << "round " << round << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace optcoll::testing
