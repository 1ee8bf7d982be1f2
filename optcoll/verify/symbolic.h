// SPDX-License-Identifier: Apache-2.0
// File: the semantic check, by symbolic execution (docs/design.md, Verifier choices). Every buffer
// element holds undefined or a value {index, ranks}: "element `index` of the combination of the
// inputs of `ranks`". Inputs start as model/collective.h's initial_contents(); Copy and
// messages move values; Reduce and RecvReduce combine two values, which must be defined,
// have equal indices and disjoint rank sets (for non-commutative operators: adjacent rank
// ranges, in the order the op's Side gives). The outputs must then equal expected_output().
#pragma once

#include <span>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"
#include "optcoll/verify/diagnostics.h"
#include "optcoll/verify/flat_schedule.h"

namespace optcoll::verify_detail {

// Replays the ops in `starts` order (EventOrder::starts) and reports bad combinations; if
// `check_outputs` (the order is complete), compares every rank's output buffer with the
// postcondition, reporting at most a few mismatches per rank.
void check_semantics(const Schedule& schedule, const FlatSchedule& flat, const Layout& layout,
                     std::span<const GlobalOp> starts, bool check_outputs, DiagnosticList& out);

}  // namespace optcoll::verify_detail
