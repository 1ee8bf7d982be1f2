// SPDX-License-Identifier: Apache-2.0
// File: the cost of choosing (docs/performance.md, "Selection and planning at scale"), under
// the reference cluster model with 8-byte elements:
//   decide/<collective>/<p>/<count>   decide(spec, model): the algorithm and its parameters,
//                                     what the Communicator, the C API and the PMPI library
//                                     need (the decision cache is emptied before every
//                                     iteration: a first call);
//   plan_bcast/<p>                    plan(): auto, then the chosen schedule built and simulated
//                                     (`optcoll plan bcast -p P --count 4`);
//   best_root_gatherv/<p>             plan_best_root() for gatherv, 1000-element random blocks
//                                     (`optcoll plan gatherv --dist random --root best`);
//   exhaustive/<collective>/<p>/<count>  the reference procedure, for comparison.
// Targets: decide under 50 ms at p = 1024 and under 1 s (and 1 GB) at p = 65536, plan_bcast
// at p = 65536 under 2 s, best_root_gatherv at p = 2000 under 2 s.
#include <string>

#include <benchmark/benchmark.h>

#include "optcoll/model/cost_model.h"
#include "optcoll/model/distributions.h"
#include "optcoll/plan/select.h"

namespace {

using optcoll::CollectiveKind;
using optcoll::Count;
using optcoll::Rank;

// A spec of `kind` for p ranks with `count` elements per block (the message for bcast-like
// kinds, each rank's block for the others, one element per pair for alltoall(v)): the
// v-collectives get blocks of count and count + 1 alternately.
optcoll::CollectiveSpec shape(CollectiveKind kind, Rank p, Count count) {
  optcoll::CollectiveSpec spec;
  if (kind == CollectiveKind::kBarrier) {
    spec = optcoll::make_spec(kind, p, 0);
  } else if (optcoll::takes_counts(kind)) {
    const std::size_t n = kind == CollectiveKind::kAlltoallv
                              ? static_cast<std::size_t>(p) * static_cast<std::size_t>(p)
                              : static_cast<std::size_t>(p);
    std::vector<Count> counts(n);
    for (std::size_t i = 0; i < n; ++i) counts[i] = count + static_cast<Count>(i % 2);
    spec = optcoll::make_spec_v(kind, p, std::move(counts));
  } else {
    spec = optcoll::make_spec(kind, p, count);
  }
  spec.elem_bytes = 8;
  return spec;
}

void decide(benchmark::State& state, CollectiveKind kind, bool exhaustive) {
  const auto p = static_cast<Rank>(state.range(0));
  const auto count = static_cast<Count>(state.range(1));
  const auto spec = shape(kind, p, count);
  const auto model = optcoll::reference_cluster_model();
  const optcoll::PlanOptions options{.exhaustive = exhaustive};
  for (auto _ : state) {
    state.PauseTiming();
    optcoll::clear_decision_cache();
    state.ResumeTiming();
    const auto d = optcoll::decide(spec, model, "auto", {}, options);
    benchmark::DoNotOptimize(d.predicted_time);
  }
  state.SetLabel(optcoll::decide(spec, model, "auto", {}, options).algorithm);
}

void plan_bcast(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  auto spec = optcoll::make_spec(CollectiveKind::kBcast, p, 4);
  spec.elem_bytes = 8;
  const auto model = optcoll::reference_cluster_model();
  for (auto _ : state) {
    state.PauseTiming();
    optcoll::clear_decision_cache();
    state.ResumeTiming();
    const auto plan = optcoll::plan(spec, model);
    benchmark::DoNotOptimize(plan.predicted_time);
    state.SetLabel(plan.algorithm);
  }
}

void best_root_gatherv(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  const auto spec = optcoll::make_spec_v(
      CollectiveKind::kGatherv, p,
      optcoll::distribution_counts(optcoll::Distribution::kRandom, p, 1000, 1));
  const auto model = optcoll::reference_cluster_model();
  for (auto _ : state) {
    state.PauseTiming();
    optcoll::clear_decision_cache();
    state.ResumeTiming();
    const auto plan = optcoll::plan_best_root(spec, model);
    benchmark::DoNotOptimize(plan.predicted_time);
    state.SetLabel(plan.algorithm + " root " + std::to_string(plan.schedule.spec.root));
  }
}

void register_all() {
  for (const CollectiveKind kind : optcoll::all_collectives()) {
    const std::string name(optcoll::collective_name(kind));
    const Count small = kind == CollectiveKind::kBarrier ? 0 : 4;
    const Count large = kind == CollectiveKind::kBarrier
                            ? 0
                            : (optcoll::count_is_message(kind) ? Count{1} << 20 : Count{1} << 10);
    auto* b = benchmark::RegisterBenchmark(("decide/" + name).c_str(),
                                           [kind](benchmark::State& s) { decide(s, kind, false); });
    b->Args({1024, small})->Args({1024, large})->Unit(benchmark::kMillisecond);
    // alltoallv at p = 65536 would need a 65536 x 65536 counts matrix (32 GiB) to ask.
    if (kind != CollectiveKind::kAlltoallv) b->Args({65536, small});
    b->Iterations(3);
    benchmark::RegisterBenchmark(("exhaustive/" + name).c_str(),
                                 [kind](benchmark::State& s) { decide(s, kind, true); })
        ->Args({64, small})
        ->Args({64, large})
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  benchmark::RegisterBenchmark("plan_bcast", plan_bcast)
      ->Arg(1024)
      ->Arg(65536)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("best_root_gatherv", best_root_gatherv)
      ->Arg(512)
      ->Arg(2000)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
