// SPDX-License-Identifier: Apache-2.0
// File: a prepared call allocates nothing. This binary replaces the global operator new with
// one that counts, per thread, the allocations made while a rank's counting is switched on;
// each rank makes a few calls first (planning, preparing, first-touch), then switches its
// counting on for many calls of the same collective. The counted number must be zero for
// every collective, blocking and persistent, on one to three ranks, with the ranks run as
// threads (each with a CPU: rings and spinning) and as fibers (mailboxes, eager copies).
// The transport's per-pair pools (eager copies, posted queues, arrived ring messages) grow
// when a pair has more messages in flight than ever before, which scheduling can make happen
// late: a root that runs ahead of its bcast's receiver (under a loaded machine) raises that
// peak again and again, each pool doubling. What is counted is the number of calls that
// allocated, in each of kWindows windows of kCountedCalls calls; the fewest of them must be
// at most kPeakGrowths. A call that allocates every time fails every window; pools that
// double reach their peak and leave at least one window quiet.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/threads/world.h"

namespace {

thread_local bool t_counting = false;
thread_local long t_allocations = 0;

void* counted_allocation(std::size_t bytes, std::size_t alignment) {
  if (t_counting) ++t_allocations;
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else {
    p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t bytes) { return counted_allocation(bytes, 0); }
void* operator new[](std::size_t bytes) { return counted_allocation(bytes, 0); }
void* operator new(std::size_t bytes, std::align_val_t a) {
  return counted_allocation(bytes, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t bytes, std::align_val_t a) {
  return counted_allocation(bytes, static_cast<std::size_t>(a));
}
// The nothrow forms too (std::stable_sort's buffer uses them): every form allocates and frees
// here, with malloc and free, so a sanitizer's allocator never sees half of a pair.
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(bytes, 0);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
void* operator new(std::size_t bytes, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(bytes, static_cast<std::size_t>(a));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, std::align_val_t a, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, a, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace optcoll {
namespace {

constexpr int kWarmUpCalls = 200;
constexpr int kCountedCalls = 200;
constexpr int kWindows = 3;
constexpr long kPeakGrowths = 4;

// One call of a collective on a rank's Communicator, with its buffers made beforehand.
struct Call {
  std::string name;
  std::function<void(Communicator&, std::vector<double>&, std::vector<double>&)> run;
};

const std::vector<Call>& calls() {
  static const std::vector<Call> all = {
      {"bcast", [](Communicator& c, auto&, auto& out) { c.bcast<double>(out, 0); }},
      {"allreduce",
       [](Communicator& c, auto& in, auto& out) {
         c.allreduce<double>(std::span<const double>(in).first(4), std::span(out).first(4), "sum");
       }},
      {"allgather",
       [](Communicator& c, auto& in, auto& out) {
         c.allgather<double>(std::span<const double>(in).first(1),
                             std::span(out).first(static_cast<std::size_t>(c.size())));
       }},
      {"reduce_scatter_block",
       [](Communicator& c, auto& in, auto& out) {
         c.reduce_scatter_block<double>(
             std::span<const double>(in).first(static_cast<std::size_t>(c.size())),
             std::span(out).first(1), "sum");
       }},
      {"alltoall",
       [](Communicator& c, auto& in, auto& out) {
         c.alltoall<double>(std::span<const double>(in).first(static_cast<std::size_t>(c.size())),
                            std::span(out).first(static_cast<std::size_t>(c.size())));
       }},
      {"barrier", [](Communicator& c, auto&, auto&) { c.barrier(); }},
  };
  return all;
}

// How many of kCountedCalls calls of `one_call` allocated.
long allocating_calls_in_a_window(const std::function<void()>& one_call) {
  long allocating = 0;
  for (int i = 0; i < kCountedCalls; ++i) {
    t_allocations = 0;
    t_counting = true;
    one_call();
    t_counting = false;
    if (t_allocations > 0) ++allocating;
  }
  return allocating;
}

// After kWarmUpCalls calls of `one_call`: the fewest allocating calls in any of kWindows
// windows. Every rank makes the same number of calls (they are collective).
long allocating_calls(const std::function<void()>& one_call) {
  for (int i = 0; i < kWarmUpCalls; ++i) one_call();
  long fewest = kCountedCalls;
  for (int w = 0; w < kWindows; ++w) {
    fewest = std::min(fewest, allocating_calls_in_a_window(one_call));
  }
  return fewest;
}

// Per rank: allocating_calls() of `call`.
std::vector<long> allocations_of(Rank p, RankExecution execution, const Call& call) {
  ThreadWorld world(p, WorldOptions{std::chrono::seconds(30), execution});
  auto cache = std::make_shared<PlanCache>();
  std::vector<long> counted(static_cast<std::size_t>(p), -1);
  world.run([&](Transport& transport) {
    Communicator comm(transport, cache);
    std::vector<double> in(64, 1.0 + transport.rank());
    std::vector<double> out(64, 0.0);
    counted[static_cast<std::size_t>(transport.rank())] =
        allocating_calls([&] { call.run(comm, in, out); });
  });
  return counted;
}

constexpr RankExecution kExecutions[] = {RankExecution::kThreads, RankExecution::kFibers};

const char* name_of(RankExecution execution) {
  return execution == RankExecution::kFibers ? "fibers" : "threads";
}

TEST(PreparedCall, AllocatesNothing) {
  for (const RankExecution execution : kExecutions) {
    for (const Rank p : {1, 2, 3}) {
      for (const Call& call : calls()) {
        const auto counted = allocations_of(p, execution, call);
        for (Rank r = 0; r < p; ++r) {
          EXPECT_LE(counted[static_cast<std::size_t>(r)], kPeakGrowths)
              << call.name << " p=" << p << " " << name_of(execution) << " rank " << r
              << ": calls that allocated, of " << kCountedCalls
              << " prepared calls, in the quietest of " << kWindows << " windows";
        }
      }
    }
  }
}

TEST(PreparedCall, PersistentStartAllocatesNothing) {
  for (const RankExecution execution : kExecutions) {
    for (const Rank p : {1, 2, 3}) {
      ThreadWorld world(p, WorldOptions{std::chrono::seconds(30), execution});
      auto cache = std::make_shared<PlanCache>();
      std::vector<long> counted(static_cast<std::size_t>(p), -1);
      world.run([&](Transport& transport) {
        Communicator comm(transport, cache);
        std::vector<double> in(4, 1.0);
        std::vector<double> out(4, 0.0);
        Request request = comm.allreduce_init<double>(in, out, "sum");
        counted[static_cast<std::size_t>(transport.rank())] = allocating_calls([&] {
          request.start();
          request.wait();
        });
      });
      for (Rank r = 0; r < p; ++r) {
        EXPECT_LE(counted[static_cast<std::size_t>(r)], kPeakGrowths)
            << "p=" << p << " " << name_of(execution) << " rank " << r;
      }
    }
  }
}

// The counter itself: an allocation made while counting is seen (the test above cannot pass
// by a counter that never counts).
TEST(PreparedCall, TheCounterCounts) {
  t_allocations = 0;
  t_counting = true;
  auto* leaked_on_purpose = new std::vector<int>(10);
  t_counting = false;
  delete leaked_on_purpose;
  EXPECT_GE(t_allocations, 2);
}

}  // namespace
}  // namespace optcoll
