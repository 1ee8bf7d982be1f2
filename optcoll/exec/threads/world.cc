// SPDX-License-Identifier: Apache-2.0
// File: ThreadWorld: a persistent pool of threads for ranks 1..p-1, started with the world;
// rank 0 runs on the thread that calls run(). run() resets the fabric, starts every rank on
// the function, waits for all of them, and turns their failures into one exception (the
// original cause first).
//
// Measured choices (p = 2 allreduce/ring of 8 MiB doubles, 2 CPUs of a VM, Linux 6.18):
// - A pool: a run costs a semaphore release per rank rather than p thread creations, which
//   matters when a world executes many small collectives.
// - The caller is rank 0: when it woke p workers and went to sleep, the woken threads were
//   placed while its CPU was still busy, so two ranks often shared one CPU.
// - Spreading: Linux tends to queue a woken thread on the waker's CPU even when another CPU
//   is idle, and then keeps it there (its "previous CPU"). So when there are no more ranks
//   than allowed CPUs, a worker that finds itself on the CPU of a lower rank narrows its
//   affinity for a moment to leave it, and restores it at once: a nudge, not a binding (a
//   bound thread waits whenever another process uses its CPU). The allreduce took a median
//   0.8-1.0 ms with it, 1.5 ms without (both ranks on one CPU); two memcpy of 8 MiB: 1.16 ms.
// - Spinning: in the same case, waiting ranks (and idle workers) spin before they sleep
//   (spin_wait.h): an empty run() went from 38 us to 0.8 us.
// - Fibers (docs/design.md, "Ranks as fibers"), with more ranks than CPUs: eight ranks as threads
// on 2 CPUs took
//   turns through sched_yield and the kernel's choice of whom to run (a bcast of 8 B: 0.8-2.4
//   us per call from run to run, allreduce 9-18 us); as fibers on two workers 0.52-0.55 us
//   and 3.2-3.6 us (bench_call). Blocks of neighbouring ranks share a worker: a tree's or a
//   ring's messages then mostly stay on one CPU (bcast: 0.65 us with ranks dealt round
//   robin).
#include "optcoll/exec/threads/world.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <semaphore>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "optcoll/exec/spin_wait.h"
#include "optcoll/exec/threads/fibers.h"
#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// The CPU the calling thread runs on now, or -1.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// Moves the calling thread off the CPUs in `taken`, if it runs on one of them and may run
// elsewhere, by narrowing its affinity and restoring it right away. Returns its CPU then.
int step_aside(const std::vector<int>& taken) {
  int mine = current_cpu();
#if defined(__linux__)
  if (mine < 0 || std::find(taken.begin(), taken.end(), mine) == taken.end()) return mine;
  cpu_set_t allowed;
  if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) != 0) return mine;
  cpu_set_t narrowed = allowed;
  for (const int cpu : taken) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &narrowed);
  }
  if (CPU_COUNT(&narrowed) == 0) return mine;
  if (pthread_setaffinity_np(pthread_self(), sizeof(narrowed), &narrowed) == 0) {
    pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
    mine = current_cpu();
  }
#endif
  return mine;
}

// The least stack a fiber gets: the executor and a rank's function need a few pages.
constexpr std::size_t kMinFiberStack = std::size_t{64} << 10;

// How a world of p ranks may run them (world.h, RankExecution): always as threads, always as
// fibers, or, for kAuto with no more ranks than CPUs, chosen at each run (threads on an idle
// node, fibers while it is oversubscribed).
enum class Modes { kThreads, kFibers, kPerRun };
Modes modes_for(Rank p, RankExecution execution, int cpus) {
  switch (execution) {
    case RankExecution::kThreads:
      return Modes::kThreads;
    case RankExecution::kFibers:
      return Modes::kFibers;
    case RankExecution::kAuto:
      return p > cpus ? Modes::kFibers : p > 1 ? Modes::kPerRun : Modes::kThreads;
  }
  return Modes::kThreads;
}

}  // namespace

int allowed_processors() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::thread::hardware_concurrency());
}

struct ThreadWorld::State {
  struct Failure {
    bool failed = false;
    std::optional<ErrorCode> code;  // empty for exceptions that are not optcoll::Error
    std::string message;
  };

