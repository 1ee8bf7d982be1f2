// SPDX-License-Identifier: Apache-2.0
// File: schedule construction throughput: the builder (hazard inference, seq numbering) on
// the foundation's scale targets, bcast/binomial at p = 2^20 and allreduce/ring at p = 1024;
// and the layout of an alltoallv's p x p counts.
#include <vector>

#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"

namespace {

using optcoll::CollectiveKind;

void build_and_count(benchmark::State& state, const char* algorithm,
                     const optcoll::CollectiveSpec& spec) {
  std::size_t ops = 0;
  for (auto _ : state) {
    const auto schedule = optcoll::algorithms::build(algorithm, spec);
    ops = schedule.op_count();
    benchmark::DoNotOptimize(ops);
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_second"] =
      benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_BuildBcastBinomial(benchmark::State& state) {
  build_and_count(
      state, "bcast/binomial",
      optcoll::make_spec(CollectiveKind::kBcast, static_cast<optcoll::Rank>(state.range(0)), 1000));
}
BENCHMARK(BM_BuildBcastBinomial)
    ->Arg(1 << 16)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

void BM_BuildAllreduceRing(benchmark::State& state) {
  build_and_count(state, "allreduce/ring",
                  optcoll::make_spec(CollectiveKind::kAllreduce,
                                     static_cast<optcoll::Rank>(state.range(0)), 1 << 20));
}
BENCHMARK(BM_BuildAllreduceRing)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// The layout of an alltoallv of p x p skewed counts (every builder, the verifier and the
// simulator make one).
optcoll::CollectiveSpec skewed_alltoallv(optcoll::Rank p) {
  std::vector<optcoll::Count> counts(static_cast<std::size_t>(p) * static_cast<std::size_t>(p));
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<optcoll::Count>(i % 97);
  return optcoll::make_spec_v(CollectiveKind::kAlltoallv, p, std::move(counts));
}

// A layout that owns a copy of the spec and is asked a displacement: the copy, validation,
// the row and column sums, and the send and receive displacement tables.
void BM_LayoutAlltoallv(benchmark::State& state) {
  const auto p = static_cast<optcoll::Rank>(state.range(0));
  const auto spec = skewed_alltoallv(p);
  for (auto _ : state) {
    const optcoll::Layout layout(spec);
    benchmark::DoNotOptimize(layout.recv_displ(p - 1, p));
  }
}
BENCHMARK(BM_LayoutAlltoallv)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// A layout that borrows the spec and is asked only sizes (a builder's slice checks, the
// lower bounds, one rank's program): validation and the row and column sums.
void BM_LayoutAlltoallvSizes(benchmark::State& state) {
  const auto p = static_cast<optcoll::Rank>(state.range(0));
  const auto spec = skewed_alltoallv(p);
  for (auto _ : state) {
    const optcoll::Layout layout = optcoll::Layout::borrowing(spec);
    benchmark::DoNotOptimize(layout.input_count(p - 1) + layout.output_count(p - 1));
  }
}
BENCHMARK(BM_LayoutAlltoallvSizes)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
