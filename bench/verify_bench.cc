// SPDX-License-Identifier: Apache-2.0
// File: verifier throughput on large schedules: bcast/binomial at p = 2^20 (count 1000) and
// allreduce/ring at p = 1024 (count 2^20, ~5M ops). Each schedule is built once; the
// benchmark times verify() alone and reports ops per second.
//
//   build-verify/bench/bench_verify --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/verify/verify.h"

namespace optcoll {
namespace {

const Schedule& bcast_binomial() {
  static const Schedule s =
      algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 1 << 20, 1000));
  return s;
}

const Schedule& allreduce_ring() {
  static const Schedule s = algorithms::build(
      "allreduce/ring", make_spec(CollectiveKind::kAllreduce, 1024, Count{1} << 20));
  return s;
}

const Schedule& barrier_dissemination() {
  static const Schedule s =
      algorithms::build("barrier/dissemination", make_spec(CollectiveKind::kBarrier, 4096, 0));
  return s;
}

void run(benchmark::State& state, const Schedule& schedule) {
  bool ok = true;
  for (auto _ : state) {
    const VerifyReport report = verify(schedule);
    ok = ok && report.ok();
    benchmark::DoNotOptimize(report);
  }
  if (!ok) state.SkipWithError("schedule did not verify");
  const auto ops = static_cast<double>(schedule.op_count());
  state.counters["ops"] = ops;
  state.counters["ops_per_second"] =
      benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_VerifyBcastBinomial(benchmark::State& state) { run(state, bcast_binomial()); }
void BM_VerifyAllreduceRing(benchmark::State& state) { run(state, allreduce_ring()); }
void BM_VerifyBarrierDissemination(benchmark::State& state) { run(state, barrier_dissemination()); }

BENCHMARK(BM_VerifyBcastBinomial)->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(BM_VerifyAllreduceRing)->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(BM_VerifyBarrierDissemination)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace optcoll

BENCHMARK_MAIN();
