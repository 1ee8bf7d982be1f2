// SPDX-License-Identifier: Apache-2.0
// File: Träff's tree planners at the paper's sizes: the homogeneous optimal tree (best root)
// beside the plain triple-loop DP, the fixed-root optimal tree, the binary DP, and the O(p)
// binomial trees. Problem: Träff's Increasing distribution, alpha = 100, beta = copy = 1.
// The non-homogeneous optimal tree (pair costs) on the same sizes over a two-level network:
// nodes of 16 ranks, alpha 10 / beta 0.5 inside a node, alpha 100 / beta 1 between nodes,
// each pair perturbed by up to +25% (deterministic), beside the literal O(p^5) recurrence.
#include <benchmark/benchmark.h>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/distributions.h"

namespace optcoll::algorithms::planners {
namespace {

GatherProblem problem(Rank p) {
  GatherProblem pb;
  pb.alpha = 100;
  pb.beta = 1;
  pb.copy = 1;
  for (const Count m : distribution_counts(Distribution::kIncreasing, p, 1000))
    pb.sizes.push_back(static_cast<Time>(m));
  return pb;
}

GatherProblem pair_problem(Rank p) {
  GatherProblem pb = problem(p);
  const auto n = static_cast<std::size_t>(p);
  pb.pair_alpha.resize(n * n);
  pb.pair_beta.resize(n * n);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t t = 0; t < n; ++t) {
      const bool same_node = s / 16 == t / 16;
      const double jitter = 1.0 + static_cast<double>((s * 7919 + t * 104729) % 26) / 100.0;
      pb.pair_alpha[s * n + t] = (same_node ? 10.0 : 100.0) * jitter;
      pb.pair_beta[s * n + t] = (same_node ? 0.5 : 1.0) * jitter;
    }
  }
  return pb;
}

void BM_NonHomogeneousBestRoot(benchmark::State& state) {
  const auto pb = pair_problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree_nonhomogeneous(pb, std::nullopt).cost);
}
BENCHMARK(BM_NonHomogeneousBestRoot)->Arg(50)->Arg(100)->Arg(200)->Unit(benchmark::kMillisecond);

void BM_NonHomogeneousLiteral(benchmark::State& state) {
  const auto pb = pair_problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(optimal_cost_nonhomogeneous_literal(pb, std::nullopt));
}
BENCHMARK(BM_NonHomogeneousLiteral)->Arg(50)->Arg(100)->Unit(benchmark::kMillisecond);

// CPU times are the process's (both DP workers); wall times are what a caller waits.
void BM_OptimalBestRoot(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree(pb, std::nullopt).cost);
}
BENCHMARK(BM_OptimalBestRoot)
    ->Arg(500)
    ->Arg(2000)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same DP with one worker (no wavefront).
void BM_OptimalBestRootOneWorker(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree_best_root(pb, 1).cost);
}
BENCHMARK(BM_OptimalBestRootOneWorker)
    ->Arg(2000)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same problem in seconds (alpha = 1e-6, beta = copy = 1e-8): rounded arithmetic, so the
// pruning keeps a margin and evaluates the candidates that tie up to rounding.
void BM_OptimalBestRootSeconds(benchmark::State& state) {
  auto pb = problem(static_cast<Rank>(state.range(0)));
  pb.alpha = 1e-6;
  pb.beta = 1e-8;
  pb.copy = 1e-8;
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree(pb, std::nullopt).cost);
}
BENCHMARK(BM_OptimalBestRootSeconds)
    ->Arg(2000)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_OptimalPlainTripleLoop(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_cost_plain(pb));
}
BENCHMARK(BM_OptimalPlainTripleLoop)
    ->Arg(500)
    ->Arg(2000)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_OptimalFixedRoot(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  const auto pb = problem(p);
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree(pb, p / 2).cost);
}
BENCHMARK(BM_OptimalFixedRoot)
    ->Arg(2000)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_OptimalBestRootLarge(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_tree(pb, std::nullopt).cost);
}
BENCHMARK(BM_OptimalBestRootLarge)
    ->Arg(10000)
    ->Iterations(1)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

void BM_BinaryBestRoot(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(binary_optimal_tree(pb, std::nullopt).cost);
}
BENCHMARK(BM_BinaryBestRoot)->Arg(500)->Arg(2000)->Unit(benchmark::kMillisecond);

void BM_AdaptiveBinomial(benchmark::State& state) {
  const auto pb = problem(static_cast<Rank>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(adaptive_binomial_tree(pb, std::nullopt).cost);
}
BENCHMARK(BM_AdaptiveBinomial)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace optcoll::algorithms::planners

BENCHMARK_MAIN();
