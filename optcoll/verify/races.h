// SPDX-License-Identifier: Apache-2.0
// File: the race check. Two ops of one rank that no chain of `after` dependencies orders
// may run at the same time (the thread executor does run them so): they must not both write
// an element, nor may one read an element the other writes.
#pragma once

#include "optcoll/schedule/schedule.h"
#include "optcoll/verify/diagnostics.h"
#include "optcoll/verify/flat_schedule.h"

namespace optcoll::verify_detail {

// Sweeps each rank's ops in index order (a topological order of `after`), keeping per cell
// the last writer and the readers since, like the builder's hazard tracker; each conflict
// must then be ordered: directly in `after` (the usual case), else through a backward search
// over `after` edges that never goes below the earlier op's index.
void check_races(const Schedule& schedule, const FlatSchedule& flat, DiagnosticList& out);

}  // namespace optcoll::verify_detail
