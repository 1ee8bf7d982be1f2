// SPDX-License-Identifier: Apache-2.0
// File: the parameters of the tree algorithm families.
#include "optcoll/algorithms/tree_params.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace optcoll::algorithms {
namespace {

constexpr std::int64_t kMaxRadix = 1 << 20;
// "auto" stops at 1024 segments: the schedule grows by one message per tree edge per
// segment, while the pipeline's fill term (slots − fanout)·ceil(count/S)·c it still shrinks is
// by then at most (slots − fanout)/1024 of the bandwidth term (only α ≈ 0 models want more;
// an explicit segment size still gets up to 2^16).
constexpr Count kMaxAutoSegments = 1 << 10;

std::optional<std::int64_t> integer_param(const Params& params, std::string_view name) {
  if (!params.has(name)) return std::nullopt;
  try {
    return params.get_int(name);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::span<const ParamInfo> radix_params() {
  static constexpr std::array<ParamInfo, 1> kParams{
      {{"radix", "4", "tree radix k >= 2 (children per digit position)"}}};
  return kParams;
}

std::span<const ParamInfo> segment_params() {
  static constexpr std::array<ParamInfo, 1> kParams{
      {{"segment", "auto",
        "elements per pipeline segment, or auto: the count that minimizes the cost formula"}}};
  return kParams;
}

std::optional<std::string> radix_why_not(const CollectiveSpec& /*spec*/, const Params& params) {
  const auto radix = integer_param(params, "radix");
  if (radix && *radix >= 2 && *radix <= kMaxRadix) return std::nullopt;
  return fmt::format("radix must be an integer in [2, {}], got '{}'", kMaxRadix,
                     params.has("radix") ? params.get("radix") : "");
}

std::optional<std::string> segment_why_not(const CollectiveSpec& /*spec*/, const Params& params) {
  if (!params.has("segment") || params.get("segment") == "auto") return std::nullopt;
  const auto segment = integer_param(params, "segment");
  if (segment && *segment >= 1) return std::nullopt;
  return fmt::format("segment must be 'auto' or a positive integer, got '{}'",
                     params.get("segment"));
}

LinkCost link_cost(const CostModel& model, const CollectiveSpec& spec) {
  const Rank to = spec.nranks > 1 ? 1 : 0;
  const double unit = model.units(1, spec.elem_bytes);
  return {.alpha = model.latency(0, to),
          .beta = model.per_unit(0, to) * unit,
          .gamma = model.gamma * unit};
}

Count resolve_segments(const Params& params, Count count, const SegmentCost& cost, double hint) {
  if (count <= 0) return 1;
  if (params.has("segment") && params.get("segment") != "auto") {
    const Count segment = params.get_int("segment");
    if (segment >= count) return 1;  // (also keeps count + segment − 1 from overflowing)
    return std::clamp<Count>((count + segment - 1) / segment, 1, kMaxSegments);
  }
  const double limit = 4.0 * std::max(1.0, std::isfinite(hint) ? hint : 1.0) + 64.0;
  const Count last =
      std::min<Count>({count, kMaxAutoSegments,
                       static_cast<Count>(std::min(limit, static_cast<double>(kMaxAutoSegments)))});
  Count best = 1;
  Time best_time = cost(1);
  for (Count s = 2; s <= last; ++s) {
    const Time t = cost(s);
    if (t < best_time) {
      best = s;
      best_time = t;
    }
  }
  return best;
}

Time pipelined_tree_cost(const LinkCost& link, std::int64_t slots, std::int64_t fanout, Count count,
                         Count segments, bool reduce) {
  if (slots <= 0) return 0;
  const Count largest = (count + segments - 1) / segments;
  const Time per = link.beta + (reduce ? link.gamma : 0);
  return static_cast<Time>(slots - fanout) * link.message(largest, reduce) +
         static_cast<Time>(fanout) *
             (static_cast<Time>(segments) * link.alpha + static_cast<Time>(count) * per);
}

Count pipelined_segments(const Params& params, const LinkCost& link, std::int64_t slots,
                         std::int64_t fanout, Count count, bool reduce) {
  const Time per = link.beta + (reduce ? link.gamma : 0);
  const double hint = std::sqrt(
      static_cast<double>(std::max<std::int64_t>(0, slots - fanout)) * static_cast<double>(count) *
      per /
      (static_cast<double>(std::max<std::int64_t>(1, fanout)) * std::max(link.alpha, 1e-300)));
  return resolve_segments(
      params, count,
      [&](Count s) { return pipelined_tree_cost(link, slots, fanout, count, s, reduce); }, hint);
}

std::string segment_param_text(Count count, Count segments) {
  return fmt::format("segment={}", count <= 0 ? 0 : (count + segments - 1) / segments);
}

}  // namespace optcoll::algorithms
