// SPDX-License-Identifier: Apache-2.0
// File: compositions of two collectives as one schedule (allreduce = reduce + bcast,
// allgather(v) = gather(v) + bcast, reduce_scatter(_block) = reduce + scatter(v),
// bcast = scatterv + allgatherv), so that selection can offer "the best reduce followed by
// the best bcast" whenever that beats every registry algorithm (the consistency guard of
// docs/design.md, Selection).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// How a composition splits a call: the two phase specs, and where each phase's input and
// output buffers live in the composed call's buffers on each rank (scratch: a "handoff"
// region of handoff[r] elements at the start of the composed scratch; each phase's own
// scratch follows it).
struct Composition {
  CollectiveSpec first;
  CollectiveSpec second;
  std::vector<Count> handoff;  // per rank
  // (phase 0 or 1, rank, kInput or kOutput) -> the composed slice that buffer maps to.
  std::function<Slice(int, Rank, Buf)> place;
};

// The composition for `spec`'s kind, if it has one.
std::optional<Composition> composition_for(const CollectiveSpec& spec);

// Both phases' schedules, renamed into the composed buffers, message sequence numbers
// continued per ordered pair, and on every rank the second phase's first ops ordered after
// all of the first phase's ops (the phases may overlap across ranks, never on one rank).
// Throws InternalError when a phase touches elements outside its mapped slices.
Schedule compose(const CollectiveSpec& spec, const Composition& composition, const Schedule& first,
                 const Schedule& second);

}  // namespace optcoll
