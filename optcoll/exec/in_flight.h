// SPDX-License-Identifier: Apache-2.0
// File: CollectivesInFlight, the collectives one rank has in flight on one transport at once
// (nonblocking and persistent collectives). Each is an ExecutionRun of its own epoch; one
// wait_some() on the transport learns what completed for all of them, and every run takes in
// its own completions. A run advances only inside this class's calls (test, wait, progress:
// the caller's test/wait and every collective it starts), so a collective whose next step
// depends on a message this rank received progresses while the caller calls in, not while
// it computes; what the transport moves by itself (a message already posted) moves anyway.
//
//   CollectivesInFlight in_flight(transport);
//   auto a = in_flight.start(execution_a, buffers_a, type, op, options_a);  // epoch e
//   auto b = in_flight.start(execution_b, buffers_b, type, op, options_b);  // epoch e + 1
//   compute();
//   in_flight.wait(*b);  // also advances a
//   in_flight.wait(*a);
//
// Failures: a run whose op fails keeps its WaitError, leaves the set, and raises it at its
// test() or wait(); a failure of the transport itself fails every run. A wait that sees no
// run progress for the run's timeout aborts the transport (Transport::abort) and fails every
// run with the timeout, naming what each waits for.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <vector>

#include "optcoll/exec/executor.h"
#include "optcoll/exec/transport.h"

namespace optcoll {

class CollectivesInFlight {
 public:
  // A collective in flight, and the error that ended it, if any.
  struct Entry {
    explicit Entry(Execution& of) : execution(of) {}
    Execution& execution;
    std::shared_ptr<const void> owner;  // keeps the Execution alive while in the set
    std::unique_ptr<ExecutionRun> run;
    std::exception_ptr failure;
    bool done() const { return failure != nullptr || run->finished(); }
  };
  using Handle = std::shared_ptr<Entry>;

  explicit CollectivesInFlight(Transport& transport) : transport_(transport) {}
  // Completes what is still in flight (a rank's peers may need its messages); errors are
  // dropped. The transport must outlive it.
  ~CollectivesInFlight();
  CollectivesInFlight(const CollectivesInFlight&) = delete;
  CollectivesInFlight& operator=(const CollectivesInFlight&) = delete;

  // Starts a run of `execution` (ExecutionRun: the checks throw here, before anything is
  // sent) and keeps it until it is done, whether or not the caller keeps the handle.
  // `owner`, if given, is kept as long as the run: what keeps `execution`, `type` and `op`
  // alive (they must outlive the run).
  Handle start(Execution& execution, BufferBinding buffers, const Datatype& type,
               const ReduceOp& op, const ExecOptions& options,
               std::shared_ptr<const void> owner = {});
  // Starts `entry` (done, without a failure, and of this set) again: its run's restart()
  // with `options`. What a persistent request does at its next start.
  void restart(const Handle& entry, const ExecOptions& options,
               std::shared_ptr<const void> owner = {});
  // Takes in what completed within `timeout` (zero: what has completed already) for every
  // run; returns whether any run changed. Never throws for a run's failure (it keeps it).
  bool progress(std::chrono::milliseconds timeout);
  // Whether `entry` is done, after one progress(0); throws its failure.
  bool test(Entry& entry);
  // Progresses until `entry` is done; throws its failure, or its timeout.
  void wait(Entry& entry);
  // How many runs are in flight.
  std::size_t size() const { return runs_.size(); }
  bool empty() const { return runs_.empty(); }

 private:
  // Fails every run with what `fail(run)` says (a transport failure, a timeout).
  template <typename Fail>
  void fail_all(Fail fail);
  void drop_done();

  Transport& transport_;
  std::vector<Handle> runs_;
  std::vector<RequestId> completed_;
};

}  // namespace optcoll
