// SPDX-License-Identifier: Apache-2.0
// File: a thread world's ranks as fibers (fibers.h, docs/design.md, "Ranks as fibers"): when auto
// chooses them (more ranks than CPUs, or a run that starts on an oversubscribed node), that the
// ranks share the workers' threads, that a rank blocking its worker does not hold up the ranks
// parked beside it (another worker takes them over), deep stacks, and many ranks on one worker.
// Failures and timeouts as fibers are in world_test.cc (EachExecution) and fault_matrix_test.cc;
// the transport's conformance in transport_test.cc ("fibers").
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sched.h>

#include "optcoll/exec/spin_wait.h"
#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

using std::chrono::milliseconds;

int allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

// Sends `value` to `to` and receives one int from `from` (tag seq), waiting for both.
int pass(Transport& t, Rank to, Rank from, int value, std::int32_t seq) {
  int in = -1;
  const RequestId send =
      t.isend(to, MsgKey{0, seq}, std::as_bytes(std::span<const int>(&value, 1)));
  const RequestId recv =
      t.irecv(from, MsgKey{0, seq}, std::as_writable_bytes(std::span<int>(&in, 1)));
  std::set<RequestId> pending{send, recv};
  while (!pending.empty()) {
    for (const RequestId id : t.wait_some(std::chrono::seconds(20))) pending.erase(id);
  }
  return in;
}

TEST(Fibers, AutoChoosesThemOnlyWhenRanksOutnumberTheCpus) {
  const int cpus = allowed_cpus();
  EXPECT_FALSE(ThreadWorld(cpus).fibers());
  ThreadWorld more(cpus + 1);
  EXPECT_TRUE(more.fibers());
  EXPECT_EQ(more.threads(), cpus);
  EXPECT_EQ(more.describe(),
            std::to_string(cpus + 1) + " ranks as fibers on " + std::to_string(cpus) + " threads");
  // Forced either way, whatever the CPUs; never more workers than ranks.
  EXPECT_FALSE(
      ThreadWorld(cpus + 1, WorldOptions{milliseconds(1000), RankExecution::kThreads}).fibers());
  const ThreadWorld two(2, WorldOptions{milliseconds(1000), RankExecution::kFibers, 5});
  EXPECT_TRUE(two.fibers());
  EXPECT_EQ(two.threads(), 2);
}

// Ring exchange of every rank's value with both neighbours, `rounds` times; returns the sum
// each rank ends with (every run of it: the same).
int ring_sum(ThreadWorld& world, int rounds) {
  std::atomic<int> total{0};
  world.run([&](Transport& t) {
    const Rank p = t.size();
    int value = t.rank() + 1;
    for (int i = 0; i < rounds; ++i) {
      value += pass(t, (t.rank() + 1) % p, (t.rank() + p - 1) % p, value, i) % 7;
    }
    total += value;
  });
  return total.load();
}

