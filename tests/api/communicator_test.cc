// SPDX-License-Identifier: Apache-2.0
// File: the C++ API end to end on threads: every typed call against values computed by
// hand, plan caching, algorithm overrides, and argument errors.
#include "optcoll/api/communicator.h"

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <numeric>
#include <thread>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/reference.h"
#include "optcoll/api/threads_check.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

TEST(Communicator, AllreduceSumsRankValues) {
  for (const Rank p : {1, 3, 8}) {
    run_threads(p, [p](Communicator& comm) {
      std::vector<double> in(1000, comm.rank() + 1.0);
      std::vector<double> out(1000, -1);
      comm.allreduce<double>(in, out, "sum");
      for (const double v : out) ASSERT_EQ(v, p * (p + 1) / 2.0);
      std::vector<std::int64_t> iin(7, comm.rank());
      std::vector<std::int64_t> iout(7);
      comm.allreduce<std::int64_t>(iin, iout, "max");
      for (const auto v : iout) ASSERT_EQ(v, p - 1);
    });
  }
}

TEST(Communicator, ScanAndExscanArePrefixSums) {
  for (const Rank p : {1, 2, 5, 8}) {
    for (const std::string algorithm : {"auto", "linear", "recursive_doubling"}) {
      CommOptions options;
      if (algorithm != "auto") {
        options.algorithms["scan"] = algorithm;
        options.algorithms["exscan"] = algorithm;
      }
      run_threads(
          p,
          [p](Communicator& comm) {
            const std::int64_t me = comm.rank();
            std::vector<std::int64_t> in(50);
            for (std::size_t i = 0; i < in.size(); ++i)
              in[i] = (me + 1) * 1000 + static_cast<std::int64_t>(i);
            // Rank r: sum over q <= r of (q+1)*1000 + i = 1000(r+1)(r+2)/2 + (r+1)i.
            std::vector<std::int64_t> out(50, -1);
            comm.scan<std::int64_t>(in, out, "sum");
            for (std::size_t i = 0; i < out.size(); ++i) {
              ASSERT_EQ(out[i],
                        1000 * (me + 1) * (me + 2) / 2 + (me + 1) * static_cast<std::int64_t>(i));
            }
            // Exscan: the same over q < r; rank 0's buffer is left as it was.
            std::vector<std::int64_t> ex(50, -1);
            comm.exscan<std::int64_t>(in, ex, "sum");
            for (std::size_t i = 0; i < ex.size(); ++i) {
              ASSERT_EQ(ex[i], me == 0
                                   ? -1
                                   : 1000 * me * (me + 1) / 2 + me * static_cast<std::int64_t>(i));
            }
            std::vector<std::int32_t> max_in(3, static_cast<std::int32_t>((me * 7) % p));
            std::vector<std::int32_t> max_out(3);
            comm.scan<std::int32_t>(max_in, max_out, "max");
            std::int32_t expected = 0;
            for (std::int64_t q = 0; q <= me; ++q)
              expected = std::max(expected, static_cast<std::int32_t>((q * 7) % p));
            EXPECT_EQ(max_out, std::vector<std::int32_t>(3, expected));
            // MPI lets rank 0 pass any receive buffer to exscan; an empty one is fine.
            std::vector<std::int32_t> none(me == 0 ? 0 : 3);
            comm.exscan<std::int32_t>(max_in, none, "max");
          },
          options);
    }
  }
}

TEST(Communicator, ScanKeepsRankOrderForNonCommutativeOperators) {
  // 2x2 int64 matrices (api/reference.h's matmul2): rank r's scan result must be the product
  // M0 M1 ... Mr in that order, its exscan result M0 ... M(r-1); computed here by hand.
  using Mat = std::array<std::int64_t, 4>;  // row-major
  auto multiply = [](const Mat& a, const Mat& b) {
    return Mat{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
               a[2] * b[1] + a[3] * b[3]};
  };
  auto matrix = [](Rank r) { return r % 2 == 0 ? Mat{1, r + 1, 0, 1} : Mat{1, 0, r, 1}; };
  const Datatype type = matrix_2x2_type(Datatype::int64());
  const ReduceOp op = matrix_2x2_product(Datatype::int64());
  for (const Rank p : {3, 6, 11}) {
    for (const std::string algorithm : {"linear", "recursive_doubling"}) {
      CommOptions options;
      options.algorithms["scan"] = algorithm;
      options.algorithms["exscan"] = algorithm;
      run_threads(
          p,
          [&](Communicator& comm) {
            const Rank me = comm.rank();
            const Mat mine = matrix(me);
            Mat before{1, 0, 0, 1};  // M0 ... M(me-1)
            for (Rank q = 0; q < me; ++q) before = multiply(before, matrix(q));
            for (const auto kind : {CollectiveKind::kScan, CollectiveKind::kExscan}) {
              CollectiveSpec spec;
              spec.kind = kind;
              spec.nranks = p;
              spec.count = 1;
              spec.commutative = false;
              spec.elem_bytes = type.bytes;
              const bool has_output = kind == CollectiveKind::kScan || me > 0;
              Mat out{-1, -1, -1, -1};
              const auto chosen = comm.run(
                  spec,
                  {std::as_bytes(std::span<const std::int64_t>(mine)),
                   std::as_writable_bytes(std::span<std::int64_t>(out).first(has_output ? 4 : 0))},
                  type, op);
              EXPECT_EQ(chosen->algorithm, std::string(collective_name(kind)) + "/" + algorithm);
              const Mat expected = kind == CollectiveKind::kScan ? multiply(before, mine)
                                   : has_output                  ? before
                                                                 : Mat{-1, -1, -1, -1};
              EXPECT_EQ(out, expected)
                  << collective_name(kind) << " " << algorithm << " rank " << me;
            }
          },
          options);
    }
  }
}