  State(Rank p, WorldOptions world_options)
      : nranks(p),
        options(world_options),
        cpus(std::max(1, allowed_processors())),
        modes(modes_for(p, world_options.execution, cpus)),
        fibers(modes == Modes::kFibers),
        spread(!fibers && p > 1 && p <= cpus),
        fabric(p, world_options.timeout, spread.load(std::memory_order_relaxed)) {
    if (fibers) use_fibers();
    transports.reserve(static_cast<std::size_t>(p));
    go.reserve(static_cast<std::size_t>(p));
    for (Rank r = 0; r < p; ++r) {
      transports.push_back(std::make_unique<threads::ThreadTransport>(fabric, r));
      go.push_back(std::make_unique<std::binary_semaphore>(0));
    }
    failures.resize(static_cast<std::size_t>(p));
    cpu_of = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(p));
    if (modes == Modes::kFibers) return;
    workers.reserve(static_cast<std::size_t>(p));
    for (Rank r = 1; r < p; ++r) workers.emplace_back([this, r] { work(r); });
  }

  // The next run's ranks as fibers (the pool is made at the first such run) or as threads.
  void use_fibers() {
    if (!pool) {
      pool = std::make_unique<threads::FiberPool>(
          nranks, options.workers > 0 ? options.workers : cpus, options.fiber_stack_bytes);
    }
    fibers = true;
    spread.store(false, std::memory_order_relaxed);
    fabric.set_mode(/*spin=*/false, pool.get());
  }
  void use_threads() {
    fibers = false;
    spread.store(nranks > 1 && nranks <= cpus, std::memory_order_relaxed);
    fabric.set_mode(spread.load(std::memory_order_relaxed), nullptr);
  }
  // Per-run worlds: fibers while the node is oversubscribed (file comment), else threads.
  void choose_mode() {
    if (modes != Modes::kPerRun) return;
    if (node_oversubscribed(std::chrono::steady_clock::now())) {
      use_fibers();
    } else {
      use_threads();
    }
  }

  ~State() {
    stopping.store(true, std::memory_order_release);
    for (auto& g : go) g->release();
    workers.clear();  // joins
  }

  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Runs the function as rank r and records how it ended. A failure aborts the fabric at
  // once, which wakes every other rank: none of them should wait for a timeout.
  void run_rank(Rank r) {
    threads::ThreadTransport& transport = *transports[static_cast<std::size_t>(r)];
    transport.begin_run();
    Failure failure;
    try {
      (*current)(transport);
    } catch (const Error& e) {
      failure = {true, e.code(), e.what()};
    } catch (const std::exception& e) {
      failure = {true, std::nullopt, e.what()};
    } catch (...) {
      failure = {true, std::nullopt, "an exception that is not a std::exception"};
    }
    if (failure.failed) fabric.abort(r, fmt::format("rank {} failed: {}", r, failure.message));
    failures[static_cast<std::size_t>(r)] = std::move(failure);
  }

  // The worker of rank r >= 1: waits for its signal, runs, reports. The semaphores and
  // `running` carry the happens-before edges: `current` is written before the signal,
  // `failures[r]` before the decrement that the last worker turns into `all_done`.
  void work(Rank r) {
    while (true) {
      acquire(*go[static_cast<std::size_t>(r)]);
      if (stopping.load(std::memory_order_acquire)) return;
      if (spread.load(std::memory_order_relaxed)) spread_out(r);
      run_rank(r);
      if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.release();
    }
  }

  // Takes the semaphore, spinning for a moment first when ranks have CPUs of their own.
  void acquire(std::binary_semaphore& semaphore) const {
    if (spread.load(std::memory_order_relaxed) &&
        spin_wait([&] { return semaphore.try_acquire(); }, spin, SpinBudget::kLongSpin)) {
      return;
    }
    semaphore.acquire();
  }

  // Leaves the CPU of a lower rank (file comment). The CPUs are read as the ranks record
  // them: a rank that has not recorded its CPU yet is not avoided.
  void spread_out(Rank r) {
    std::vector<int> taken;
    for (Rank q = 0; q < r; ++q) {
      const int cpu = cpu_of[static_cast<std::size_t>(q)].load(std::memory_order_relaxed);
      if (cpu >= 0) taken.push_back(cpu);
    }
    cpu_of[static_cast<std::size_t>(r)].store(step_aside(taken), std::memory_order_relaxed);
  }

  // Throws one exception for every failure of the last run (nothing if there was none).
  void raise_failures() const {
    std::vector<Rank> failed;
    for (Rank r = 0; r < nranks; ++r) {
      if (failures[static_cast<std::size_t>(r)].failed) failed.push_back(r);
    }
    if (failed.empty()) return;
    // The original cause: the rank that aborted the world (it failed first).
    Rank first = fabric.abort_rank();
    if (first == kNoRank || !failures[static_cast<std::size_t>(first)].failed) {
      first = failed.front();
    }
    const Failure& cause = failures[static_cast<std::size_t>(first)];
    std::string text = fmt::format("{} of {} ranks failed; rank {} first: {}", failed.size(),
                                   nranks, first, cause.message);
    for (const Rank r : failed) {
      if (r == first) continue;
      text += fmt::format("\n  rank {}: {}", r, failures[static_cast<std::size_t>(r)].message);
    }
    const ErrorCode code = cause.code.value_or(ErrorCode::kTransport);
    switch (code) {
      case ErrorCode::kTransport:
        throw TransportError(text);
      case ErrorCode::kInternal:
        throw InternalError(text);
      default:
        throw Error(code, text);
    }
  }

  const Rank nranks;
  const WorldOptions options;
  const int cpus;  // this process may run on (at least 1)
  const Modes modes;
  bool fibers;  // the last run's ranks ran as fibers (before any: the first run's, idle)
  // Threads, no more ranks than allowed CPUs: spread ranks over CPUs, spin before sleeping
  // (as fibers the workers spin, and their ranks' threads are theirs). Set by run() before
  // it starts the workers; read by idle workers too.
  std::atomic<bool> spread;
  threads::Fabric fabric;
  std::unique_ptr<threads::FiberPool> pool;  // ranks as fibers, once a run used them
  std::vector<std::unique_ptr<threads::ThreadTransport>> transports;
  std::vector<Failure> failures;  // of the last run, one per rank

  std::mutex run_mutex;  // one run() at a time
  const std::function<void(Transport&)>* current = nullptr;
  std::vector<std::unique_ptr<std::binary_semaphore>> go;  // per worker: start a run
  std::atomic<Rank> running{0};  // workers (ranks 1..p-1) still in the run
  std::binary_semaphore all_done{0};
  const SpinBudget spin{threads::kSpinBudget};  // how long a worker or run() spins (acquire)
  std::atomic<bool> stopping{false};
  std::unique_ptr<std::atomic<int>[]> cpu_of;  // per rank: its CPU in this run, or -1

  std::vector<std::jthread> workers;  // last: started once everything above exists
};

