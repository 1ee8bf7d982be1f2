// SPDX-License-Identifier: Apache-2.0
// File: collectives in flight at once (CollectivesInFlight, ExecutionRun): every registry
// case runs three times concurrently on one transport per rank (three epochs, three data
// sets, completed in reverse order of their start) and every run must match the naive
// reference; plus the failure paths: a run that fails keeps its error, a mismatch across
// ranks ends in an error rather than a hang, an abandoned run is withdrawn.
#include "optcoll/exec/in_flight.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/wait_error.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"
#include "tests/testing/registry_cases.h"

namespace optcoll::testing {
namespace {

constexpr int kRunsAtOnce = 3;

// Each rank's input and output buffers of one run (bcast: the message in the root's output).
struct RunBuffers {
  std::vector<Bytes> inputs;
  std::vector<Bytes> outputs;
  std::vector<Bytes> expected;
};

RunBuffers buffers_for(const CollectiveSpec& spec, const Datatype& type, const ElementFill& fill,
                       const ElementCombine& combine) {
  const Layout layout(spec);
  const auto contributions = make_contributions(spec, type.bytes, fill);
  RunBuffers b;
  b.expected = reference_outputs(spec, type.bytes, contributions, combine);
  for (Rank r = 0; r < spec.nranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    b.outputs.emplace_back(static_cast<std::size_t>(layout.output_count(r)) * type.bytes, kPoison);
    b.inputs.emplace_back();
    if (spec.kind == CollectiveKind::kBcast) {
      if (r == spec.root) b.outputs[i] = contributions[i];
    } else {
      b.inputs[i] = contributions[i];
    }
  }
  return b;
}

class InFlightRegistry : public ::testing::TestWithParam<RegistryCase> {};

TEST_P(InFlightRegistry, ThreeRunsAtOnceEachMatchTheReference) {
  const RegistryCase& c = GetParam();
  const Schedule schedule = algorithms::build(*c.algorithm, c.spec);
  const bool commutative = c.spec.commutative;
  const Datatype type = commutative ? Datatype::int64() : mat2_type();
  const ReduceOp op = commutative ? ReduceOp::builtin("sum", type) : mat2_product();
  const ElementCombine combine =
      commutative ? combine_sum<std::int64_t>() : ElementCombine(mat2_multiply);
  std::vector<RunBuffers> runs;
  for (int k = 0; k < kRunsAtOnce; ++k) {
    const auto salt = static_cast<std::uint64_t>(k + 1);
    runs.push_back(buffers_for(
        c.spec, type, commutative ? fill_integers<std::int64_t>(salt) : fill_mat2(salt), combine));
  }
  shared_world(c.spec.nranks).run([&](Transport& transport) {
    const auto me = static_cast<std::size_t>(transport.rank());
    std::vector<std::unique_ptr<Execution>> executions;
    CollectivesInFlight in_flight(transport);
    std::vector<CollectivesInFlight::Handle> handles;
    for (int k = 0; k < kRunsAtOnce; ++k) {
      executions.push_back(std::make_unique<Execution>(schedule, transport.rank()));
      ExecOptions options;
      options.timeout = std::chrono::seconds(60);
      options.epoch = static_cast<std::uint32_t>(k);
      auto& b = runs[static_cast<std::size_t>(k)];
      handles.push_back(
          in_flight.start(*executions.back(), {b.inputs[me], b.outputs[me]}, type, op, options));
    }
    for (int k = kRunsAtOnce - 1; k >= 0; --k)
      in_flight.wait(*handles[static_cast<std::size_t>(k)]);
    EXPECT_TRUE(in_flight.empty());
  });
  for (int k = 0; k < kRunsAtOnce; ++k) {
    const auto& b = runs[static_cast<std::size_t>(k)];
    for (Rank r = 0; r < c.spec.nranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      EXPECT_EQ(first_difference(b.outputs[i], b.expected[i], type.bytes), "")
          << c.name << " run " << k << " rank " << r;
    }
  }
}

// Rank counts of the registry grid up to 17 (primes, powers of two and neighbours), every
// root and count pattern: the concurrency is per rank, so larger p adds time, not paths.
// Sanitizer builds, which run the registry suite beside it, take p = 2 and 5 only (their time
// budget: the three runs at once are what they check).
const std::vector<Rank>& in_flight_ranks() {
  static const std::vector<Rank> full{1, 2, 3, 4, 5, 7, 8, 11, 16, 17};
  static const std::vector<Rank> light{2, 5};
  return kSanitizedBuild ? light : full;
}
INSTANTIATE_TEST_SUITE_P(Registry, InFlightRegistry,
                         ::testing::ValuesIn(registered_cases(in_flight_ranks(),
                                                              /*thin_large=*/true,
                                                              /*include_noncommutative=*/true)),
                         case_name);

Schedule auto_allreduce(Rank p, Count count) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::kAllreduce;
  spec.nranks = p;
  spec.count = count;
  spec.elem_bytes = 8;
  return algorithms::build(algorithms::lookup("ring", CollectiveKind::kAllreduce), spec);
}

TEST(InFlight, RunsMismatchedAcrossRanksFailInsteadOfHanging) {
  // Rank 0 starts allreduces of 4 then 6 elements; rank 1 of 6 then 4: each epoch's messages
  // have different sizes on the two sides, which the transport reports.
  const Schedule four = auto_allreduce(2, 4);
  const Schedule six = auto_allreduce(2, 6);
  ThreadWorld world(2, WorldOptions{std::chrono::seconds(10)});
  std::vector<std::string> errors(2);
  world.run([&](Transport& transport) {
    const Rank me = transport.rank();
    const Schedule& first = me == 0 ? four : six;
    const Schedule& second = me == 0 ? six : four;
    Execution a(first, me);
    Execution b(second, me);
    std::vector<std::int64_t> in_a(static_cast<std::size_t>(first.spec.count), 1);
    std::vector<std::int64_t> out_a(in_a.size());
    std::vector<std::int64_t> in_b(static_cast<std::size_t>(second.spec.count), 1);
    std::vector<std::int64_t> out_b(in_b.size());
    const Datatype type = Datatype::int64();
    const ReduceOp sum = ReduceOp::builtin("sum", type);
    ExecOptions options;
    options.timeout = std::chrono::milliseconds(2000);
    CollectivesInFlight in_flight(transport);
    auto ha = in_flight.start(
        a, {std::as_bytes(std::span(in_a)), std::as_writable_bytes(std::span(out_a))}, type, sum,
        options);
    options.epoch = 1;
    auto hb = in_flight.start(
        b, {std::as_bytes(std::span(in_b)), std::as_writable_bytes(std::span(out_b))}, type, sum,
        options);
    try {
      in_flight.wait(*ha);
      in_flight.wait(*hb);
    } catch (const TransportError& e) {
      errors[static_cast<std::size_t>(me)] = e.what();
    }
  });
  // At least the rank that saw the mismatch names it; neither hangs (the world returned).
  const std::string all = errors[0] + " | " + errors[1];
  EXPECT_NE(all.find("bytes"), std::string::npos) << all;
}

TEST(InFlight, AnUnmatchedRunTimesOutNamingWhatItWaitsFor) {
  const Schedule schedule = auto_allreduce(2, 3);
  ThreadWorld world(2, WorldOptions{std::chrono::seconds(10)});
  std::string error;
  bool timed_out = false;
  world.run([&](Transport& transport) {
    if (transport.rank() == 1) return;  // never starts its part
    Execution run(schedule, 0);
    std::vector<std::int64_t> in(3, 1);
    std::vector<std::int64_t> out(3);
    ExecOptions options;
    options.timeout = std::chrono::milliseconds(200);
    const Datatype type = Datatype::int64();
    const ReduceOp sum = ReduceOp::builtin("sum", type);
    CollectivesInFlight in_flight(transport);
    auto h =
        in_flight.start(run, {std::as_bytes(std::span(in)), std::as_writable_bytes(std::span(out))},
                        type, sum, options);
    EXPECT_FALSE(in_flight.test(*h));
    try {
      in_flight.wait(*h);
    } catch (const WaitError& e) {
      error = e.what();
      timed_out = e.timed_out();
      EXPECT_EQ(e.waiting_for(), std::vector<Rank>{1});
    }
    // The failure stays with the run: asking again raises it again.
    EXPECT_THROW(in_flight.test(*h), WaitError);
    EXPECT_TRUE(in_flight.empty());
  });
  EXPECT_TRUE(timed_out) << error;
  EXPECT_NE(error.find("timed out"), std::string::npos) << error;
}

TEST(InFlight, AnExecutionRunsOnceAtATime) {
  const Schedule schedule = auto_allreduce(2, 3);
  ThreadWorld world(2, WorldOptions{std::chrono::seconds(10)});
  world.run([&](Transport& transport) {
    Execution run(schedule, transport.rank());
    std::vector<std::int64_t> in(3, transport.rank() + 1);
    std::vector<std::int64_t> out(3);
    const Datatype type = Datatype::int64();
    const ReduceOp sum = ReduceOp::builtin("sum", type);
    const BufferBinding buffers{std::as_bytes(std::span(in)),
                                std::as_writable_bytes(std::span(out))};
    CollectivesInFlight in_flight(transport);
    auto h = in_flight.start(run, buffers, type, sum, ExecOptions{});
    EXPECT_TRUE(run.running());
    try {
      in_flight.start(run, buffers, type, sum, ExecOptions{std::chrono::seconds(30), 1});
      ADD_FAILURE() << "a second run of a running execution was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("already running"), std::string::npos) << e.what();
    }
    in_flight.wait(*h);
    EXPECT_FALSE(run.running());
    EXPECT_EQ(out, std::vector<std::int64_t>(3, 3));
  });
}

}  // namespace
}  // namespace optcoll::testing
