// SPDX-License-Identifier: Apache-2.0
// File: nonblocking and persistent collectives of the C++ API on threads: every typed form
// against values computed by hand, several in flight at once and completed in any order,
// blocking calls among them, persistent requests started many times with new data, and the
// misuse errors (start twice, start a nonblocking request, mismatched calls across ranks).
#include <atomic>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/exec/wait_error.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// Sum over q < p of f(q).
template <typename F>
std::int64_t sum_over_ranks(Rank p, F f) {
  std::int64_t total = 0;
  for (Rank q = 0; q < p; ++q) total += f(q);
  return total;
}

TEST(Nonblocking, EveryTypedFormMatchesValuesComputedByHand) {
  for (const Rank p : {1, 2, 3, 5, 8}) {
    run_threads(p, [p](Communicator& comm) {
      const Rank me = comm.rank();
      const auto n = static_cast<std::size_t>(p);
      const Rank root = p / 2;
      // Everything started before anything is waited for.
      std::vector<std::int64_t> bcast_buffer(3, me == root ? 77 : 0);
      std::vector<std::int64_t> in(4, me + 1);
      std::vector<std::int64_t> allreduce_out(4), reduce_out(me == root ? 4 : 0), scan_out(4),
          exscan_out(4, -1);
      std::vector<std::int64_t> mine(2, 10 * me);
      std::vector<std::int64_t> gathered(me == root ? 2 * n : 0), all(2 * n);
      std::vector<std::int64_t> source(me == root ? 2 * n : 0);
      std::iota(source.begin(), source.end(), 100);
      std::vector<std::int64_t> part(2);
      std::vector<std::int64_t> block_in(2 * n, me + 1), block_out(2);
      std::vector<std::int64_t> to_all(n), from_all(n);
      for (std::size_t j = 0; j < n; ++j) to_all[j] = 100 * me + static_cast<std::int64_t>(j);
      std::vector<Count> counts(n);
      for (std::size_t r = 0; r < n; ++r) counts[r] = static_cast<Count>(r % 3);
      const Count total = std::accumulate(counts.begin(), counts.end(), Count{0});
      std::vector<std::int64_t> v_mine(
          static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), me);
      std::vector<std::int64_t> v_all(static_cast<std::size_t>(total)),
          v_gathered(me == root ? static_cast<std::size_t>(total) : 0);
      std::vector<std::int64_t> v_source(me == root ? static_cast<std::size_t>(total) : 0);
      std::iota(v_source.begin(), v_source.end(), 1000);
      std::vector<std::int64_t> v_part(v_mine.size());
      std::vector<std::int64_t> rs_in(static_cast<std::size_t>(total), me + 1),
          rs_out(v_mine.size());
      std::vector<Count> matrix(n * n, 1);
      std::vector<std::int64_t> a2av_out(n);

      std::vector<Request> requests;
      requests.push_back(comm.ibcast<std::int64_t>(bcast_buffer, root));
      requests.push_back(comm.iallreduce<std::int64_t>(in, allreduce_out, "sum"));
      requests.push_back(comm.ireduce<std::int64_t>(in, reduce_out, "max", root));
      requests.push_back(comm.iscan<std::int64_t>(in, scan_out, "sum"));
      requests.push_back(comm.iexscan<std::int64_t>(in, exscan_out, "sum"));
      requests.push_back(comm.igather<std::int64_t>(mine, gathered, root));
      requests.push_back(comm.iallgather<std::int64_t>(mine, all));
      requests.push_back(comm.iscatter<std::int64_t>(source, part, root));
      requests.push_back(comm.ireduce_scatter_block<std::int64_t>(block_in, block_out, "sum"));
      requests.push_back(comm.ialltoall<std::int64_t>(to_all, from_all));
      requests.push_back(comm.igatherv<std::int64_t>(v_mine, v_gathered, counts, root));
      requests.push_back(comm.iallgatherv<std::int64_t>(v_mine, v_all, counts));
      requests.push_back(comm.iscatterv<std::int64_t>(v_source, v_part, counts, root));
      requests.push_back(comm.ireduce_scatter<std::int64_t>(rs_in, rs_out, counts, "sum"));
      requests.push_back(comm.ialltoallv<std::int64_t>(to_all, a2av_out, matrix));
      requests.push_back(comm.ibarrier());
      EXPECT_EQ(comm.in_flight() <= requests.size(), true);
      for (const Request& r : requests) EXPECT_FALSE(r.persistent());
      // Completed in reverse order of their start.
      std::reverse(requests.begin(), requests.end());
      wait_all(requests);
      for (const Request& r : requests) EXPECT_FALSE(r.active());
      EXPECT_EQ(comm.in_flight(), 0u);

      EXPECT_EQ(bcast_buffer, std::vector<std::int64_t>(3, 77));
      EXPECT_EQ(allreduce_out, std::vector<std::int64_t>(4, p * (p + 1) / 2));
      if (me == root) {
        EXPECT_EQ(reduce_out, std::vector<std::int64_t>(4, p));
      }
      EXPECT_EQ(scan_out, std::vector<std::int64_t>(4, (me + 1) * (me + 2) / 2));
      if (me > 0) {
        EXPECT_EQ(exscan_out, std::vector<std::int64_t>(4, me * (me + 1) / 2));
      }
      std::vector<std::int64_t> expected_all;
      for (Rank q = 0; q < p; ++q) expected_all.insert(expected_all.end(), 2, 10 * q);
      EXPECT_EQ(all, expected_all);
      if (me == root) {
        EXPECT_EQ(gathered, expected_all);
      }
      EXPECT_EQ(part, (std::vector<std::int64_t>{100 + 2 * me, 101 + 2 * me}));
      EXPECT_EQ(block_out, std::vector<std::int64_t>(2, p * (p + 1) / 2));
      for (std::size_t j = 0; j < n; ++j) {
        EXPECT_EQ(from_all[j], 100 * static_cast<std::int64_t>(j) + me);
        EXPECT_EQ(a2av_out[j], 100 * static_cast<std::int64_t>(j) + me);
      }
      std::vector<std::int64_t> expected_v;
      for (Rank q = 0; q < p; ++q)
        expected_v.insert(expected_v.end(),
                          static_cast<std::size_t>(counts[static_cast<std::size_t>(q)]), q);
      EXPECT_EQ(v_all, expected_v);
      if (me == root) {
        EXPECT_EQ(v_gathered, expected_v);
      }
      const Count before = std::accumulate(counts.begin(), counts.begin() + me, Count{0});
      for (std::size_t i = 0; i < v_part.size(); ++i)
        EXPECT_EQ(v_part[i], 1000 + before + static_cast<Count>(i));
      for (const auto v : rs_out) EXPECT_EQ(v, p * (p + 1) / 2);
    });
  }
}

