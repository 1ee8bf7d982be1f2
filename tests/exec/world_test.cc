// SPDX-License-Identifier: Apache-2.0
// File: ThreadWorld on its own: one call per rank, many runs on one world, failures
// collected into one exception (the original cause first, its error code kept), fast abort
// of the other ranks, and a usable world after a failure.
#include "optcoll/exec/threads/world.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

using std::chrono::milliseconds;

// The ways a world can run its ranks (world.h), for the tests that hold for each.
const RankExecution kExecutions[] = {RankExecution::kThreads, RankExecution::kFibers};

std::string name_of(RankExecution execution) {
  return execution == RankExecution::kThreads ? "threads" : "fibers";
}

TEST(ThreadWorld, RejectsBadArguments) {
  EXPECT_THROW(ThreadWorld(0), Error);
  EXPECT_THROW(ThreadWorld(2, WorldOptions{milliseconds(0)}), Error);
  EXPECT_THROW(ThreadWorld(2, WorldOptions{milliseconds(10), RankExecution::kFibers, -1}), Error);
}

// docs/errors.md: the constructor's messages.
TEST(ThreadWorld, BadArgumentsAreNamed) {
  const std::pair<WorldOptions, std::string> cases[] = {
      {WorldOptions{milliseconds(-5)}, "thread world timeout must be positive, got -5 ms"},
      {WorldOptions{milliseconds(10), RankExecution::kFibers, -2},
       "a thread world's fiber workers must be 0 (one per CPU) or more, got -2"},
      {WorldOptions{milliseconds(10), RankExecution::kFibers, 1, 4096},
       "a thread world's fiber stacks must have at least 65536 bytes, got 4096"}};
  try {
    ThreadWorld world(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("a thread world needs at least one rank, got 0"),
              std::string::npos)
        << e.what();
  }
  for (const auto& [options, expected] : cases) {
    try {
      ThreadWorld world(2, options);
      FAIL() << expected;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

// docs/errors.md: stacks that cannot be mapped (more than the address space) are a
// TransportError naming the size; as threads the option is not used.
TEST(ThreadWorld, UnmappableFiberStacksAreATransportError) {
  constexpr std::size_t kHuge = std::size_t{1} << 60;
  try {
    ThreadWorld world(3, WorldOptions{milliseconds(10), RankExecution::kFibers, 1, kHuge});
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot map a fiber stack of " + std::to_string(kHuge) +
                                         " bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(
      ThreadWorld(3, WorldOptions{milliseconds(10), RankExecution::kThreads, 1, kHuge}));
}

// docs/errors.md: a peer outside the world is a TransportError naming both ranks.
TEST(ThreadWorld, PeerOutOfRangeIsATransportError) {
  ThreadWorld world(2);
  try {
    world.run([](Transport& t) {
      std::byte none[1];
      if (t.rank() == 1) t.isend(5, MsgKey{0, 0}, std::span<const std::byte>(none, 0));
    });
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: cannot send to rank 5 (world of 2 ranks)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ThreadWorld, RunsOnceOnEveryRankAndIsReusable) {
  ThreadWorld world(7, WorldOptions{milliseconds(1234), RankExecution::kThreads});
  EXPECT_FALSE(world.fibers());
  EXPECT_EQ(world.threads(), 7);
  EXPECT_EQ(world.describe(), "7 threads");
  EXPECT_EQ(world.size(), 7);
  EXPECT_EQ(world.options().timeout, milliseconds(1234));
  for (int run = 0; run < 50; ++run) {
    std::mutex mutex;
    std::multiset<Rank> ranks;
    std::set<std::thread::id> threads;
    std::thread::id rank0_thread;
    world.run([&](Transport& t) {
      EXPECT_EQ(t.size(), 7);
      const std::lock_guard lock(mutex);
      ranks.insert(t.rank());
      threads.insert(std::this_thread::get_id());
      if (t.rank() == 0) rank0_thread = std::this_thread::get_id();
    });
    EXPECT_EQ(ranks, (std::multiset<Rank>{0, 1, 2, 3, 4, 5, 6})) << "run " << run;
    EXPECT_EQ(threads.size(), 7u);  // one thread per rank; rank 0 is the caller
    EXPECT_EQ(rank0_thread, std::this_thread::get_id());
  }
}

TEST(ThreadWorld, SixtyFourRanks) {
  for (const RankExecution execution : kExecutions) {
    ThreadWorld world(64, WorldOptions{milliseconds(30000), execution});
    std::atomic<int> calls{0};
    for (int run = 0; run < 5; ++run) world.run([&](Transport&) { calls.fetch_add(1); });
    EXPECT_EQ(calls.load(), 5 * 64) << name_of(execution);
  }
}

// A rank that throws wakes the ranks blocked in wait_some at once (long before the
// timeout); the exception names it first and lists the others; the code of the original
// error is kept.
class EachExecution : public ::testing::TestWithParam<RankExecution> {};

TEST_P(EachExecution, ThrowingRankAbortsTheOthersFast) {
  ThreadWorld world(4, WorldOptions{std::chrono::seconds(20), GetParam()});
  const auto start = std::chrono::steady_clock::now();
  try {
    world.run([](Transport& t) {
      if (t.rank() == 2) {
        std::this_thread::sleep_for(milliseconds(20));  // let the others block first
        throw Error(ErrorCode::kInvalidArgument, "injected failure");
      }
      std::byte none[1];
      t.irecv((t.rank() + 1) % 4, MsgKey{0, 0}, std::span<std::byte>(none, 0));
      t.wait_some(std::chrono::seconds(20));
      ADD_FAILURE() << "rank " << t.rank() << " should have been aborted";
    });
    FAIL() << "run() must throw";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << what;
    EXPECT_NE(what.find("4 of 4 ranks failed; rank 2 first: injected failure"), std::string::npos)
        << what;
    for (const Rank r : {0, 1, 3}) {
      EXPECT_NE(what.find("rank " + std::to_string(r) + " aborted: rank 2 failed: injected"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The world works again, with fresh mailboxes (the stale receives above are gone).
  std::vector<int> got(4, -1);
  world.run([&](Transport& t) {
    const Rank me = t.rank();
    int value = me * 10;
    int in = -1;
    const auto send =
        t.isend((me + 1) % 4, MsgKey{0, 0}, std::as_bytes(std::span<const int>(&value, 1)));
    const auto recv =
        t.irecv((me + 3) % 4, MsgKey{0, 0}, std::as_writable_bytes(std::span<int>(&in, 1)));
    std::set<RequestId> pending{send, recv};
    while (!pending.empty()) {
      for (const auto id : t.wait_some(std::chrono::seconds(20))) pending.erase(id);
    }
    got[static_cast<std::size_t>(me)] = in;
  });
  EXPECT_EQ(got, (std::vector<int>{30, 0, 10, 20}));
}

TEST_P(EachExecution, ForeignExceptionsBecomeTransportErrors) {
  ThreadWorld world(2, WorldOptions{milliseconds(30000), GetParam()});
  try {
    world.run([](Transport& t) {
      if (t.rank() == 1) throw std::runtime_error("plain failure");
    });
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 2 ranks failed; rank 1 first: plain failure"),
              std::string::npos)
        << e.what();
  }
}

// The world's own timeout stops a rank that waits too long, even when the caller passes a
// longer timeout to wait_some, and then every other rank.
TEST_P(EachExecution, WorldTimeoutStopsWaitingRanks) {
  ThreadWorld world(3, WorldOptions{milliseconds(150), GetParam()});
  const auto start = std::chrono::steady_clock::now();
  try {
    world.run([](Transport& t) {
      std::byte none[1];
      t.irecv((t.rank() + 1) % 3, MsgKey{0, 0}, std::span<std::byte>(none, 0));
      t.wait_some(std::chrono::seconds(30));
    });
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out: no progress for"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("3 of 3 ranks failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(the thread world's timeout)"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// A timeout never fires early, however the wait computes its deadline (a fiber's deadline
// from the kernel's coarse clock fired a 40 ms timeout after 39.4 ms on a loaded VM).
TEST_P(EachExecution, WorldTimeoutIsNeverEarly) {
  constexpr milliseconds kTimeout{40};
  ThreadWorld world(2, WorldOptions{kTimeout, GetParam()});
  for (int round = 0; round < 5; ++round) {
    std::vector<std::chrono::steady_clock::duration> waited(2);
    EXPECT_THROW(world.run([&](Transport& t) {
      std::byte none[1];
      t.irecv(1 - t.rank(), MsgKey{0, 0}, std::span<std::byte>(none, 0));
      const auto start = std::chrono::steady_clock::now();
      try {
        t.wait_some(std::chrono::seconds(30));
      } catch (...) {
        waited[static_cast<std::size_t>(t.rank())] = std::chrono::steady_clock::now() - start;
        throw;
      }
    }),
                 TransportError);
    // The rank that timed out first waited the whole timeout; the other may be stopped by it.
    EXPECT_GE(std::max(waited[0], waited[1]), kTimeout) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, EachExecution, ::testing::ValuesIn(kExecutions),
                         [](const ::testing::TestParamInfo<RankExecution>& param_info) {
                           return name_of(param_info.param);
                         });

}  // namespace
}  // namespace optcoll
