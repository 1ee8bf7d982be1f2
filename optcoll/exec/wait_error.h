// SPDX-License-Identifier: Apache-2.0
// File: WaitError, the TransportError an Execution throws when its collective ends while it
// waits: with what it was waiting for, for the hang reports (optcoll/api/hang_report.h) the
// C API writes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "optcoll/model/error.h"
#include "optcoll/model/types.h"

namespace optcoll {

// A rank's collective ended without completing: what it was waiting for, for hang reports
// (optcoll/api/hang_report.h). `waiting_for`: the peers of its messages in flight, sorted;
// `timed_out`: it found no progress for its timeout itself (else another rank's failure, or
// a wrong message, ended its wait).
class WaitError : public TransportError {
 public:
  WaitError(const std::string& what, Rank rank, std::vector<Rank> waiting_for, bool timed_out)
      : TransportError(what),
        rank_(rank),
        waiting_for_(std::move(waiting_for)),
        timed_out_(timed_out) {}
  Rank rank() const { return rank_; }
  const std::vector<Rank>& waiting_for() const { return waiting_for_; }
  bool timed_out() const { return timed_out_; }

 private:
  Rank rank_;
  std::vector<Rank> waiting_for_;
  bool timed_out_;
};

}  // namespace optcoll