TEST(Nonblocking, BlockingCallsRunWhileOthersAreInFlight) {
  run_threads(4, [](Communicator& comm) {
    const Rank me = comm.rank();
    std::vector<double> in(1000, me + 1.0), out(1000);
    std::vector<double> in2(10, 2.0 * me), out2(10);
    Request r = comm.iallreduce<double>(in, out, "sum");
    // The same collective and size, blocking, while the first is in flight: a second
    // execution of the same plan.
    comm.allreduce<double>(in2, out2, "sum");
    std::vector<double> in3(1000, 1.0), out3(1000);
    comm.allreduce<double>(in3, out3, "sum");
    EXPECT_EQ(out2, std::vector<double>(10, 12.0));
    EXPECT_EQ(out3, std::vector<double>(1000, 4.0));
    while (!r.test()) {
    }
    EXPECT_EQ(out, std::vector<double>(1000, 10.0));
    EXPECT_FALSE(r.active());
    EXPECT_TRUE(r.test());  // inactive: true at once
    r.wait();
  });
}

TEST(Nonblocking, PersistentRequestsRunManyTimesWithTheBuffersContents) {
  for (const Rank p : {1, 3, 6}) {
    run_threads(p, [p](Communicator& comm) {
      const Rank me = comm.rank();
      std::vector<std::int64_t> in(100), out(100);
      std::vector<std::int64_t> mine(static_cast<std::size_t>(me % 3)), gathered(64);
      Request sum = comm.allreduce_init<std::int64_t>(in, out, "sum");
      // gatherv with each rank's own count: the counts are exchanged once, here.
      const Count total = sum_over_ranks(p, [](Rank q) { return q % 3; });
      std::span<std::int64_t> gathered_span(gathered.data(), static_cast<std::size_t>(total));
      Request gather = comm.gatherv_own_counts_init<std::int64_t>(mine, gathered_span, 0);
      EXPECT_TRUE(sum.persistent());
      EXPECT_FALSE(sum.active());
      EXPECT_NE(sum.plan(), nullptr);
      for (int step = 0; step < 20; ++step) {
        std::fill(in.begin(), in.end(), step * (me + 1));
        std::fill(mine.begin(), mine.end(), 100 * step + me);
        sum.start();
        gather.start();
        EXPECT_TRUE(sum.active());
        gather.wait();
        sum.wait();
        EXPECT_EQ(out, std::vector<std::int64_t>(100, step * p * (p + 1) / 2)) << step;
        if (me == 0) {
          std::size_t at = 0;
          for (Rank q = 0; q < p; ++q) {
            for (Rank i = 0; i < q % 3; ++i) ASSERT_EQ(gathered[at++], 100 * step + q);
          }
        }
      }
    });
  }
}

