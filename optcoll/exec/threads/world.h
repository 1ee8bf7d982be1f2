// SPDX-License-Identifier: Apache-2.0
// File: ThreadWorld: p ranks as threads of one process, connected by in-memory mailboxes.
// The embedded default backend: no setup, real data, real concurrency.
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
  explicit ThreadWorld(Rank nranks, WorldOptions options = {});  // throws for nranks < 1
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  Rank size() const;
  const WorldOptions& options() const;

  // Runs fn(transport) on `size()` threads, one per rank (transport.rank() tells which),
  // and returns when all have returned. If any rank throws, the others are woken and fail
  // too, and run() throws one Error (TransportError if a transport failure or timeout was
  // involved) whose message names every failed rank and what it was waiting for. The
  // world stays usable for further run() calls after a failure.
  void run(const std::function<void(Transport&)>& fn);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace optcoll