TEST(Communicator, RootedCalls) {
  const Rank p = 5;
  run_threads(p, [](Communicator& comm) {
    const Rank me = comm.rank();
    std::vector<std::int32_t> message(4, me == 3 ? 42 : 0);
    comm.bcast<std::int32_t>(message, 3);
    EXPECT_EQ(message, std::vector<std::int32_t>(4, 42));

    std::vector<std::int32_t> mine(2, me);
    std::vector<std::int32_t> all(me == 1 ? 10 : 0);
    comm.gather<std::int32_t>(mine, all, 1);
    if (me == 1) {
      EXPECT_EQ(all, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}));
    }

    std::vector<std::int32_t> source(me == 0 ? 10 : 0);
    std::iota(source.begin(), source.end(), 100);
    std::vector<std::int32_t> part(2);
    comm.scatter<std::int32_t>(source, part, 0);
    EXPECT_EQ(part, (std::vector<std::int32_t>{100 + 2 * me, 101 + 2 * me}));

    std::vector<std::int32_t> reduced(me == 4 ? 3 : 0);
    std::vector<std::int32_t> contribution(3, me + 1);
    comm.reduce<std::int32_t>(contribution, reduced, "prod", 4);
    if (me == 4) {
      EXPECT_EQ(reduced, std::vector<std::int32_t>(3, 120));
    }
  });
}

TEST(Communicator, IrregularCalls) {
  const Rank p = 4;
  const std::vector<Count> counts{2, 0, 3, 1};
  run_threads(p, [&](Communicator& comm) {
    const Rank me = comm.rank();
    std::vector<double> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]),
                             me * 10.0);
    std::vector<double> all(6);
    comm.allgatherv<double>(mine, all, counts);
    EXPECT_EQ(all, (std::vector<double>{0, 0, 20, 20, 20, 30}));

    std::vector<double> gathered(me == 2 ? 6 : 0);
    comm.gatherv<double>(mine, gathered, counts, 2);
    if (me == 2) {
      EXPECT_EQ(gathered, all);
    }

    std::vector<std::int64_t> vec(6, me + 1);
    std::vector<std::int64_t> block(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]));
    comm.reduce_scatter<std::int64_t>(vec, block, counts, "sum");
    for (const auto v : block) EXPECT_EQ(v, 10);

    // alltoallv: rank i sends i+1 elements of value 100*i + j to every rank j.
    std::vector<Count> matrix(16);
    for (Rank i = 0; i < p; ++i) {
      for (Rank j = 0; j < p; ++j) matrix[static_cast<std::size_t>(i * p + j)] = i + 1;
    }
    std::vector<std::int32_t> out_data;
    for (Rank j = 0; j < p; ++j)
      out_data.insert(out_data.end(), static_cast<std::size_t>(me + 1), 100 * me + j);
    std::vector<std::int32_t> received(10);
    comm.alltoallv<std::int32_t>(out_data, received, matrix);
    std::vector<std::int32_t> expected;
    for (Rank i = 0; i < p; ++i)
      expected.insert(expected.end(), static_cast<std::size_t>(i + 1), 100 * i + me);
    EXPECT_EQ(received, expected);
    comm.barrier();
  });
}

// A cache shared by a world's ranks plans with the threads it is given (PlanOptions::workers:
// the same plans, made faster where the processors are); none is refused.
TEST(Communicator, ACachePlansWithItsWorkers) {
  try {
    PlanCache none(0);
    FAIL() << "a cache with 0 planning workers";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "PlanCache: 0 planning workers (at least 1)");
  }
  const auto spec = make_spec(CollectiveKind::kAllreduce, 6, 3000);
  const CostModel model = thread_node_model(2);
  PlanCache one(1);
  PlanCache four(4);
  const auto a = one.get(spec, model, "auto");
  const auto b = four.get(spec, model, "auto");
  EXPECT_EQ(a->algorithm, b->algorithm);
  EXPECT_EQ(a->predicted_time, b->predicted_time);
  EXPECT_EQ(four.get(spec, model, "auto"), b);  // cached
  EXPECT_EQ(four.size(), 1u);
}

// A cache holds at most its limits' plans: past them the least recently used go, a plan a
// caller still holds stays alive, and one that comes back is planned again. Call shapes that
// differ only in their counts are different plans.
TEST(Communicator, ACacheHoldsItsLimitsLeastRecentlyUsedOut) {
  const CostModel model = reference_cluster_model();
  const auto shape = [](Count count) { return make_spec(CollectiveKind::kAllreduce, 5, count); };
  const auto weight = [](const Plan& p) {
    return p.schedule.op_count() + p.schedule.spec.counts.size();
  };
  PlanCache cache(1, {.plans = 3, .weight = std::size_t{1} << 30});
  const auto a = cache.get(shape(100), model, "auto");
  const auto b = cache.get(shape(200), model, "auto");
  const auto c = cache.get(shape(300), model, "auto");
  EXPECT_EQ(cache.get(shape(100), model, "auto"), a);   // a is now the most recently used
  const auto d = cache.get(shape(400), model, "auto");  // b goes
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.made(), 4u);
  EXPECT_EQ(cache.get(shape(100), model, "auto"), a);
  EXPECT_EQ(cache.get(shape(300), model, "auto"), c);
  const auto b_again = cache.get(shape(200), model, "auto");  // planned again; d goes
  EXPECT_NE(b_again, b);
  EXPECT_EQ(b->schedule.spec.count, 200);  // the evicted plan its caller holds is intact
  EXPECT_EQ(b_again->algorithm, b->algorithm);
  EXPECT_EQ(cache.made(), 5u);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.weight(), weight(*a) + weight(*c) + weight(*b_again));
  EXPECT_NE(cache.get(shape(400), model, "auto"), d);  // d was the least recently used
  EXPECT_EQ(cache.made(), 6u);

  // alltoallv shapes that differ in one count only.
  const CollectiveSpec v = make_spec_v(CollectiveKind::kAlltoallv, 4, std::vector<Count>(16, 3));
  CollectiveSpec w = v;
  w.counts[7] = 4;
  PlanCache counts;
  const auto pv = counts.get(v, model, "auto");
  const auto pw = counts.get(w, model, "auto");
  EXPECT_NE(pv, pw);
  EXPECT_EQ(pw->schedule.spec.counts[7], 4);
  EXPECT_EQ(counts.get(v, model, "auto"), pv);
  EXPECT_EQ(counts.size(), 2u);
}

