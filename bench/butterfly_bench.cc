// SPDX-License-Identifier: Apache-2.0
// File: build time of the butterfly, bucket and hybrid algorithms (issue 3 part B): the
// registry grid's largest point (p = 64, n = 1000) and p = 1024 for the ones selection will
// consider at scale.
#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"

namespace {

const char* const kAlgorithms[] = {"bcast/scatter_ring_allgather",
                                   "bcast/scatter_doubling_allgather",
                                   "bcast/hybrid",
                                   "bcast/hybrid_2d_scatter",
                                   "reduce/rabenseifner",
                                   "reduce/bucket",
                                   "reduce/hybrid",
                                   "allgather/recursive_doubling",
                                   "allgather/bruck",
                                   "allgather/hybrid",
                                   "reduce_scatter_block/recursive_halving",
                                   "reduce_scatter_block/pairwise",
                                   "reduce_scatter_block/hybrid",
                                   "allreduce/recursive_doubling",
                                   "allreduce/rabenseifner",
                                   "allreduce/hybrid",
                                   "allreduce/ring_segmented"};

void BM_Build(benchmark::State& state) {
  const char* algorithm = kAlgorithms[state.range(0)];
  const auto p = static_cast<optcoll::Rank>(state.range(1));
  const auto info = optcoll::algorithms::find_algorithm(algorithm);
  const auto spec = optcoll::make_spec(info->collective, p, 1000);
  std::size_t ops = 0;
  for (auto _ : state) {
    ops = optcoll::algorithms::build(*info, spec).op_count();
    benchmark::DoNotOptimize(ops);
  }
  state.SetLabel(algorithm);
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_Build)
    ->ArgsProduct({benchmark::CreateDenseRange(0, std::size(kAlgorithms) - 1, 1), {64, 1024}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
