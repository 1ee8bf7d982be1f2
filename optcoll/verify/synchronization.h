// SPDX-License-Identifier: Apache-2.0
// File: the barrier check: every rank finishes only after every other rank has started.
// It uses only the happens-before edges that hold under every protocol: `after` edges and
// start(send) -> done(recv). (Under an eager protocol a send completes without its receive
// being posted, so a rank that only sends learns nothing about its peers.)
#pragma once

#include <span>

#include "optcoll/verify/diagnostics.h"
#include "optcoll/verify/flat_schedule.h"

namespace optcoll::verify_detail {

// Computes, in `starts` order (a complete EventOrder::starts), for each op the set of ranks
// one of whose ops starts before the op completes, as bitsets over blocks of up to 512
// ranks per sweep; a rank passes when the union over its ops holds every rank. Returns false
// (and reports nothing) when the work, ceil(p / 64) x (ops + dependencies) word operations,
// would exceed 2^30: dissemination at p above ~20000.
bool check_synchronization(const FlatSchedule& flat, std::span<const GlobalOp> starts,
                           DiagnosticList& out);

}  // namespace optcoll::verify_detail