// A plan heavier than the cache's whole weight is kept alone, until the next one; a limit
// of 0 is refused.
TEST(Communicator, ACacheKeepsItsNewestPlanHoweverHeavy) {
  const CostModel model = reference_cluster_model();
  PlanCache cache(1, {.plans = 100, .weight = 1});
  const auto a = cache.get(make_spec(CollectiveKind::kAlltoall, 6, 10), model, "auto");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.weight(), a->schedule.op_count());
  EXPECT_GT(cache.weight(), 1u);
  EXPECT_EQ(cache.get(make_spec(CollectiveKind::kAlltoall, 6, 10), model, "auto"), a);
  const auto b = cache.get(make_spec(CollectiveKind::kAlltoall, 6, 11), model, "auto");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.weight(), b->schedule.op_count());
  EXPECT_NE(cache.get(make_spec(CollectiveKind::kAlltoall, 6, 10), model, "auto"), a);
  for (const PlanCacheLimits limits : {PlanCacheLimits{.plans = 0}, PlanCacheLimits{.weight = 0}}) {
    try {
      PlanCache refused(1, limits);
      FAIL() << "a cache with a limit of 0";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("(each at least 1)"), std::string::npos) << e.what();
    }
  }
}

// A plan for a process that runs one rank (an MPI process) keeps that rank's program only,
// the same program as the whole plan's; it is cached apart from the whole plan and from
// other ranks' plans, and a rank out of range is refused.
TEST(Communicator, APlanForOneRankKeepsOnlyItsProgram) {
  const auto spec = make_spec(CollectiveKind::kAlltoall, 7, 40);
  const CostModel model = reference_cluster_model();
  PlanCache cache;
  const auto whole = cache.get(spec, model, "auto");
  const auto mine = cache.get(spec, model, "auto", nullptr, {}, 3);
  ASSERT_NE(whole, mine);
  EXPECT_FALSE(whole->only_rank.has_value());
  ASSERT_EQ(mine->only_rank, std::optional<Rank>(3));
  EXPECT_EQ(mine->algorithm, whole->algorithm);
  EXPECT_EQ(mine->predicted_time, whole->predicted_time);
  ASSERT_EQ(mine->schedule.ranks.size(), 7u);
  for (std::size_t r = 0; r < 7; ++r) {
    EXPECT_FALSE(whole->schedule.ranks[r].ops.empty()) << "rank " << r;
    if (r == 3) {
      EXPECT_EQ(mine->schedule.ranks[r], whole->schedule.ranks[r]);
    } else {
      EXPECT_TRUE(mine->schedule.ranks[r].ops.empty()) << "rank " << r;
    }
  }
  EXPECT_EQ(cache.get(spec, model, "auto", nullptr, {}, 3), mine);  // cached
  const auto other = cache.get(spec, model, "auto", nullptr, {}, 4);
  EXPECT_NE(other, mine);
  EXPECT_EQ(other->schedule.ranks[4], whole->schedule.ranks[4]);
  EXPECT_EQ(cache.get(spec, model, "auto"), whole);
  EXPECT_EQ(cache.size(), 3u);
  try {
    cache.get(spec, model, "auto", nullptr, {}, 7);
    FAIL() << "a plan for rank 7 of 7";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "PlanCache: a plan for rank 7 of a 7-rank call");
  }
  EXPECT_EQ(cache.size(), 3u);
}

TEST(Communicator, PlansAreCachedAndOverridesHonoured) {
  CommOptions options;
  options.algorithms["allreduce"] = "allreduce/linear";
  auto cache = std::make_shared<PlanCache>();
  std::atomic<int> linear{0};
  ThreadWorld world(4);
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache, options);
    std::vector<float> in(16, 1), out(16);
    for (int i = 0; i < 5; ++i) {
      const auto chosen = comm.run(
          [&] {
            CollectiveSpec s;
            s.kind = CollectiveKind::kAllreduce;
            s.nranks = 4;
            s.count = 16;
            return s;
          }(),
          {std::as_bytes(std::span<const float>(in)),
           std::as_writable_bytes(std::span<float>(out))},
          Datatype::float32(), ReduceOp::builtin("sum", Datatype::float32()));
      if (chosen->algorithm == "allreduce/linear") ++linear;
      for (const float v : out) ASSERT_EQ(v, 4.0f);
    }
  });
  EXPECT_EQ(linear.load(), 20);
  EXPECT_EQ(cache->size(), 1u);
}

// Repeated calls run their prepared plan on whatever buffers they are given; more distinct
// calls than the communicator keeps prepared evict the least recently used, and an evicted
// call is prepared again when it comes back. Every result is checked.
TEST(Communicator, PreparedCallsAreReusedAndEvictedLeastRecentlyUsed) {
  constexpr std::size_t kDistinct = Communicator::kPreparedCalls + 3;
  std::atomic<int> wrong{0};
  std::vector<std::size_t> held(3, 0);
  run_threads(3, [&](Communicator& comm) {
    for (int pass = 0; pass < 3; ++pass) {
      for (std::size_t c = 1; c <= kDistinct; ++c) {
        // Fresh buffers for every call: nothing may stick to the previous call's memory.
        std::vector<std::int64_t> in(c, comm.rank() + 10 * pass);
        std::vector<std::int64_t> out(c, -1);
        comm.allreduce<std::int64_t>(in, out, "sum");
        for (const auto v : out) {
          if (v != 3 + 30 * pass) ++wrong;
        }
        // The most recent call again, at once: the prepared one.
        std::vector<std::int64_t> again(c, -1);
        comm.allreduce<std::int64_t>(in, again, "sum");
        if (again != out) ++wrong;
      }
    }
    held[static_cast<std::size_t>(comm.rank())] = comm.prepared_calls();
  });
  EXPECT_EQ(wrong.load(), 0);
  for (const auto h : held) EXPECT_EQ(h, Communicator::kPreparedCalls);
}

