// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's overlapped reductions: the planner (Algorithm 1, target n = 10^6
// under 1 s), schedule emission (reduce/greedy_overlap at p = 10^5, target under 1 s), and a
// real allreduce on the thread backend with a deliberately expensive user operator (the
// product of k x k matrices of doubles): allreduce/greedy_overlap against
// allreduce/reduce_then_bcast and allreduce/ring, each with the model's prediction beside it
// (counter predicted_ms: the simulator's makespan under a model whose gamma is the measured
// cost of one combine, beta of one copied element, alpha of one one-element message).
//
//   bench_reduction --benchmark_filter=Greedy
//   bench_reduction --benchmark_filter=MatrixAllreduce --benchmark_repetitions=3
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

namespace pl = algorithms::planners;

void BM_GreedyOptimal(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) {
    auto tree = pl::greedy_optimal(n, {1, 1});
    benchmark::DoNotOptimize(tree.length);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_GreedyOptimal)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);

void BM_EmitGreedyReduce(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  CostModel model;
  model.gamma = 1;
  model.duplex = Duplex::kHalf;
  model.overlap = true;
  const auto spec = make_spec(CollectiveKind::kReduce, p, 1000);
  for (auto _ : state) {
    auto schedule = algorithms::build("reduce/greedy_overlap", spec, {}, model);
    benchmark::DoNotOptimize(schedule.ranks.data());
  }
  state.SetItemsProcessed(state.iterations() * p);
}
BENCHMARK(BM_EmitGreedyReduce)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// ---- real execution with an expensive operator ----------------------------------------------

// out = left * right for n k x k row-major matrices of doubles (out may alias either).
CombineFn matrix_product(int k) {
  return [k](const std::byte* left, const std::byte* right, std::byte* out, Count n) {
    const auto kk = static_cast<std::size_t>(k) * static_cast<std::size_t>(k);
    std::vector<double> a(kk);
    std::vector<double> b(kk);
    std::vector<double> c(kk);
    for (Count e = 0; e < n; ++e) {
      const auto offset = static_cast<std::size_t>(e) * kk * sizeof(double);
      std::memcpy(a.data(), left + offset, kk * sizeof(double));
      std::memcpy(b.data(), right + offset, kk * sizeof(double));
      std::fill(c.begin(), c.end(), 0.0);
      for (int i = 0; i < k; ++i) {
        for (int l = 0; l < k; ++l) {
          const double x = a[static_cast<std::size_t>(i * k + l)];
          for (int j = 0; j < k; ++j)
            c[static_cast<std::size_t>(i * k + j)] += x * b[static_cast<std::size_t>(l * k + j)];
        }
      }
      std::memcpy(out + offset, c.data(), kk * sizeof(double));
    }
  };
}

// Rank r's matrices: I + 0.01 (r + 1) J for one fixed J, so all of them commute (they are
// polynomials in J) and the product may be formed in any order: the operator is declared
// commutative (allreduce/ring needs it) while every combine is a full k^3 matrix product.
std::vector<double> input_of(int k, Rank r, Count n) {
  const auto kk = static_cast<std::size_t>(k) * static_cast<std::size_t>(k);
  std::vector<double> m(kk * static_cast<std::size_t>(n));
  for (Count e = 0; e < n; ++e) {
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < k; ++j) {
        const double jij = static_cast<double>((i * 7 + j * 3 + e) % 5 - 2) / k;
        m[static_cast<std::size_t>(e) * kk + static_cast<std::size_t>(i * k + j)] =
            (i == j ? 1.0 : 0.0) + 0.01 * (r + 1) * jij;
      }
    }
  }
  return m;
}

using Clock = std::chrono::steady_clock;

