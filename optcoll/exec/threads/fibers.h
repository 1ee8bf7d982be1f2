// SPDX-License-Identifier: Apache-2.0
// File: FiberPool: the ranks of a thread world as fibers on a few worker threads, for worlds
// with more ranks than CPUs (docs/design.md, "Ranks as fibers"). A rank that waits for a message
// parks its fiber and its worker switches to another rank in about 10 ns, where an OS thread would
// yield its CPU to the kernel scheduler (a system call and a context switch, microseconds on a VM,
// and eight threads on two CPUs took turns in whatever order the kernel chose).
//
// Each rank has a fiber with a stack of its own (mapped once with the pool, below a guard
// page). Rank r starts on worker r % W; a worker runs the ready fibers it
// holds in turn, and a worker that has nothing ready takes a ready fiber from another worker
// (so a rank that blocks its worker in a system call, a sleep or a long computation does not
// hold up the ranks parked beside it). A parked fiber is ready once the news counter it
// parked on changed or its deadline passed. A worker with nothing ready spins for a moment,
// then sleeps until a poke() (a rank's news changed) or the earliest deadline.
//
// Context switches are Boost.Context's (fcontext); the switches are annotated for
// AddressSanitizer and ThreadSanitizer, whose builds run the same code.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "optcoll/exec/transport.h"

namespace optcoll::threads {

class FiberPool {
 public:
  using Clock = std::chrono::steady_clock;

  // Up to `workers` threads (at least 1, at most nranks) for `nranks` >= 1 fibers, each with
  // a stack of `stack_bytes` (virtual memory; pages are committed as the rank touches them).
  // The caller of run() is worker 0, the others are started here and wait between runs.
  // Throws TransportError when a stack cannot be mapped.
  FiberPool(Rank nranks, int workers, std::size_t stack_bytes);
  ~FiberPool();
  FiberPool(const FiberPool&) = delete;
  FiberPool& operator=(const FiberPool&) = delete;

  int workers() const;

  // Runs body(r) on rank r's fiber, for every rank, and returns when all have returned.
  // body must not throw. One run at a time.
  void run(const std::function<void(Rank)>& body);

  // From rank's own fiber: parks it until `news` differs from `seen` or `deadline` has
  // passed, running other fibers meanwhile. May return early (the caller re-checks).
  void park(Rank rank, const std::atomic<std::uint32_t>& news, std::uint32_t seen,
            Clock::time_point deadline);

  // rank's news changed: wakes its worker if it sleeps. Call after the change (any thread).
  void poke(Rank rank);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace optcoll::threads