// prepare (for callers with bare addresses, such as the C API) gives each rank's input and
// output elements as the collective's layout has them, for rooted, irregular and all-to-all
// calls, and under an algorithm override; a spec the communicator cannot run is refused as
// run() refuses it. run(prepared) runs the call prepare made, with no new one; a Prepared used
// after another call moved its prepared call is refused, not run with another call's plan.
TEST(Communicator, PrepareFollowsTheLayout) {
  constexpr Rank kRanks = 4;
  std::vector<CollectiveSpec> specs = {
      make_spec(CollectiveKind::kBcast, kRanks, 5, 2),
      make_spec(CollectiveKind::kReduce, kRanks, 3, 1),
      make_spec(CollectiveKind::kGather, kRanks, 2, 3),
      make_spec(CollectiveKind::kScatter, kRanks, 6, 0),
      make_spec(CollectiveKind::kAllgather, kRanks, 4),
      make_spec(CollectiveKind::kAlltoall, kRanks, 2),
      make_spec_v(CollectiveKind::kGatherv, kRanks, {3, 0, 7, 1}, 2),
      make_spec_v(CollectiveKind::kScatterv, kRanks, {0, 4, 0, 2}, 1),
      make_spec_v(CollectiveKind::kAlltoallv, kRanks,
                  {0, 1, 2, 3, 1, 0, 0, 2, 5, 0, 0, 0, 1, 1, 1, 1}),
  };
  for (auto& spec : specs) spec.elem_bytes = 8;
  std::atomic<int> wrong{0};
  std::atomic<int> refused{0};
  std::atomic<int> stale{0};
  run_threads(kRanks, [&](Communicator& comm) {
    const Rank me = comm.rank();
    for (const CollectiveSpec& spec : specs) {
      const Layout layout(spec);
      const auto counts = comm.prepare(spec);
      if (counts.input_count() != layout.input_count(me) ||
          counts.output_count() != layout.output_count(me)) {
        ++wrong;
      }
    }
    const auto forced = comm.prepare(specs[6], "gatherv/linear");
    const Layout gatherv(specs[6]);
    if (forced.input_count() != gatherv.input_count(me) ||
        forced.output_count() != gatherv.output_count(me)) {
      ++wrong;
    }
    const std::size_t prepared = comm.prepared_calls();
    std::vector<double> in(static_cast<std::size_t>(forced.input_count()), me + 1.0);
    std::vector<double> out(static_cast<std::size_t>(forced.output_count()), 0.0);
    const BufferBinding buffers{std::as_bytes(std::span<const double>(in)),
                                std::as_writable_bytes(std::span<double>(out))};
    const auto& plan = comm.run(forced, buffers, Datatype::float64(), detail::no_op());
    if (plan->algorithm != "gatherv/linear") ++wrong;
    if (comm.prepared_calls() != prepared) ++wrong;  // no new prepared call
    if (me == specs[6].root) {  // gatherv: rank q's block of q + 1.0 in rank order
      std::vector<double> expected;
      for (Rank q = 0; q < kRanks; ++q) {
        expected.insert(expected.end(), static_cast<std::size_t>(specs[6].counts[q]), q + 1.0);
      }
      if (out != expected) ++wrong;
    }
    const auto earlier = comm.prepare(specs[0]);
    comm.prepare(specs[1]);  // moves specs[0]'s call out of the place `earlier` refers to
    try {
      comm.run(earlier, buffers, Datatype::float64(), detail::no_op());
    } catch (const InternalError& e) {
      if (std::string(e.what()).find("used after another call") != std::string::npos) ++stale;
    }
    try {
      comm.prepare(make_spec(CollectiveKind::kAllreduce, kRanks + 1, 4));
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kInvalidArgument &&
          std::string(e.what()).find("is for 5 ranks but the communicator has 4") !=
              std::string::npos) {
        ++refused;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(stale.load(), kRanks);
  EXPECT_EQ(refused.load(), kRanks);
}

TEST(Communicator, WrongBuffersAreInvalidArguments) {
  EXPECT_THROW(run_threads(2,
                           [](Communicator& comm) {
                             std::vector<double> in(10), out(9);
                             comm.allreduce<double>(in, out, "sum");
                           }),
               Error);
  EXPECT_THROW(run_threads(2,
                           [](Communicator& comm) {
                             std::vector<double> in(4), out(4);
                             comm.allreduce<double>(in, out, "average");
                           }),
               Error);
  EXPECT_THROW(run_threads(3,
                           [](Communicator& comm) {
                             std::vector<double> in(2), out(6);
                             const std::vector<Count> counts{2, 2};  // one short
                             comm.allgatherv<double>(in, out, counts);
                           }),
               Error);
}

// docs/errors.md: run_checked_on_threads (optcoll run, demo) checks its arguments first.
TEST(RunCheckedOnThreads, ArgumentErrorsNameTheProblem) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 2, 4);
  spec.elem_bytes = 8;
  const Schedule eight = algorithms::build("allreduce/ring", spec);
  spec.elem_bytes = 16;  // a 2x2 matrix of int32
  const Schedule commutative = algorithms::build("allreduce/ring", spec);
  struct Case {
    const Schedule* schedule;
    const char* op;
    int iterations;
    const char* fragment;
  };
  const Case cases[] = {
      {&eight, "sum", 0, "iterations must be at least 1, got 0"},
      {&eight, "sum", 1, "the schedule was planned for 8-byte elements but int32 elements have 4"},
      {&commutative, "matmul2", 1, "is not commutative but the schedule assumes it is"},
  };
  ThreadWorld three(3);
  EXPECT_THROW(three.run([&](Transport& t) {
    run_checked(t, eight, Datatype::float64(), "sum", CheckedRunOptions{});
  }),
               Error);  // the schedule has 2 ranks but the transport 3
  try {
    run_checked_on_threads(eight, Datatype::float64(), "sum", CheckedRunOptions{1, 0});
    FAIL() << "rounds 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rounds must be at least 1, got 0"), std::string::npos);
  }
  for (const Case& c : cases) {
    try {
      run_checked_on_threads(*c.schedule, Datatype::int32(), c.op,
                             CheckedRunOptions{c.iterations, 5, std::chrono::seconds(20)});
      FAIL() << c.fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
    }
  }
}