// auto with no more ranks than CPUs decides at each run: fibers while the node is
// oversubscribed (here by busy threads of this process, more than the CPUs), threads once
// it is not; the results are the same either way.
TEST(Fibers, AutoRunsAsFibersWhileTheNodeIsOversubscribed) {
  const int cpus = allowed_cpus();
  if (cpus < 2) GTEST_SKIP() << "one CPU: a world of one rank has nothing to switch";
  ThreadWorld world(std::min(cpus, 4), WorldOptions{milliseconds(20000)});
  EXPECT_FALSE(world.fibers());  // before any run: what an idle node gets
  const int idle_sum = ring_sum(world, 50);
  {
    std::atomic<bool> stop{false};
    std::vector<std::jthread> busy;
    for (int i = 0; i <= cpus + 1; ++i) {  // past the one task a big node tolerates
      busy.emplace_back([&stop] {
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
    }
    // /proc/loadavg counts them once they run; the world samples it every kLoadSample.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!node_oversubscribed(std::chrono::steady_clock::now()) &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_TRUE(node_oversubscribed(std::chrono::steady_clock::now()))
        << "busy threads did not show in /proc/loadavg";
    EXPECT_EQ(ring_sum(world, 50), idle_sum);
    EXPECT_TRUE(world.fibers()) << world.describe();
    stop = true;
  }
  // Idle again (unless other programs load the node now: then fibers are right too).
  std::this_thread::sleep_for(milliseconds(50));
  const bool before = node_oversubscribed(std::chrono::steady_clock::now());
  EXPECT_EQ(ring_sum(world, 50), idle_sum);
  const bool after = node_oversubscribed(std::chrono::steady_clock::now());
  if (before == after) {
    EXPECT_EQ(world.fibers(), before) << world.describe();
  }
}

TEST(Fibers, EveryRankRunsOnceOnTheWorkersThreads) {
  ThreadWorld world(7, WorldOptions{milliseconds(20000), RankExecution::kFibers, 2});
  for (int run = 0; run < 50; ++run) {
    std::mutex mutex;
    std::multiset<Rank> ranks;
    std::set<std::thread::id> threads;
    std::vector<int> got(7, -1);
    world.run([&](Transport& t) {
      const Rank me = t.rank();
      // A ring exchange: every rank waits for its left neighbour, so the ranks interleave.
      got[static_cast<std::size_t>(me)] = pass(t, (me + 1) % 7, (me + 6) % 7, me * 10, run);
      const std::lock_guard lock(mutex);
      ranks.insert(me);
      threads.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(ranks, (std::multiset<Rank>{0, 1, 2, 3, 4, 5, 6})) << "run " << run;
    EXPECT_LE(threads.size(), 2u) << "run " << run;
    for (Rank r = 0; r < 7; ++r) {
      EXPECT_EQ(got[static_cast<std::size_t>(r)], ((r + 6) % 7) * 10) << "run " << run;
    }
  }
}

// Rank 0 blocks its worker in a sleep (as a rank computing or in a system call would). The
// other ranks, including those that started on rank 0's worker, pass a token around a ring
// 200 times and finish while rank 0 still sleeps: the other worker took them over.
TEST(Fibers, ABlockedRankDoesNotHoldUpTheRanksBesideIt) {
  constexpr Rank kRanks = 6;
  ThreadWorld world(kRanks, WorldOptions{milliseconds(20000), RankExecution::kFibers, 2});
  std::atomic<bool> sleeper_awake{false};
  std::atomic<int> finished_before_it_woke{0};
  world.run([&](Transport& t) {
    const Rank me = t.rank();
    if (me == 0) {
      std::this_thread::sleep_for(milliseconds(1500));
      sleeper_awake.store(true);
      return;
    }
    int token = me;
    for (int round = 0; round < 200; ++round) {
      // Ring over ranks 1..5.
      const Rank next = me == kRanks - 1 ? 1 : me + 1;
      const Rank prev = me == 1 ? kRanks - 1 : me - 1;
      token = pass(t, next, prev, token + 1, round);
    }
    if (!sleeper_awake.load()) finished_before_it_woke.fetch_add(1);
  });
  EXPECT_EQ(finished_before_it_woke.load(), kRanks - 1);
}

// Each fiber has a stack of its own, deep enough for what a thread would do (here 4 MiB of
// frames), and separate: the ranks' frames interleave without touching each other.
int deep(int depth, int seed, Transport& t) {
  std::array<volatile unsigned char, 4096> frame{};
  for (std::size_t i = 0; i < frame.size(); i += 512) frame[i] = static_cast<unsigned char>(seed);
  if (depth == 0) {
    // At the bottom, wait for every other rank (a zero-byte message from each), so that all
    // ranks are this deep at once.
    const Rank p = t.size();
    std::vector<RequestId> ids;
    for (Rank q = 0; q < p; ++q) {
      if (q == t.rank()) continue;
      ids.push_back(t.isend(q, MsgKey{1, 0}, {}));
      ids.push_back(t.irecv(q, MsgKey{1, 0}, {}));
    }
    std::set<RequestId> pending(ids.begin(), ids.end());
    while (!pending.empty()) {
      for (const RequestId id : t.wait_some(std::chrono::seconds(20))) pending.erase(id);
    }
    return seed;
  }
  const int below = deep(depth - 1, seed, t);
  for (std::size_t i = 0; i < frame.size(); i += 512) {
    if (frame[i] != static_cast<unsigned char>(seed)) return -1;  // another rank wrote here
  }
  return below;
}

TEST(Fibers, EachRankHasADeepStackOfItsOwn) {
  ThreadWorld world(5, WorldOptions{milliseconds(20000), RankExecution::kFibers, 2});
  std::vector<int> got(5, 0);
  world.run([&](Transport& t) {
    got[static_cast<std::size_t>(t.rank())] = deep(1000, 17 + t.rank(), t);
  });
  EXPECT_EQ(got, (std::vector<int>{17, 18, 19, 20, 21}));
}

// Sixty-four ranks on one worker: every message between two of them is a switch on one
// thread, and the world still runs a token 10 times around all of them.
TEST(Fibers, SixtyFourRanksOnOneWorker) {
  constexpr Rank kRanks = 64;
  ThreadWorld world(kRanks, WorldOptions{milliseconds(20000), RankExecution::kFibers, 1});
  EXPECT_EQ(world.threads(), 1);
  std::vector<int> got(kRanks, -1);
  world.run([&](Transport& t) {
    const Rank me = t.rank();
    int token = 0;
    for (int round = 0; round < 10; ++round) {
      token = pass(t, (me + 1) % kRanks, (me + kRanks - 1) % kRanks, token + me, round);
    }
    got[static_cast<std::size_t>(me)] = token;
  });
  // Each round adds the sender's rank to what it received: after 10 rounds rank r holds
  // (r-1) + (r-2) + ... + (r-10) (mod 64 on the ranks), 10 terms.
  for (Rank r = 0; r < kRanks; ++r) {
    int expected = 0;
    for (int k = 1; k <= 10; ++k) expected += (r - k + kRanks * 2) % kRanks;
    EXPECT_EQ(got[static_cast<std::size_t>(r)], expected) << r;
  }
}

}  // namespace
}  // namespace optcoll
