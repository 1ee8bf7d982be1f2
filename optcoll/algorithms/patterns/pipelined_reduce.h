// SPDX-License-Identifier: Apache-2.0
// File: a pipelined tree reduction for models without compute/communication overlap.
//
// emit_tree_reduce (tree_bcast_reduce.h) leaves every rank free to start receiving segment s+1
// before it has reduced segment s; the simulator's start order (ready time first) then
// starts that transfer first and, without overlap, the reduction of s waits for it: every
// stage costs two messages instead of one. This emitter makes each rank's work on segment
// s+1 wait for its reductions of segment s when the model has no overlap, which gives the
// textbook pipeline (one message plus one reduction per stage).
#pragma once

#include <span>

#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Same contract as emit_tree_reduce: combines `contribution` (the same slice on every rank)
// up `tree` into `result` on the root, in `segments` pieces (larger pieces first), in rank
// order whenever every subtree is a contiguous rank range met outward from its parent.
// `serialize_segments`: add the per-rank ordering described above (pass !model.overlap).
void emit_pipelined_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                           Slice result, int segments, bool serialize_segments);

// Several trees with one root: segment s goes up trees[s mod trees.size()] (double trees).
// A rank accumulates in one scratch area whichever trees it is inner in.
void emit_pipelined_reduce(ScheduleBuilder& b, std::span<const TreeShape> trees, Slice contribution,
                           Slice result, int segments, bool serialize_segments);

}  // namespace optcoll::algorithms::patterns