TEST(Nonblocking, MisuseIsAnErrorThatNamesIt) {
  run_threads(2, [](Communicator& comm) {
    std::vector<std::int32_t> in(4, 1), out(4);
    Request persistent = comm.allreduce_init<std::int32_t>(in, out, "sum");
    persistent.start();
    try {
      persistent.start();
      ADD_FAILURE() << "started twice";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("already in flight"), std::string::npos) << e.what();
    }
    persistent.wait();
    Request once = comm.iallreduce<std::int32_t>(in, out, "sum");
    try {
      once.start();
      ADD_FAILURE() << "a nonblocking request was started again";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("only persistent requests"), std::string::npos)
          << e.what();
    }
    once.wait();
    Request null;
    EXPECT_TRUE(null.test());
    EXPECT_THROW(null.start(), Error);
  });
}

TEST(Nonblocking, ARequestDroppedInFlightStillCompletes) {
  run_threads(3, [](Communicator& comm) {
    std::vector<std::int64_t> in(10, comm.rank()), out(10);
    { Request dropped = comm.iallreduce<std::int64_t>(in, out, "sum"); }
    // The next call advances it; the blocking barrier completes only after it on every rank
    // (same order), and the communicator completes it at the latest when destroyed.
    comm.barrier();
    std::vector<std::int64_t> more(1, 1), total(1);
    comm.allreduce<std::int64_t>(more, total, "sum");
    EXPECT_EQ(total[0], 3);
    EXPECT_EQ(comm.in_flight(), 0u);
    EXPECT_EQ(out, std::vector<std::int64_t>(10, 3));
  });
}

TEST(Nonblocking, MismatchedCallsAcrossRanksFailInsteadOfHanging) {
  CommOptions options;
  options.timeout = std::chrono::milliseconds(1500);
  std::atomic<int> failed{0};
  try {
    run_threads(
        2,
        [&](Communicator& comm) {
          // Rank 0 starts 8 then 16 elements, rank 1 16 then 8.
          const bool first = comm.rank() == 0;
          std::vector<std::int64_t> a_in(first ? 8 : 16, 1), a_out(a_in.size());
          std::vector<std::int64_t> b_in(first ? 16 : 8, 1), b_out(b_in.size());
          try {
            Request a = comm.iallreduce<std::int64_t>(a_in, a_out, "sum");
            Request b = comm.iallreduce<std::int64_t>(b_in, b_out, "sum");
            a.wait();
            b.wait();
          } catch (const TransportError&) {
            ++failed;
          }
        },
        options);
  } catch (const TransportError&) {  // the world may report the abort as well
    ++failed;
  }
  EXPECT_GT(failed.load(), 0);
}

