// SPDX-License-Identifier: Apache-2.0
// File: ThreadWorld: p ranks as threads of one process, connected by in-memory mailboxes.
// The embedded default backend: no setup, real data, real concurrency. Ranks 1..p-1 run on
// threads started once, with the world, that serve every run() (a persistent pool); rank 0
// runs on the thread that calls run(). See world.cc for why (measurements).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "optcoll/exec/transport.h"

namespace optcoll {

struct WorldOptions {
  // A rank that waits this long with no progress fails; every other rank then fails too.
  std::chrono::milliseconds timeout{30000};
};

class ThreadWorld {
 public:
  // Starts p-1 threads. Throws Error(kInvalidArgument) for nranks < 1 or a timeout <= 0.
  explicit ThreadWorld(Rank nranks, WorldOptions options = {});
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  Rank size() const;
  const WorldOptions& options() const;

  // Runs fn(transport) once per rank, each on its own thread (transport.rank() tells which;
  // rank 0 on the calling thread), and returns when all have returned. If any rank throws,
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
