// SPDX-License-Identifier: Apache-2.0
// File: ThreadWorld: p ranks in one process, connected by in-memory mailboxes. The embedded
// default backend: no setup, real data, real concurrency. With no more ranks than CPUs each
// rank is a thread: ranks 1..p-1 run on threads started once, with the world, that serve
// every run() (a persistent pool), and rank 0 runs on the thread that calls run(). With more
// ranks than CPUs, or while other programs oversubscribe the node when a run starts, the
// ranks are fibers on one worker thread per CPU (fibers.h): a rank that waits lets another
// rank run in nanoseconds instead of yielding its CPU to the kernel. See world.cc for why
// (measurements).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "optcoll/exec/transport.h"

namespace optcoll {

// How the ranks of a world run.
enum class RankExecution {
  kAuto,     // more ranks than the CPUs this process may use: fibers; otherwise chosen at
             // each run(): threads, or fibers while other programs oversubscribe the node
             // (spin_wait.h, node_oversubscribed: a rank thread that loses its CPU there
             // waits a time slice for each message, a fiber hands over in nanoseconds)
  kThreads,  // a thread per rank, however many
  kFibers,   // fibers on worker threads (WorldOptions::workers)
};

struct WorldOptions {
  // A rank that waits this long with no progress fails; every other rank then fails too.
  std::chrono::milliseconds timeout{30000};
  RankExecution execution = RankExecution::kAuto;
  // Fibers: the worker threads (at most one per rank); 0: one per CPU this process may use.
  int workers = 0;
  // Fibers: each rank's stack (virtual memory, committed as it is touched), as a thread's.
  std::size_t fiber_stack_bytes = std::size_t{8} << 20;
};

// The processors this process may run on (its affinity mask; the machine's count where there
// is none), 0 if unknown: what the ranks of a world share, auto's threshold for fibers, and
// the `cores` (CostModel::cores) that `optcoll calibrate` writes.
int allowed_processors();

class ThreadWorld {
 public:
  // Starts the threads (p-1 as threads, workers-1 as fibers). Throws Error(kInvalidArgument)
  // for nranks < 1, a timeout <= 0, a negative worker count or a fiber stack under 64 KiB,
  // and TransportError when the fibers' stacks cannot be mapped.
  explicit ThreadWorld(Rank nranks, WorldOptions options = {});
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  Rank size() const;
  const WorldOptions& options() const;
  // Whether the last run's ranks ran as fibers (before the first run: whether they would
  // on an idle node). The options and the CPUs decide, and for kAuto with no more ranks than
  // CPUs the node's load at the start of each run.
  bool fibers() const;
  // Whether the last run's ranks spun while they waited (threads, a CPU each): then their
  // large copies are shared (ThreadTransport::kShareBytes). Before the first run: whether
  // they would on an idle node.
  bool spins() const;
  // The threads the last run's ranks ran on: one per rank, or the fibers' workers.
  int threads() const;
  // "8 threads" or "8 ranks as fibers on 2 threads", for reports.
  std::string describe() const;
  // The memory a world of `nranks` ranks takes before any message: the mailboxes of its p²
  // rank pairs, and what each rank's stack touches (an estimate, for callers that must
  // refuse a world that cannot fit before they make it).
  static std::size_t bytes_for(Rank nranks);

  // Runs fn(transport) once per rank (transport.rank() tells which) and returns when all
  // have returned. As threads: each rank on its own thread, rank 0 on the calling thread. As
  // fibers: the calling thread is one of the workers, and a rank may move between workers
  // while it waits, so fn must not rely on its thread's identity or thread_local state, and
  // a rank must wait for another only through the transport: a rank that blocks (a lock, a
  // sleep, a spin on a flag) holds its worker, and while the other workers take over the
  // ranks that are ready, a world whose workers are all blocked waits until one returns.
  // If any rank throws,
  // the others are woken and fail too, and run() throws one Error whose message names every
  // failed rank and what it was waiting for, the original cause first; its code is that of
  // the original cause if it was an optcoll::Error, kTransport (TransportError) otherwise.
  // The world stays usable after a failure: every run starts with empty mailboxes, so
  // nothing left from an earlier run can match. One run at a time; fn must not call run().
  void run(const std::function<void(Transport&)>& fn);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace optcoll
