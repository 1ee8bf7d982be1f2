// SPDX-License-Identifier: Apache-2.0
// File: the fixed cost of one collective call through the Communicator on the thread
// backend: back-to-back calls of 1 element (bcast, allreduce, allgather) on p threads, each
// rank's Communicator kept across iterations (so the plan is made once and prepared). What is
// measured is the executor's and the transport's per-call and per-message overhead, not data
// movement: the number every small collective pays (issue 7: the thread backend against MPI at 8
// B). p = 1 has no message at all. The allreduce also nonblocking and persistent, each
// started and waited for at once: what a request costs over the blocking call. With more ranks than
// cores each p runs twice: as threads and as fibers (docs/design.md, "Ranks as fibers").
//
//   bench_call --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

constexpr int kCallsPerIteration = 1000;

// A thread world of p ranks with one Communicator per rank, kept for the whole program, so
// that the calls are planned once (the first iteration) and every later call is prepared.
struct World {
  World(Rank p, RankExecution execution)
      : threads(p, WorldOptions{std::chrono::seconds(30), execution}),
        cache(std::make_shared<PlanCache>()),
        comms(p) {}
  ThreadWorld threads;
  std::shared_ptr<PlanCache> cache;
  std::vector<std::unique_ptr<Communicator>> comms;  // made by each rank in its first run
};

World& world_of(Rank p, RankExecution execution) {
  static std::map<std::pair<Rank, RankExecution>, std::unique_ptr<World>> worlds;
  auto& world = worlds[{p, execution}];
  if (!world) world = std::make_unique<World>(p, execution);
  return *world;
}

// Runs kCallsPerIteration calls of `collective` per benchmark iteration on every rank of a
// ThreadWorld of p threads; reports microseconds per call.
void run_calls(benchmark::State& state, const std::string& collective) {
  const auto p = static_cast<Rank>(state.range(0));
  World& world =
      world_of(p, state.range(1) == 0 ? RankExecution::kThreads : RankExecution::kFibers);
  std::atomic<bool> correct{true};
  for (auto _ : state) {
    world.threads.run([&](Transport& transport) {
      auto& slot = world.comms[static_cast<std::size_t>(transport.rank())];
      if (!slot) slot = std::make_unique<Communicator>(transport, world.cache);
      Communicator& comm = *slot;
      const auto np = static_cast<std::size_t>(comm.size());
      std::vector<double> in(1, comm.rank() + 1.0);
      std::vector<double> out(1, 0.0);
      std::vector<double> all(np, 0.0);
      Request persistent;
      if (collective == "allreduce_persistent") {
        persistent = comm.allreduce_init<double>(in, out, "sum");
      }
      for (int i = 0; i < kCallsPerIteration; ++i) {
        if (collective == "bcast") {
          out[0] = comm.rank() == 0 ? 42.0 : 0.0;
          comm.bcast<double>(out, 0);
          if (out[0] != 42.0) correct = false;
        } else if (collective == "allreduce") {
          comm.allreduce<double>(in, out, "sum");
          if (out[0] != static_cast<double>(np * (np + 1) / 2)) correct = false;
        } else if (collective == "allreduce_nonblocking") {
          comm.iallreduce<double>(in, out, "sum").wait();
          if (out[0] != static_cast<double>(np * (np + 1) / 2)) correct = false;
        } else if (collective == "allreduce_persistent") {
          persistent.start();
          persistent.wait();
          if (out[0] != static_cast<double>(np * (np + 1) / 2)) correct = false;
        } else {
          comm.allgather<double>(in, all);
          if (all[np - 1] != static_cast<double>(np)) correct = false;
        }
      }
    });
  }
  if (!correct) state.SkipWithError("wrong result");
  state.SetItemsProcessed(state.iterations() * kCallsPerIteration);
  state.counters["us_per_call"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kCallsPerIteration) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Bcast(benchmark::State& state) { run_calls(state, "bcast"); }
void BM_Allreduce(benchmark::State& state) { run_calls(state, "allreduce"); }
void BM_Allgather(benchmark::State& state) { run_calls(state, "allgather"); }
// The same allreduce started and waited for at once: nonblocking (iallreduce + wait) and
// persistent (start + wait of one allreduce_init): their cost over the blocking call.
void BM_AllreduceNonblocking(benchmark::State& state) { run_calls(state, "allreduce_nonblocking"); }
void BM_AllreducePersistent(benchmark::State& state) { run_calls(state, "allreduce_persistent"); }

// The transport alone, below the Communicator and the interpreter: each rank sends one
// double to its partner (rank ^ 1) and receives one from it, then waits for both, as an 8 B
// allreduce at p = 2 does. What is left of a call's time above this is the layers' cost.
void BM_TransportExchange(benchmark::State& state) {
  const auto p = static_cast<Rank>(state.range(0));
  World& world =
      world_of(p, state.range(1) == 0 ? RankExecution::kThreads : RankExecution::kFibers);
  std::atomic<bool> correct{true};
  std::uint32_t epoch = 0;
  for (auto _ : state) {
    ++epoch;
    world.threads.run([&](Transport& transport) {
      const Rank partner = transport.rank() ^ 1;
      if (partner >= transport.size()) return;
      double mine = transport.rank() + 1.0;
      double theirs = 0.0;
      std::vector<RequestId> done;
      done.reserve(4);
      for (int i = 0; i < kCallsPerIteration; ++i) {
        const MsgKey key{epoch, i};
        transport.isend(partner, key, std::as_bytes(std::span(&mine, 1)));
        transport.irecv(partner, key, std::as_writable_bytes(std::span(&theirs, 1)));
        for (std::size_t got = 0; got < 2;) {
          done.clear();
          transport.wait_some(std::chrono::milliseconds{30000}, done);
          got += done.size();
        }
        if (theirs != partner + 1.0) correct = false;
      }
    });
  }
  if (!correct) state.SkipWithError("wrong result");
  state.SetItemsProcessed(state.iterations() * kCallsPerIteration);
  state.counters["us_per_call"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kCallsPerIteration) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The same rank counts for every call: one rank (no messages), two, and more ranks than
// cores, there as threads (fibers:0) and as fibers (fibers:1, what auto chooses there). Two
// ranks also as fibers: what auto chooses where the processors are busy with other work
// (issue 29's two busy loops).
void per_rank_count(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"p", "fibers"});
  for (const int p : {1, 2}) bench->Args({p, 0});
  bench->Args({2, 1});
  for (const int p : {8, 16}) {
    bench->Args({p, 0});
    bench->Args({p, 1});
  }
  bench->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Bcast)->Apply(per_rank_count);
BENCHMARK(BM_Allreduce)->Apply(per_rank_count);
BENCHMARK(BM_Allgather)->Apply(per_rank_count);
BENCHMARK(BM_AllreduceNonblocking)->Apply(per_rank_count);
BENCHMARK(BM_AllreducePersistent)->Apply(per_rank_count);
BENCHMARK(BM_TransportExchange)->Apply(per_rank_count);

}  // namespace
}  // namespace optcoll

BENCHMARK_MAIN();
