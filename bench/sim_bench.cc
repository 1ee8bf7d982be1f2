// SPDX-License-Identifier: Apache-2.0
// File: simulator throughput (docs/performance.md, "Build, verify and simulate at scale"):
// bcast/binomial at p = 2^20 and allreduce/ring at p = 1024 with a 2^20-element message, each under
// 2 s per simulate(). Schedules are built once; only simulate() is timed. Counters: ops and ops per
// second.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"

namespace {

using optcoll::CollectiveKind;

const optcoll::Schedule& cached(std::string_view name, CollectiveKind kind, optcoll::Rank p,
                                optcoll::Count count) {
  // One schedule per benchmark, built on first use and kept for the process.
  static std::vector<std::pair<std::string, std::unique_ptr<optcoll::Schedule>>> cache;
  const std::string key = std::string(name) + "/" + std::to_string(p) + "/" + std::to_string(count);
  for (const auto& [k, s] : cache) {
    if (k == key) return *s;
  }
  auto schedule = std::make_unique<optcoll::Schedule>(
      optcoll::algorithms::build(name, optcoll::make_spec(kind, p, count)));
  cache.emplace_back(key, std::move(schedule));
  return *cache.back().second;
}

void run(benchmark::State& state, std::string_view name, CollectiveKind kind, optcoll::Count count,
         const optcoll::CostModel& model) {
  const auto p = static_cast<optcoll::Rank>(state.range(0));
  const auto& schedule = cached(name, kind, p, count);
  std::size_t ops = 0;
  for (auto _ : state) {
    const auto result = optcoll::simulate(schedule, model);
    benchmark::DoNotOptimize(result.makespan);
    ops = result.ops;
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

optcoll::CostModel one_port_full_duplex() {
  optcoll::CostModel model;
  model.alpha = 100;
  model.beta = 1;
  model.gamma = 3;
  model.copy = 1;
  return model;
}

void BM_SimulateBcastBinomial(benchmark::State& state) {
  run(state, "bcast/binomial", CollectiveKind::kBcast, 1000, one_port_full_duplex());
}
BENCHMARK(BM_SimulateBcastBinomial)
    ->Arg(1 << 10)
    ->Arg(1 << 16)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SimulateAllreduceRing(benchmark::State& state) {
  run(state, "allreduce/ring", CollectiveKind::kAllreduce, 1 << 20, one_port_full_duplex());
}
BENCHMARK(BM_SimulateAllreduceRing)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