// A checked run makes every rank's input and reference output once, before any rank starts.
// When each rank made them all (the reference needs every input), the ranks waited for each
// other's p-fold work: on 82 ranks as fibers on 2 cores, 1.3 MB per rank, every rank failed
// with a progress timeout naming an innocent peer (30 s; 9 GB of data). Now the run takes
// under a second here; 5 s leaves room for a loaded machine. Not in the sanitizer builds,
// where the data alone take seconds to make.
TEST(RunCheckedOnThreads, ManyRanksWithLargeBlocksDoNotWaitForEachOthersData) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << "release build only (data of 110 MB)";
  CollectiveSpec spec = make_spec(CollectiveKind::kReduceScatterBlock, 82, 4096);
  spec.elem_bytes = 4;
  const Schedule s = algorithms::build("reduce_scatter_block/recursive_halving", spec);
  const CheckedRun run = run_checked_on_threads(s, Datatype::float32(), "sum",
                                                CheckedRunOptions{1, 1, std::chrono::seconds(5)});
  EXPECT_TRUE(run.correct) << (run.mismatches.empty() ? "" : run.mismatches.front());
}

// Runs fn on 2 ranks and returns the message of the Error it throws ("" when none).
std::string error_of(const std::function<void(Communicator&)>& fn, ErrorCode code) {
  try {
    run_threads(2, fn);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// docs/errors.md: Communicator::run's own checks, before planning or any message.
TEST(Communicator, RunChecksTheSpecAgainstTheCommunicatorAndOperator) {
  const std::string ranks = error_of(
      [](Communicator& comm) {
        std::vector<double> in(4), out(4);
        comm.run(make_spec(CollectiveKind::kAllreduce, 3, 4),
                 {std::as_bytes(std::span<const double>(in)),
                  std::as_writable_bytes(std::span<double>(out))},
                 Datatype::float64(), ReduceOp::builtin("sum", Datatype::float64()));
      },
      ErrorCode::kInvalidArgument);
  EXPECT_NE(ranks.find("is for 3 ranks but the communicator has 2"), std::string::npos) << ranks;
  const std::string order = error_of(
      [](Communicator& comm) {
        std::vector<double> in(4), out(4);
        const ReduceOp first = ReduceOp::user(
            "first", false, [](const std::byte*, const std::byte*, std::byte*, Count) {});
        comm.run(make_spec(CollectiveKind::kAllreduce, 2, 4),
                 {std::as_bytes(std::span<const double>(in)),
                  std::as_writable_bytes(std::span<double>(out))},
                 Datatype::float64(), first);
      },
      ErrorCode::kInvalidArgument);
  EXPECT_NE(order.find("operator first is not commutative but the spec says it is"),
            std::string::npos)
      << order;
}

// docs/errors.md: algorithm overrides are checked when the Communicator is made (a misspelled
// collective used to be ignored silently, an unknown algorithm reported only at the call).
TEST(Communicator, OverridesAreCheckedUpFront) {
  const std::pair<const char*, const char*> bad[] = {
      {"allreduc", "ring"}, {"allreduce", "telepathy"}, {"allreduce", "allgather/ring"}};
  const char* fragments[] = {"CommOptions::algorithms names an unknown collective 'allreduc'",
                             "unknown algorithm 'telepathy' for allreduce",
                             "allgather/ring is an algorithm for allgather, not for allreduce"};
  for (std::size_t i = 0; i < std::size(bad); ++i) {
    CommOptions options;
    options.algorithms[bad[i].first] = bad[i].second;
    std::atomic<bool> called{false};
    try {
      run_threads(
          2, [&called](Communicator&) { called = true; }, options);
      FAIL() << fragments[i];
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragments[i]), std::string::npos) << e.what();
    }
    EXPECT_FALSE(called);
  }
}

// docs/errors.md: there is no in-place mode: an input inside the output is refused. (Before
// this check, allgather/linear with the input at the output's start silently returned wrong
// blocks: the receives overwrote the input before it was sent.)
TEST(Communicator, InPlaceCallsAreRefused) {
  for (const char* algorithm : {"allgather/linear", "allgather/ring"}) {
    CommOptions options;
    options.algorithms["allgather"] = algorithm;
    try {
      run_threads(
          3,
          [](Communicator& comm) {
            std::vector<double> buffer(3 * 4, 1.0);
            const std::span<const double> in(buffer.data(), 4);
            comm.allgather<double>(in, buffer);
          },
          options);
      FAIL() << algorithm;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("rank 0: the input and output buffers overlap"),
                std::string::npos)
          << e.what();
    }
  }
  const std::string what = error_of(
      [](Communicator& comm) {
        std::vector<double> buffer(8, 1.0);
        comm.allreduce<double>(buffer, buffer, "sum");
      },
      ErrorCode::kInvalidArgument);
  EXPECT_NE(what.find("input and output buffers overlap"), std::string::npos) << what;
  // Adjacent, not overlapping: fine.
  run_threads(2, [](Communicator& comm) {
    std::vector<double> buffer(8, 1.0);
    const std::span<double> all(buffer);
    comm.allreduce<double>(all.first(4), all.last(4), "sum");
    EXPECT_EQ(buffer[4], 2.0);
  });
}

}  // namespace
}  // namespace optcoll

