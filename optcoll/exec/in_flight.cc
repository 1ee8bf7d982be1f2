// SPDX-License-Identifier: Apache-2.0
// File: CollectivesInFlight: one wait_some() per pass, its completions offered to every run.
#include "optcoll/exec/in_flight.h"

#include <algorithm>

#include "optcoll/exec/wait_error.h"
#include "optcoll/model/error.h"

namespace optcoll {

CollectivesInFlight::~CollectivesInFlight() {
  try {
    while (!runs_.empty()) wait(*runs_.front());
  } catch (...) {  // NOLINT(bugprone-empty-catch): nobody is left to tell
  }
}

CollectivesInFlight::Handle CollectivesInFlight::start(Execution& execution, BufferBinding buffers,
                                                       const Datatype& type, const ReduceOp& op,
                                                       const ExecOptions& options,
                                                       std::shared_ptr<const void> owner) {
  auto entry = std::make_shared<Entry>(execution);
  entry->run = std::make_unique<ExecutionRun>(execution, transport_, buffers, type, op, options);
  if (!entry->run->finished()) {
    entry->owner = std::move(owner);
    runs_.push_back(entry);
  }
  return entry;
}

void CollectivesInFlight::restart(const Handle& entry, const ExecOptions& options,
                                  std::shared_ptr<const void> owner) {
  OPTCOLL_CHECK(entry->failure == nullptr && entry->run->finished(),
                "restart of a collective that is in flight or failed");
  Execution& execution = entry->execution;
  entry->run->restart(execution, options);
  if (!entry->run->finished()) {
    entry->owner = std::move(owner);
    runs_.push_back(entry);
  }
}

template <typename Fail>
void CollectivesInFlight::fail_all(Fail fail) {
  for (const Handle& entry : runs_) {
    if (entry->failure == nullptr) entry->failure = std::make_exception_ptr(fail(*entry->run));
    entry->owner.reset();
  }
  runs_.clear();
}

void CollectivesInFlight::drop_done() {
  // A run out of the set needs its owner no longer: whoever holds the handle keeps what it
  // runs (a persistent request holds its last run, which holds no owner: no cycle).
  std::erase_if(runs_, [](const Handle& entry) {
    if (!entry->done()) return false;
    entry->owner.reset();
    return true;
  });
}

bool CollectivesInFlight::progress(std::chrono::milliseconds timeout) {
  // Every run in the set is unfinished, so it has messages in flight (ExecutionRun::waiting).
  if (runs_.empty()) return false;
  completed_.clear();
  try {
    transport_.wait_some(timeout, completed_);
  } catch (const TransportError& e) {
    const std::string cause = e.what();
    fail_all([&cause](const ExecutionRun& run) { return run.failure(cause); });
    return true;
  }
  bool changed = false;
  bool any_done = false;
  // (absorb() never touches the set: runs leave it below, after the pass.)
  for (const Handle& entry : runs_) {
    try {
      changed = entry->run->absorb(completed_) || changed;
    } catch (...) {
      entry->failure = std::current_exception();
      changed = true;
    }
    any_done = any_done || entry->done();
  }
  if (any_done) drop_done();
  return changed;
}

bool CollectivesInFlight::test(Entry& entry) {
  if (!entry.done()) progress(std::chrono::milliseconds{0});
  if (entry.failure) std::rethrow_exception(entry.failure);
  return entry.run->finished();
}

void CollectivesInFlight::wait(Entry& entry) {
  while (!entry.done()) {
    // (A completion of a request abandoned earlier changes no run, but is no timeout.)
    if (progress(entry.run->options().timeout) || !completed_.empty()) continue;
    // A whole timeout without progress on any run: give up on all of them.
    const WaitError mine = entry.run->timeout();
    transport_.abort(mine.what());
    fail_all([](const ExecutionRun& run) { return run.timeout(); });
  }
  if (entry.failure) std::rethrow_exception(entry.failure);
}

}  // namespace optcoll