template <typename Fn>
double median_seconds(int reps, Fn fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

ThreadWorld& world_of(Rank p) {
  static std::map<Rank, std::unique_ptr<ThreadWorld>> worlds;
  auto& world = worlds[p];
  if (!world) world = std::make_unique<ThreadWorld>(p);
  return *world;
}

// One allreduce of n k x k matrices on p threads, ready to run.
class MatrixAllreduce {
 public:
  MatrixAllreduce(const std::string& algorithm, int k, Rank p, Count n, const CostModel& model)
      : world_(world_of(p)),
        type_(Datatype::user("matrix", static_cast<std::size_t>(k * k) * sizeof(double))),
        op_(ReduceOp::user("matmul", true, matrix_product(k))) {
    auto spec = make_spec(CollectiveKind::kAllreduce, p, n);
    spec.elem_bytes = type_.bytes;
    schedule_ = algorithms::build(algorithm, spec, {}, model);
    for (Rank r = 0; r < p; ++r) {
      inputs_.push_back(input_of(k, r, n));
      outputs_.emplace_back(inputs_.back().size(), 0.0);
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
  const Schedule& schedule() const { return schedule_; }

 private:
  ThreadWorld& world_;
  Datatype type_;
  ReduceOp op_;
  Schedule schedule_;
  std::vector<std::vector<double>> inputs_;
  std::vector<std::vector<double>> outputs_;
  std::uint32_t epoch_ = 0;
};

// The model for k x k matrices (units: elements, times in seconds), measured once per k.
CostModel calibrated(int k, Count n) {
  static std::map<int, CostModel> models;
  if (const auto it = models.find(k); it != models.end()) return it->second;
  CostModel m;
  m.ports = 1;
  m.duplex = Duplex::kHalf;
  m.overlap = true;
  const auto combine = matrix_product(k);
  auto a = input_of(k, 0, n);
  const auto b = input_of(k, 1, n);
  const auto* bytes_a = reinterpret_cast<std::byte*>(a.data());
  const auto* bytes_b = reinterpret_cast<const std::byte*>(b.data());
  m.gamma = median_seconds(
                7, [&] { combine(bytes_a, bytes_b, reinterpret_cast<std::byte*>(a.data()), n); }) /
            static_cast<double>(n);
  std::vector<double> c(a.size());
  m.beta = median_seconds(7, [&] { std::memcpy(c.data(), b.data(), b.size() * sizeof(double)); }) /
           static_cast<double>(n);
  m.copy = m.beta;
  // alpha: from a one-element allreduce/linear on 2 threads (two messages and one combine),
  // the whole run (thread hand-off included): (t - gamma) / 2 - beta per message.
  MatrixAllreduce probe("allreduce/linear", k, 2, 1, m);
  probe.run();
  const double t = median_seconds(21, [&] { probe.run(); });
  m.alpha = std::max(0.0, (t - m.gamma) / 2 - m.beta);
  models[k] = m;
  return m;
}

const char* const kAlgorithms[] = {"allreduce/greedy_overlap", "allreduce/reduce_then_bcast",
                                   "allreduce/ring"};

void BM_MatrixAllreduce(benchmark::State& state) {
  const std::string algorithm = kAlgorithms[state.range(0)];
  const auto k = static_cast<int>(state.range(1));
  const auto p = static_cast<Rank>(state.range(2));
  const Count n = state.range(3);
  const CostModel model = calibrated(k, n);
  MatrixAllreduce allreduce(algorithm, k, p, n, model);
  allreduce.run();
  for (auto _ : state) allreduce.run();
  state.SetLabel(algorithm);
  state.counters["predicted_ms"] = simulate(allreduce.schedule(), model).makespan * 1e3;
  state.counters["gamma_us"] = model.gamma * 1e6;
  state.counters["alpha_us"] = model.alpha * 1e6;
}
BENCHMARK(BM_MatrixAllreduce)
    ->ArgNames({"alg", "k", "p", "n"})
    ->ArgsProduct({{0, 1, 2}, {8, 20}, {2, 4, 8}, {64}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace optcoll

BENCHMARK_MAIN();
