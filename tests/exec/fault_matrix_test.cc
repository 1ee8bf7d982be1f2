// SPDX-License-Identifier: Apache-2.0
// File: the fault matrix of the thread backend, its ranks as threads and as fibers (on as
// many workers as CPUs). For each kind of faulty rank — it throws, it
// exits early (returns without taking part), it stalls (starts three timeouts late), it
// sends a wrong-sized message (a corrupt plan that skipped the well-formedness check) — in several
// algorithms and at several positions (the root, a middle rank, the last rank): the collective
// fails on every rank within the timeout, with one error that names the faulty rank or what the
// others waited for (rank, op, peer); nothing hangs; and the same world then runs the collective
// correctly.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"

namespace optcoll::testing {
namespace {

using std::chrono::milliseconds;

enum class Fault { kThrows, kExitsEarly, kStalls, kWrongSize };

std::string fault_name(Fault f) {
  switch (f) {
    case Fault::kThrows:
      return "throws";
    case Fault::kExitsEarly:
      return "exits_early";
    case Fault::kStalls:
      return "stalls";
    case Fault::kWrongSize:
      return "wrong_size";
  }
  return "?";
}

struct FaultCase {
  std::string algorithm;
  CollectiveSpec spec;
  Fault fault;
  Rank faulty;
  RankExecution execution = RankExecution::kThreads;  // ranks as threads or as fibers
};

std::vector<FaultCase> fault_cases() {
  const std::vector<std::pair<std::string, CollectiveSpec>> problems = {
      {"allreduce/ring", make_spec(CollectiveKind::kAllreduce, 8, 40)},
      {"bcast/binomial", make_spec(CollectiveKind::kBcast, 7, 12, 3)},
      {"gatherv/binomial", make_spec_v(CollectiveKind::kGatherv, 6, {3, 0, 5, 1, 2, 4}, 5)},
      {"alltoall/pairwise", make_spec(CollectiveKind::kAlltoall, 5, 3)},
  };
  std::vector<FaultCase> cases;
  for (const auto& [name, spec] : problems) {
    for (const Fault f : {Fault::kThrows, Fault::kExitsEarly, Fault::kStalls, Fault::kWrongSize}) {
      for (const Rank r : {spec.root, spec.nranks / 2, spec.nranks - 1}) {
        for (const RankExecution e : {RankExecution::kThreads, RankExecution::kFibers}) {
          cases.push_back({name, spec, f, r, e});
        }
      }
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<FaultCase>& info) {
  std::string name = fmt::format(
      "{}_{}_rank{}_{}_{}", info.param.algorithm, fault_name(info.param.fault), info.param.faulty,
      info.param.execution == RankExecution::kFibers ? "fibers" : "threads", info.index);
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name;
}

// The size a send gets to be wrong: one element longer, where that extra element exists (the
// test pads the caller's input and output by one element, but the executor sizes the scratch
// exactly), else one element shorter; 0 when neither is possible (an empty send that ends
// the scratch).
Count wrong_count(const Send& send, const RankProgram& program) {
  if (send.src.buf != Buf::kScratch || send.src.end() < program.scratch_count) {
    return send.src.count + 1;
  }
  return send.src.count > 0 ? send.src.count - 1 : 0;
}

// `s` with the size of rank r's first send that can have a wrong one made wrong (its receive
// still expects the right size); `s` unchanged when r has no such send.
Schedule with_wrong_sized_send(const Schedule& s, Rank r) {
  Schedule edited = s;
  auto& program = edited.ranks[static_cast<std::size_t>(r)];
  for (auto& op : program.ops) {
    auto* send = std::get_if<Send>(&op.action);
    if (send == nullptr) continue;
    const Count count = wrong_count(*send, program);
    if (count != send->src.count) {
      send->src.count = count;  // never beyond rank r's memory
      break;
    }
  }
  return edited;
}

// Whether another rank of `s` cannot finish without rank r taking part: it receives from r,
// or sends r a message too large to be eager (which waits for r's receive). Smaller sends
// complete when posted (ThreadTransport::kEagerBytes), so a rank that only receives them
// may stall or leave without holding anybody up.
bool someone_waits_for(const Schedule& s, Rank r, std::size_t elem_bytes) {
  for (Rank q = 0; q < s.spec.nranks; ++q) {
    if (q == r) continue;
    for (const auto& op : s.ranks[static_cast<std::size_t>(q)].ops) {
      if (peer_of(op.action) != r) continue;
      const auto* send = std::get_if<Send>(&op.action);
      if (send == nullptr) return true;  // a receive from r
      if (static_cast<std::size_t>(send->src.count) * elem_bytes >
          threads::ThreadTransport::kEagerBytes) {
        return true;
      }
    }
  }
  return false;
}

class FaultMatrix : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultMatrix, EveryRankFailsInTimeThenTheWorldWorks) {
  const FaultCase& c = GetParam();
  const Schedule s = algorithms::build(c.algorithm, c.spec);
  const bool wrong_size = c.fault == Fault::kWrongSize;
  const Schedule faulty = wrong_size ? with_wrong_sized_send(s, c.faulty) : s;
  if (wrong_size && faulty == s) GTEST_SKIP() << "this rank has no send that can change size";
  const Rank p = c.spec.nranks;
  const Layout layout(c.spec);
  const Datatype type = Datatype::int32();
  const ReduceOp op = ReduceOp::builtin("sum", type);
  const auto contributions = make_contributions(c.spec, 4, fill_integers<std::int32_t>(9));

  constexpr milliseconds kTimeout{300};
  ThreadWorld& world = shared_world(p, c.execution);
  const auto start = std::chrono::steady_clock::now();
  std::string what;
  ErrorCode code = ErrorCode::kInternal;
  try {
    world.run([&](Transport& t) {
      const Rank me = t.rank();
      const auto i = static_cast<std::size_t>(me);
      if (me == c.faulty && c.fault == Fault::kThrows) throw std::runtime_error("injected fault");
      if (me == c.faulty && c.fault == Fault::kExitsEarly) return;
      if (me == c.faulty && c.fault == Fault::kStalls) std::this_thread::sleep_for(3 * kTimeout);
      // Inputs padded by one element, so a wrong-sized send reads only this rank's memory.
      Bytes input = c.spec.kind == CollectiveKind::kBcast ? Bytes{} : contributions[i];
      input.resize(input.size() + 4);
      Bytes output(static_cast<std::size_t>(layout.output_count(me)) * 4 + 4);
      if (c.spec.kind == CollectiveKind::kBcast && me == c.spec.root) {
        std::copy(contributions[i].begin(), contributions[i].end(), output.begin());
      }
      const std::span<const std::byte> in(input.data(), input.size() - 4);
      const std::span<std::byte> out(output.data(), output.size() - 4);
      ExecOptions options;
      options.timeout = kTimeout;
      options.known_well_formed = me == c.faulty && wrong_size;
      execute(me == c.faulty ? faulty : s, t, {in, out}, type, op, options);
    });
  } catch (const Error& e) {
    what = e.what();
    code = e.code();
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const bool absence_fails = someone_waits_for(s, c.faulty, 4);
  if ((c.fault == Fault::kExitsEarly || c.fault == Fault::kStalls) && !absence_fails) {
    // Nobody needs anything from the absent rank: the others finish, and a stalled rank
    // finds its (eager) messages waiting when it comes.
    EXPECT_TRUE(what.empty()) << what;
  } else {
    ASSERT_FALSE(what.empty()) << "the faulty collective did not fail";
    EXPECT_EQ(code, ErrorCode::kTransport) << what;
    EXPECT_LT(elapsed, kTimeout * 10) << what;
    EXPECT_TRUE(contains(what, "ranks failed")) << what;
    switch (c.fault) {
      case Fault::kThrows:
        EXPECT_TRUE(contains(what, fmt::format("rank {} first: injected fault", c.faulty))) << what;
        break;
      case Fault::kExitsEarly:
      case Fault::kStalls:
        EXPECT_TRUE(contains(what, "timed out")) << what;
        // The peers name the absent rank in the sends and receives they wait on.
        EXPECT_TRUE(contains(what, fmt::format("from rank {} ", c.faulty)) ||
                    contains(what, fmt::format("to rank {} ", c.faulty)))
            << what;
        break;
      case Fault::kWrongSize:
        EXPECT_TRUE(contains(what, "the send has")) << what;
        break;
    }
    // The ranks that waited for the faulty one name what they waited for (when nobody
    // waits for it, the others may have finished before it failed).
    if (absence_fails) {
      EXPECT_TRUE(contains(what, "waiting on: ")) << what;
    }
  }
  // The same world, the same schedule, all ranks healthy: the right result.
  const auto expected = reference_outputs(c.spec, 4, contributions, combine_sum<std::int32_t>());
  const auto outputs = run_schedule(world, s, type, op, contributions);
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(first_difference(outputs[i], expected[i], 4), "") << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, FaultMatrix, ::testing::ValuesIn(fault_cases()), case_name);

}  // namespace
}  // namespace optcoll::testing