namespace optcoll {
namespace {

TEST(Communicator, ReproducibleReductionsAreTheLeftFoldBitForBit) {
  // Float values whose sum depends on the association; with CommOptions::reproducible every
  // allreduce, reduce_scatter_block, scan and exscan result is the left fold
  // ((x0 + x1) + x2) + ..., bit
  // for bit, whatever the cost model makes `auto` choose.
  // 1e8, 1, -1e8, 1, ...: the left fold keeps every 1 that follows a cancellation, and
  // other associations lose them (1e8 + 1 rounds to 1e8 in float).
  auto value = [](Rank r, std::size_t i) {
    const float scale = static_cast<float>(1 + i % 3);
    return scale * (r % 4 == 0 ? 1e8f : r % 4 == 2 ? -1e8f : 1.0f);
  };
  for (const Rank p : {3, 5, 8}) {
    const std::size_t n = 256 * static_cast<std::size_t>(p);
    std::vector<float> fold(n);
    for (std::size_t i = 0; i < n; ++i) {
      fold[i] = value(0, i);
      for (Rank r = 1; r < p; ++r) fold[i] += value(r, i);
    }
    for (const double alpha : {1e-6, 1e-3}) {  // small and large messages as far as auto knows
      CommOptions options;
      options.reproducible = true;
      options.model = reference_cluster_model();
      options.model->alpha = alpha;
      auto cache = std::make_shared<PlanCache>();
      ThreadWorld world(p);
      world.run([&](Transport& transport) {
        Communicator comm(transport, cache, options);
        std::vector<float> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = value(comm.rank(), i);
        std::vector<float> out(n);
        comm.allreduce<float>(in, out, "sum");
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(fold[i]))
              << "p=" << p << " element " << i;
        }
        std::vector<float> mine(256);
        comm.reduce_scatter_block<float>(in, mine, "sum");
        for (std::size_t k = 0; k < mine.size(); ++k) {
          ASSERT_EQ(mine[k], fold[static_cast<std::size_t>(comm.rank()) * mine.size() + k]);
        }
        // scan and exscan: rank r's result is the left fold of ranks 0..r (0..r-1).
        const auto me = static_cast<std::size_t>(comm.rank());
        std::vector<float> prefix(n);
        comm.scan<float>(in, prefix, "sum");
        std::vector<float> exclusive(n, -7.0f);
        comm.exscan<float>(in, exclusive, "sum");
        for (std::size_t i = 0; i < n; ++i) {
          float inclusive = value(0, i);
          for (Rank r = 1; r <= comm.rank(); ++r) inclusive += value(r, i);
          ASSERT_EQ(std::bit_cast<std::uint32_t>(prefix[i]),
                    std::bit_cast<std::uint32_t>(inclusive))
              << "p=" << p << " rank " << me << " element " << i;
          float before = value(0, i);
          for (Rank r = 1; r < comm.rank(); ++r) before += value(r, i);
          ASSERT_EQ(std::bit_cast<std::uint32_t>(exclusive[i]),
                    std::bit_cast<std::uint32_t>(me == 0 ? -7.0f : before));
        }
      });
    }
  }
}

}  // namespace
}  // namespace optcoll

