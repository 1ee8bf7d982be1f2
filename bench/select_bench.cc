// SPDX-License-Identifier: Apache-2.0
// File: the cost of plan(spec, model, "auto") — what a Communicator call pays on a PlanCache
// miss: every applicable registry algorithm built and simulated, with parameter variants and
// the composition candidate. p = 64 under the reference cluster model, 8-byte elements.
#include <benchmark/benchmark.h>

#include "optcoll/model/cost_model.h"
#include "optcoll/plan/select.h"

namespace {

using optcoll::CollectiveKind;

void plan_auto(benchmark::State& state, CollectiveKind kind) {
  const auto p = static_cast<optcoll::Rank>(state.range(0));
  const auto count = static_cast<optcoll::Count>(state.range(1));
  auto spec = optcoll::make_spec(kind, p, count);
  spec.elem_bytes = 8;
  const auto model = optcoll::reference_cluster_model();
  for (auto _ : state) {
    const auto chosen = optcoll::plan(spec, model);
    benchmark::DoNotOptimize(chosen.predicted_time);
  }
}

void bcast(benchmark::State& state) { plan_auto(state, CollectiveKind::kBcast); }
void allreduce(benchmark::State& state) { plan_auto(state, CollectiveKind::kAllreduce); }
void allgather(benchmark::State& state) { plan_auto(state, CollectiveKind::kAllgather); }

// {p, count}: count is the message (bcast, allreduce) or each rank's block (allgather).
BENCHMARK(bcast)->Args({64, 1})->Args({64, 131072})->Unit(benchmark::kMillisecond);
BENCHMARK(allreduce)->Args({64, 1})->Args({64, 131072})->Unit(benchmark::kMillisecond);
BENCHMARK(allgather)->Args({64, 1})->Args({64, 2048})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