ThreadWorld::ThreadWorld(Rank nranks, WorldOptions options) {
  if (nranks < 1) throw_invalid("a thread world needs at least one rank, got {}", nranks);
  if (options.timeout.count() <= 0) {
    throw_invalid("thread world timeout must be positive, got {} ms", options.timeout.count());
  }
  if (options.workers < 0) {
    throw_invalid("a thread world's fiber workers must be 0 (one per CPU) or more, got {}",
                  options.workers);
  }
  if (options.fiber_stack_bytes < kMinFiberStack) {
    throw_invalid("a thread world's fiber stacks must have at least {} bytes, got {}",
                  kMinFiberStack, options.fiber_stack_bytes);
  }
  state_ = std::make_unique<State>(nranks, options);
}

ThreadWorld::~ThreadWorld() = default;

Rank ThreadWorld::size() const { return state_->nranks; }

const WorldOptions& ThreadWorld::options() const { return state_->options; }

bool ThreadWorld::fibers() const { return state_->fibers; }

bool ThreadWorld::spins() const { return state_->spread.load(std::memory_order_relaxed); }

int ThreadWorld::threads() const {
  return state_->fibers ? state_->pool->workers() : static_cast<int>(state_->nranks);
}

std::size_t ThreadWorld::bytes_for(Rank nranks) {
  constexpr std::size_t kTouchedStackBytes = std::size_t{16} << 10;  // per rank, typical
  return threads::Fabric::bytes_for(nranks) + static_cast<std::size_t>(nranks) * kTouchedStackBytes;
}

std::string ThreadWorld::describe() const {
  const auto threads_text = [](int n) { return fmt::format("{} thread{}", n, n == 1 ? "" : "s"); };
  if (!fibers()) return threads_text(state_->nranks);
  return fmt::format("{} ranks as fibers on {}", state_->nranks, threads_text(threads()));
}

void ThreadWorld::run(const std::function<void(Transport&)>& fn) {
  State& s = *state_;
  const std::lock_guard run_lock(s.run_mutex);
  s.fabric.reset();
  for (auto& failure : s.failures) failure = State::Failure{};
  s.current = &fn;
  s.choose_mode();
  if (s.spread.load(std::memory_order_relaxed)) {
    for (Rank r = 1; r < s.nranks; ++r) s.cpu_of[static_cast<std::size_t>(r)].store(-1);
    s.cpu_of[0].store(current_cpu());
  }
  if (s.fibers) {
    s.pool->run([&s](Rank r) { s.run_rank(r); });
  } else {
    s.running.store(s.nranks - 1, std::memory_order_relaxed);
    for (Rank r = 1; r < s.nranks; ++r) s.go[static_cast<std::size_t>(r)]->release();
    s.run_rank(0);  // on the calling thread (see the file comment)
    if (s.nranks > 1) s.acquire(s.all_done);
  }
  s.current = nullptr;
  s.raise_failures();
}

}  // namespace optcoll
