// SPDX-License-Identifier: Apache-2.0
// File: executor throughput on the thread backend. The reference point is the cost of
// moving the data at all: allreduce/ring on p = 2 ranks over 8 MiB of doubles is compared,
// side by side in one run, with two memcpy of the same 8 MiB on one thread (the target is a
// ratio <= 1.5 of the medians). p = 8 and 64, small messages and an empty run() are there
// for information.
//
//   bench_exec --benchmark_filter=SideBySide --benchmark_repetitions=5
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

constexpr Count kElems = Count{1} << 20;  // 8 MiB of doubles

// One world per size for the whole program: run() reuses its threads.
ThreadWorld& world_of(Rank p) {
  static std::map<Rank, std::unique_ptr<ThreadWorld>> worlds;
  auto& world = worlds[p];
  if (!world) world = std::make_unique<ThreadWorld>(p);
  return *world;
}

// An allreduce/ring of `n` doubles (sum) on p ranks, with its buffers, ready to run.
class RingAllreduce {
 public:
  RingAllreduce(Rank p, Count n)
      : world_(world_of(p)),
        schedule_(algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, p, n))),
        type_(Datatype::float64()),
        op_(ReduceOp::builtin("sum", type_)),
        inputs_(static_cast<std::size_t>(p)),
        outputs_(static_cast<std::size_t>(p)) {
    for (Rank r = 0; r < p; ++r) {
      auto& in = inputs_[static_cast<std::size_t>(r)];
      in.resize(static_cast<std::size_t>(n));
      for (Count i = 0; i < n; ++i)
        in[static_cast<std::size_t>(i)] = static_cast<double>(r + i % 7);
      outputs_[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(n), 0.0);
    }
  }

  void run() {
    ExecOptions options;
    options.epoch = epoch_++;
    world_.run([&](Transport& t) {
      const auto me = static_cast<std::size_t>(t.rank());
      execute(schedule_, t,
              {std::as_bytes(std::span<const double>(inputs_[me])),
               std::as_writable_bytes(std::span<double>(outputs_[me]))},
              type_, op_, options);
    });
  }

  // The expected sum for element i (exact: small integers).
  bool correct() const {
    const auto p = static_cast<Count>(inputs_.size());
    for (std::size_t r = 0; r < outputs_.size(); ++r) {
      for (Count i = 0; i < static_cast<Count>(outputs_[r].size()); i += 4099) {
        double sum = 0;
        for (Count q = 0; q < p; ++q) sum += static_cast<double>(q + i % 7);
        if (outputs_[r][static_cast<std::size_t>(i)] != sum) return false;
      }
    }
    return true;
  }

 private:
  ThreadWorld& world_;
  Schedule schedule_;
  Datatype type_;
  ReduceOp op_;
  std::vector<std::vector<double>> inputs_;
  std::vector<std::vector<double>> outputs_;
  std::uint32_t epoch_ = 0;
};

void BM_AllreduceRing(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  const Count n = state.range(1);
  RingAllreduce allreduce(p, n);
  for (auto _ : state) allreduce.run();
  if (!allreduce.correct()) state.SkipWithError("wrong allreduce result");
  state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(sizeof(double)));
}
BENCHMARK(BM_AllreduceRing)
    ->ArgNames({"p", "n"})
    ->Args({2, kElems})
    ->Args({8, kElems})
    ->Args({64, kElems})
    ->Args({2, 8})
    ->Args({8, 8})
    ->Args({64, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Two memcpy of the 8 MiB buffer on one thread: the floor the allreduce is held against.
void BM_TwoMemcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(kElems) * sizeof(double);
  std::vector<std::byte> a(bytes, std::byte{1});
  std::vector<std::byte> b(bytes, std::byte{2});
  std::vector<std::byte> c(bytes, std::byte{3});
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    std::memcpy(c.data(), b.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_TwoMemcpy)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The two, interleaved iteration by iteration so that both see the same machine load;
// reports both medians and their ratio (the target: ratio <= 1.5).
void BM_SideBySide(benchmark::State& state) {
  RingAllreduce allreduce(2, kElems);
  const auto bytes = static_cast<std::size_t>(kElems) * sizeof(double);
  std::vector<std::byte> a(bytes, std::byte{1});
  std::vector<std::byte> b(bytes, std::byte{2});
  std::vector<std::byte> c(bytes, std::byte{3});
  std::vector<double> allreduce_ms;
  std::vector<double> memcpy_ms;
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    std::memcpy(c.data(), b.data(), bytes);
    benchmark::ClobberMemory();
    const auto t1 = Clock::now();
    allreduce.run();
    const auto t2 = Clock::now();
    memcpy_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    allreduce_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    state.SetIterationTime(std::chrono::duration<double>(t2 - t1).count());
  }
  if (!allreduce.correct()) state.SkipWithError("wrong allreduce result");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double m_allreduce = median(allreduce_ms);
  const double m_memcpy = median(memcpy_ms);
  state.counters["allreduce_ms"] = m_allreduce;
  state.counters["two_memcpy_ms"] = m_memcpy;
  state.counters["ratio"] = m_memcpy > 0 ? m_allreduce / m_memcpy : 0;
}
BENCHMARK(BM_SideBySide)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// What one run() costs with nothing to do: two wake-ups per rank.
void BM_EmptyRun(benchmark::State& state) {
  ThreadWorld& world = world_of(static_cast<Rank>(state.range(0)));
  for (auto _ : state) world.run([](Transport&) {});
}
BENCHMARK(BM_EmptyRun)
    ->ArgName("p")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace optcoll

BENCHMARK_MAIN();