TEST(Nonblocking, FibersRunCollectivesInFlightToo) {
  // More ranks than the machine has CPUs, as fibers: a rank's collectives in flight progress
  // when it calls in, while the others' fibers run.
  ThreadWorld world(9, WorldOptions{std::chrono::seconds(30), RankExecution::kFibers});
  auto cache = std::make_shared<PlanCache>();
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache);
    const Rank me = comm.rank();
    std::vector<std::int32_t> in(300, me), out1(300), out2(300), out3(9);
    std::vector<std::int32_t> one(1, me);
    Request a = comm.iallreduce<std::int32_t>(in, out1, "sum");
    Request b = comm.iallreduce<std::int32_t>(in, out2, "max");
    Request c = comm.iallgather<std::int32_t>(one, out3);
    std::vector<Request> all{c, b, a};
    wait_all(all);
    EXPECT_EQ(out1, std::vector<std::int32_t>(300, 36));
    EXPECT_EQ(out2, std::vector<std::int32_t>(300, 8));
    for (std::int32_t q = 0; q < 9; ++q) EXPECT_EQ(out3[static_cast<std::size_t>(q)], q);
  });
}

// How long ranks 1 and 2 wait for an allreduce that rank 0 started and then left alone for
// `absent` (no optcoll call), with or without a progress thread; the slower of the two.
std::chrono::milliseconds wait_while_rank0_is_away(bool progress_thread,
                                                   std::chrono::milliseconds absent) {
  CommOptions options;
  options.progress_thread = progress_thread;
  options.algorithms["allreduce"] = "ring";  // p steps: every one needs rank 0's interpreter
  ThreadWorld world(3, WorldOptions{std::chrono::seconds(30), RankExecution::kThreads});
  auto cache = std::make_shared<PlanCache>();
  std::atomic<std::int64_t> slowest_ms{0};
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache, options);
    std::vector<std::int64_t> in(3000, comm.rank() + 1), out(3000);
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    Request r = comm.iallreduce<std::int64_t>(in, out, "sum");
    if (comm.rank() == 0) std::this_thread::sleep_for(absent);
    r.wait();
    EXPECT_EQ(out, std::vector<std::int64_t>(3000, 6));
    if (comm.rank() != 0) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      std::int64_t seen = slowest_ms.load();
      while (ms > seen && !slowest_ms.compare_exchange_weak(seen, ms)) {
      }
    }
  });
  return std::chrono::milliseconds(slowest_ms.load());
}

TEST(Nonblocking, AProgressThreadAdvancesCollectivesWhileTheCallerIsAway) {
  const std::chrono::milliseconds absent{400};
  // Without one, rank 0's part waits for its next call: the others wait at least as long.
  EXPECT_GE(wait_while_rank0_is_away(false, absent), absent - std::chrono::milliseconds(5));
  // With one, the collective completes while rank 0 sleeps.
  EXPECT_LT(wait_while_rank0_is_away(true, absent), absent / 2);
}

TEST(Nonblocking, AProgressThreadIsRefusedWhereItCannotWork) {
  CommOptions options;
  options.progress_thread = true;
  ThreadWorld world(2, WorldOptions{std::chrono::seconds(10), RankExecution::kFibers});
  auto cache = std::make_shared<PlanCache>();
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache, options);
    std::vector<std::int32_t> in(2, 1), out(2);
    try {
      Request r = comm.iallreduce<std::int32_t>(in, out, "sum");
      ADD_FAILURE() << "a progress thread was started for fibers";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("progress_thread: the ranks run as fibers"),
                std::string::npos)
          << e.what();
    }
  });
}

}  // namespace
}  // namespace optcoll
