// SPDX-License-Identifier: Apache-2.0
// File: link-level simulation on tori (issue 6 target): allreduce/multicolor_bucket on
// 16x16x16 (p = 4096) with link contention, n = 2^20 elements, under 10 s per simulate().
// Also the build of that schedule, and 8x8x8 for scale. Counters: ops and ops per second.
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"

namespace {

optcoll::CostModel torus(const std::string& topology) {
  optcoll::CostModel model;
  model.alpha = 100;
  model.beta = 1;
  model.gamma = 0;
  model.copy = 0;
  return optcoll::with_topology(model, optcoll::parse_topology(topology));
}

optcoll::Schedule build(const optcoll::CostModel& model) {
  const auto p = model.topology->size();
  return optcoll::algorithms::build(
      "allreduce/multicolor_bucket",
      optcoll::make_spec(optcoll::CollectiveKind::kAllreduce, p, optcoll::Count{1} << 20), {},
      model);
}

void BM_SimulateMulticolorTorus(benchmark::State& state, const std::string& topology) {
  const auto model = torus(topology);
  const auto schedule = build(model);
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

void BM_BuildMulticolorTorus(benchmark::State& state, const std::string& topology) {
  const auto model = torus(topology);
  for (auto _ : state) {
    const auto schedule = build(model);
    benchmark::DoNotOptimize(schedule.ranks.size());
  }
}

BENCHMARK_CAPTURE(BM_SimulateMulticolorTorus, torus_8x8x8_bi, std::string("torus:8x8x8:bi"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateMulticolorTorus, torus_16x16x16_bi, std::string("torus:16x16x16:bi"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_SimulateMulticolorTorus, torus_16x16x16_uni, std::string("torus:16x16x16:uni"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_BuildMulticolorTorus, torus_16x16x16_bi, std::string("torus:16x16x16:bi"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