namespace optcoll {
namespace {

TEST(Communicator, ACacheSharedByDifferentModelsKeepsTheirPlansApart) {
  // Communicators of one world with different models and one cache: each runs its own
  // model's choice, not the plan the cache made first for the same call. A 2 MiB reduce at
  // p = 2: reduce/linear under the thread model, another algorithm under the reference
  // cluster.
  const Count n = Count{1} << 18;
  CollectiveSpec spec = make_spec(CollectiveKind::kReduce, 2, n);
  spec.elem_bytes = sizeof(double);
  const CostModel models[] = {thread_node_model(2), reference_cluster_model()};
  const std::string picks[] = {plan(spec, models[0]).algorithm, plan(spec, models[1]).algorithm};
  ASSERT_NE(picks[0], picks[1]);
  auto cache = std::make_shared<PlanCache>();
  ThreadWorld world(2);
  for (int round = 0; round < 2; ++round) {  // the second round finds both in the cache
    for (int m = 0; m < 2; ++m) {
      CommOptions options;
      options.model = models[m];
      world.run([&](Transport& transport) {
        Communicator comm(transport, cache, options);
        std::vector<double> in(static_cast<std::size_t>(n), 1.0 + comm.rank());
        std::vector<double> out(comm.rank() == 0 ? in.size() : 0);
        comm.reduce<double>(in, out, "sum", 0);
        if (comm.rank() == 0) {
          EXPECT_EQ(out[n - 1], 3.0);
        }
        EXPECT_EQ(comm.last_plan()->algorithm, picks[m]) << "model " << m << ", round " << round;
      });
    }
  }
  EXPECT_EQ(cache->size(), 2u);
}

TEST(Communicator, TheMpiDefaultIsTheOneNodeModelOnOneNodeAndTheReferenceAcrossNodes) {
  const auto cpus = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GT(cpus, 0);
  const Placement one_node{{0, 0, 0}};
  const CostModel node = default_mpi_model(one_node, std::size_t{16384});
  EXPECT_EQ(node.cores, std::optional<int>(cpus));  // the node's, not this rank's affinity
  EXPECT_EQ(node.rendezvous_max_bytes, std::optional<std::size_t>(16384));
  EXPECT_EQ(node.send_mode, SendMode::kShared);
  EXPECT_EQ(node.send_mode_min_bytes, 16384u);
  EXPECT_EQ(node.rendezvous_bytes, std::optional<std::size_t>(4032));
  EXPECT_TRUE(node.folds_copies);
  EXPECT_FALSE(node.combines_in_place);  // the thread executor's, not MPI's
  EXPECT_NE(node, reference_cluster_model());
  // Without the channel: MPI's own protocol at every size, port sends.
  const CostModel plain = default_mpi_model(one_node, std::nullopt);
  EXPECT_FALSE(plain.rendezvous_max_bytes.has_value());
  EXPECT_EQ(plain.send_mode, SendMode::kPort);
  // Several nodes, or none known: the reference cluster, flat (no placement to simulate).
  EXPECT_EQ(default_mpi_model(Placement{{0, 0, 1, 1}}, std::size_t{16384}),
            reference_cluster_model());
  EXPECT_EQ(default_mpi_model(std::nullopt, std::size_t{16384}), reference_cluster_model());
  // A model file may start from it.
  const CostModel file = parse_cost_model_json(R"({"base": "mpi", "alpha": 3e-7})");
  EXPECT_DOUBLE_EQ(file.alpha, 3e-7);
  EXPECT_EQ(file.rendezvous_max_bytes, std::optional<std::size_t>(16384));
  EXPECT_FALSE(file.cores.has_value());
  // Where it matters: an allreduce of 4 KiB at p = 4 waits for a handshake on one node (the
  // MPI library's eager limit is below it), so the one-node default takes an algorithm of
  // smaller messages than the reference cluster's.
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, 4, 512);
  spec.elem_bytes = sizeof(double);
  EXPECT_NE(plan(spec, node).algorithm, plan(spec, reference_cluster_model()).algorithm);
}

TEST(Communicator, WithoutAModelAutoUsesTheTransportsDefault) {
  // A thread world's communicator without a model: the thread backend's (the processors this
  // process may use); with one: that model, whatever the backend.
  const int cpus = allowed_processors();
  ASSERT_GT(cpus, 0);
  EXPECT_EQ(default_thread_model(), thread_node_model(cpus));
  EXPECT_EQ(default_model("threads"), default_thread_model());
  EXPECT_EQ(default_model("mpi"), reference_cluster_model());  // no placement known
  run_threads(3, [](Communicator& comm) { EXPECT_EQ(comm.model(), default_thread_model()); });
  CommOptions given;
  given.model = reference_cluster_model();
  given.model->alpha = 3e-6;
  run_threads(
      3, [&](Communicator& comm) { EXPECT_EQ(comm.model(), *given.model); }, given);
  // auto plans with it: a 2 MiB reduce at p = 2 is reduce/linear under the thread model (the
  // root combines its child's message in place, both ranks sharing the pass) and not under
  // the reference cluster, whose choice it then runs.
  const Count n = Count{1} << 18;
  CollectiveSpec spec = make_spec(CollectiveKind::kReduce, 2, n);
  spec.elem_bytes = sizeof(double);
  const std::string threads_pick = plan(spec, thread_node_model(2)).algorithm;
  const std::string reference_pick = plan(spec, reference_cluster_model()).algorithm;
  EXPECT_EQ(threads_pick, "reduce/linear");
  EXPECT_NE(reference_pick, threads_pick);
  for (const bool with_reference : {false, true}) {
    CommOptions options;
    options.model = with_reference ? reference_cluster_model() : thread_node_model(2);
    run_threads(
        2,
        [&](Communicator& comm) {
          std::vector<double> in(static_cast<std::size_t>(n), 1.0 + comm.rank());
          std::vector<double> out(comm.rank() == 0 ? in.size() : 0);
          comm.reduce<double>(in, out, "sum", 0);
          if (comm.rank() == 0) {
            ASSERT_EQ(out[n - 1], 3.0);
          }
          EXPECT_EQ(comm.last_plan()->algorithm, with_reference ? reference_pick : threads_pick);
        },
        options);
  }
}

TEST(Communicator, MpiStyleGathervAndScattervExchangeTheCounts) {
  // Only each rank's own count (gatherv) or only the root's counts (scatterv) are given,
  // as in MPI; the results equal the planned calls with every count known everywhere.
  // Under the reference cluster model scatterv_root_counts runs linear without exchanging
  // counts at p <= 5 ((p - 2) alpha against a bcast's ceil(log2 p) alpha, counts_free.h) and
  // exchanges them, then runs auto's choice, at p = 7.
  for (const Rank p : {1, 4, 7}) {
    std::vector<Count> counts(static_cast<std::size_t>(p));
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = r % 3 == 1 ? 0 : 2 + 3 * r;
    const Count total = std::accumulate(counts.begin(), counts.end(), Count{0});
    const Rank root = p / 2;
    CollectiveSpec full = make_spec_v(CollectiveKind::kScatterv, p, counts, root);
    full.elem_bytes = sizeof(std::int32_t);
    const std::string expected_scatterv =
        p <= 5 ? "scatterv/linear" : plan(full, reference_cluster_model()).algorithm;
    CommOptions reference;
    reference.model = reference_cluster_model();
    run_threads(
        p,
        [&](Communicator& comm) {
          const auto me = static_cast<std::size_t>(comm.rank());
          std::vector<std::int32_t> mine(static_cast<std::size_t>(counts[me]));
          for (std::size_t i = 0; i < mine.size(); ++i)
            mine[i] = static_cast<std::int32_t>(100 * me + i);
          std::vector<std::int32_t> gathered(comm.rank() == root ? static_cast<std::size_t>(total)
                                                                 : 0);
          comm.gatherv_own_counts<std::int32_t>(mine, gathered, root);
          if (comm.rank() == root) {
            std::size_t at = 0;
            for (std::size_t r = 0; r < counts.size(); ++r) {
              for (Count i = 0; i < counts[r]; ++i) {
                ASSERT_EQ(gathered[at++],
                          static_cast<std::int32_t>(100 * r + static_cast<std::size_t>(i)));
              }
            }
          }
          std::vector<std::int32_t> back(mine.size(), -1);
          const std::span<const Count> root_counts =
              comm.rank() == root ? std::span<const Count>(counts) : std::span<const Count>();
          comm.scatterv_root_counts<std::int32_t>(gathered, back, root_counts, root);
          EXPECT_EQ(back, mine) << "rank " << me;
          EXPECT_EQ(comm.last_plan()->algorithm, expected_scatterv) << "p = " << p;
        },
        reference);
    // A root that gives the wrong number of counts: an error, no hang. With the exchange
    // every rank learns of it; without, the root aborts the call (a rank whose count is 0
    // takes no part in a linear scatterv and may finish first).
    const std::vector<Count> short_counts(counts.begin(), counts.end() - 1);
    const std::string says =
        "the root gave " + std::to_string(p - 1) + " counts for " + std::to_string(p) + " ranks";
    try {
      run_threads(
          p,
          [&](Communicator& comm) {
            std::vector<std::int32_t> gathered(static_cast<std::size_t>(total)),
                back(static_cast<std::size_t>(counts[static_cast<std::size_t>(comm.rank())]));
            try {
              comm.scatterv_root_counts<std::int32_t>(gathered, back,
                                                      comm.rank() == root
                                                          ? std::span<const Count>(short_counts)
                                                          : std::span<const Count>(),
                                                      root);
              if (p > 5 || !back.empty() || comm.rank() == root) {
                ADD_FAILURE() << "no error on rank " << comm.rank();
              }
            } catch (const Error& e) {
              EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
            }
          },
          reference);
    } catch (const Error& e) {  // the world may report the abort as well
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

TEST(Communicator, CountsFreeFollowsTheRuleAndTheOverrides) {
  // The reference model: linear without the exchange up to p = 5 (counts_free.h), for both
  // kinds, and alltoallv always with it (from p = 3); a forced algorithm decides alone (an
  // algorithm that needs only each rank's own counts skips it); other collectives have no
  // exchange.
  for (const Rank p : {4, 8}) {
    CommOptions options;
    options.model = reference_cluster_model();
    run_threads(
        p,
        [p](Communicator& comm) {
          EXPECT_EQ(comm.counts_free(CollectiveKind::kGatherv), p <= 5) << p;
          EXPECT_EQ(comm.counts_free(CollectiveKind::kScatterv), p <= 5) << p;
          EXPECT_FALSE(comm.counts_free(CollectiveKind::kAlltoallv)) << p;
          EXPECT_FALSE(comm.forced_algorithm(CollectiveKind::kAlltoallv).has_value());
          EXPECT_THROW(comm.counts_free(CollectiveKind::kAllreduce), Error);
        },
        options);
    options.algorithms["gatherv"] = p <= 5 ? "gatherv/binomial" : "gatherv/linear";
    options.algorithms["alltoallv"] = p <= 5 ? "pairwise" : "node_aware";
    run_threads(
        p,
        [p](Communicator& comm) {
          EXPECT_EQ(comm.counts_free(CollectiveKind::kGatherv), p > 5) << p;
          EXPECT_EQ(comm.counts_free(CollectiveKind::kScatterv), p <= 5) << p;
          EXPECT_EQ(comm.counts_free(CollectiveKind::kAlltoallv), p <= 5) << p;
          EXPECT_EQ(comm.forced_algorithm(CollectiveKind::kAlltoallv),
                    p <= 5 ? "alltoallv/pairwise" : "alltoallv/node_aware");
          // What a call without the exchange runs: the forced algorithm where it needs only
          // each rank's own counts, else linear.
          EXPECT_EQ(comm.count_exchange(CollectiveKind::kAlltoallv).without_exchange,
                    p <= 5 ? "alltoallv/pairwise" : "alltoallv/linear");
          EXPECT_EQ(comm.count_exchange(CollectiveKind::kGatherv).without_exchange,
                    "gatherv/linear");
        },
        options);
  }
}

TEST(Communicator, ScattervWithoutExchangeFollowsTheOverride) {
  // Forced linear and lpt_star (stars: each rank needs only its own count) skip the exchange
  // at any p, and run as forced; forced binomial exchanges at p = 4.
  const std::vector<Count> counts = {3, 0, 5, 1, 2, 4, 0, 6, 2};
  for (const std::string forced : {"scatterv/linear", "scatterv/lpt_star", "scatterv/binomial"}) {
    CommOptions options;
    options.algorithms["scatterv"] = forced;
    for (const Rank p : {4, 9}) {
      const std::vector<Count> mine_counts(counts.begin(), counts.begin() + p);
      const Count total = std::accumulate(mine_counts.begin(), mine_counts.end(), Count{0});
      std::vector<std::int32_t> source(static_cast<std::size_t>(total));
      std::iota(source.begin(), source.end(), 7);
      run_threads(
          p,
          [&](Communicator& comm) {
            const auto me = static_cast<std::size_t>(comm.rank());
            const Count before =
                std::accumulate(mine_counts.begin(), mine_counts.begin() + comm.rank(), Count{0});
            std::vector<std::int32_t> back(static_cast<std::size_t>(mine_counts[me]), -1);
            comm.scatterv_root_counts<std::int32_t>(
                comm.rank() == 0 ? std::span<const std::int32_t>(source)
                                 : std::span<const std::int32_t>(),
                back,
                comm.rank() == 0 ? std::span<const Count>(mine_counts) : std::span<const Count>(),
                0);
            for (std::size_t i = 0; i < back.size(); ++i) {
              ASSERT_EQ(back[i], 7 + before + static_cast<Count>(i)) << "rank " << me;
            }
            EXPECT_EQ(comm.last_plan()->algorithm, forced);
            // The spec a non-root ran: every count (exchanged) or only its own (not).
            if (comm.rank() == 1 || comm.rank() == 2) {
              const Count others = total - mine_counts[me];
              const Count seen = Layout(comm.last_plan()->schedule.spec).total() - mine_counts[me];
              EXPECT_EQ(seen, forced == "scatterv/binomial" ? others : 0) << "rank " << me;
            }
          },
          options);
    }
  }
}

}  // namespace
}  // namespace optcoll
