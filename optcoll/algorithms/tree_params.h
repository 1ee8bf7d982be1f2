// SPDX-License-Identifier: Apache-2.0
// File: the parameters of the tree algorithm families (radix, segment) — their declarations,
// why_not checks, and the resolution of segment=auto from the cost model.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms {

// "radix" (default 4).
std::span<const ParamInfo> radix_params();
// "segment": elements per pipeline segment, or "auto" (default).
std::span<const ParamInfo> segment_params();

// why_not: radix must be an integer in [2, 2^20]; segment "auto" or a positive integer.
std::optional<std::string> radix_why_not(const CollectiveSpec& spec, const Params& params);
std::optional<std::string> segment_why_not(const CollectiveSpec& spec, const Params& params);

// Per-element costs of one point-to-point message of the spec's elements under `model`
// (rank 0 to rank 1: uniform models are what the cost formulas are written for).
struct LinkCost {
  Time alpha = 0;
  Time beta = 0;   // per element
  Time gamma = 0;  // per element reduced
  // α + count·β (+ count·γ when `reduce`).
  Time message(Count count, bool reduce) const {
    return alpha + static_cast<Time>(count) * (beta + (reduce ? gamma : 0));
  }
};
LinkCost link_cost(const CostModel& model, const CollectiveSpec& spec);

// The most segments resolve_segments gives: an explicit segment size that would need more
// gets kMaxSegments (algorithms that must not round it say so in their why_not).
inline constexpr Count kMaxSegments = Count{1} << 16;

// The number of segments for `count` elements: from params' "segment" (elements per
// segment: ceil(count / segment) segments), or for "auto" the S in [1, count] that
// minimizes cost(S) (searched exhaustively up to 4·hint + 64; ties: the smallest S) among
// S <= 1024. Never more than kMaxSegments.
// At least 1 (also for count = 0).
using SegmentCost = std::function<Time(Count segments)>;
Count resolve_segments(const Params& params, Count count, const SegmentCost& cost, double hint);

// The pipelined cost of a tree with `slots` unpipelined one-port slots (patterns::
// bcast_slots / reduce_slots) whose busiest rank handles `fanout` messages per segment, for
// S segments of `count` elements (the larger ceil(count/S) first):
//   (slots − fanout)·(α + ceil(count/S)·c) + fanout·(S·α + count·c),  c = β (+ γ if reduce).
// (= (slots − fanout + fanout·S)·(α + (count/S)·c) when S divides count.)
Time pipelined_tree_cost(const LinkCost& link, std::int64_t slots, std::int64_t fanout, Count count,
                         Count segments, bool reduce);
// The S that minimizes pipelined_tree_cost (resolve_segments with that cost).
Count pipelined_segments(const Params& params, const LinkCost& link, std::int64_t slots,
                         std::int64_t fanout, Count count, bool reduce);

// "segment=<elements of the largest segment>" for ScheduleBuilder::set_params.
std::string segment_param_text(Count count, Count segments);

}  // namespace optcoll::algorithms
