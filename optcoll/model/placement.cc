// SPDX-License-Identifier: Apache-2.0
// File: placements: construction, parsing, checks (placement.h).
#include "optcoll/model/placement.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// The most ranks a placement holds (Rank is 32-bit).
constexpr std::int64_t kMaxRanks = 0x7fffffff;

// A whole number in [min, max] from `text`, or an error naming `what`.
std::int64_t read_whole(std::string_view text, std::string_view what, std::int64_t min,
                        std::int64_t max) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) {
    throw_invalid("placement: {} \"{}\" is not a whole number", what, text);
  }
  if (value < min || value > max) {
    throw_invalid("placement: {} {} is out of range [{}, {}]", what, value, min, max);
  }
  return value;
}

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::int32_t Placement::nodes() const {
  if (node_of.empty()) return 0;
  return *std::max_element(node_of.begin(), node_of.end()) + 1;
}

std::vector<std::vector<Rank>> Placement::members() const {
  std::vector<std::vector<Rank>> out(static_cast<std::size_t>(nodes()));
  for (Rank r = 0; r < nranks(); ++r) {
    out[static_cast<std::size_t>(node_of[static_cast<std::size_t>(r)])].push_back(r);
  }
  return out;
}

bool Placement::in_blocks() const {
  for (std::size_t r = 1; r < node_of.size(); ++r) {
    const std::int32_t step = node_of[r] - node_of[r - 1];
    if (step != 0 && step != 1) return false;
  }
  return node_of.empty() || node_of.front() == 0;
}

Placement block_placement(std::int32_t nodes, Rank per_node) {
  if (nodes < 1 || per_node < 1) {
    throw_invalid("placement: {} nodes of {} ranks; both must be at least 1", nodes, per_node);
  }
  if (static_cast<std::int64_t>(nodes) * per_node > kMaxRanks) {
    throw_invalid("placement: {} x {} ranks is more than {}", nodes, per_node, kMaxRanks);
  }
  Placement placement;
  placement.node_of.reserve(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(per_node));
  for (std::int32_t n = 0; n < nodes; ++n)
    placement.node_of.insert(placement.node_of.end(), static_cast<std::size_t>(per_node), n);
  return placement;
}

Placement even_block_placement(Rank p, std::int32_t nodes) {
  if (p < 1 || nodes < 1 || nodes > p) {
    throw_invalid("placement: {} ranks cannot fill {} nodes (each node needs a rank)", p, nodes);
  }
  Placement placement;
  placement.node_of.reserve(static_cast<std::size_t>(p));
  const Rank base = p / nodes;
  const Rank extra = p % nodes;
  for (std::int32_t n = 0; n < nodes; ++n) {
    const Rank size = base + (n < extra ? 1 : 0);
    placement.node_of.insert(placement.node_of.end(), static_cast<std::size_t>(size), n);
  }
  return placement;
}

Placement parse_placement(std::string_view text) {
  const auto x = text.find('x');
  const bool list = std::any_of(text.begin(), text.end(), is_separator);
  if (x != std::string_view::npos && !list) {
    const auto nodes = read_whole(text.substr(0, x), "node count", 1, kMaxRanks);
    const auto per_node = read_whole(text.substr(x + 1), "ranks per node", 1, kMaxRanks);
    return block_placement(static_cast<std::int32_t>(nodes), static_cast<Rank>(per_node));
  }
  Placement placement;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && is_separator(text[at])) ++at;
    std::size_t end = at;
    while (end < text.size() && !is_separator(text[end])) ++end;
    if (end == at) break;
    const std::string what =
        fmt::format("entry {} (rank {})", placement.node_of.size(), placement.node_of.size());
    placement.node_of.push_back(
        static_cast<std::int32_t>(read_whole(text.substr(at, end - at), what, 0, kMaxRanks - 1)));
    at = end;
  }
  if (placement.node_of.empty()) {
    throw_invalid("placement \"{}\" is empty: give NxM or a node id per rank", text);
  }
  validate(placement);
  return placement;
}

std::string to_string(const Placement& placement) {
  const std::int32_t nodes = placement.nodes();
  if (nodes > 0 && placement.nranks() % nodes == 0 &&
      placement == block_placement(nodes, placement.nranks() / nodes)) {
    return fmt::format("{}x{}", nodes, placement.nranks() / nodes);
  }
  return fmt::format("{}", fmt::join(placement.node_of, ","));
}

void validate(const Placement& placement) {
  if (placement.node_of.empty()) throw_invalid("placement is empty: it needs a node per rank");
  std::vector<bool> used(placement.node_of.size(), false);
  for (std::size_t r = 0; r < placement.node_of.size(); ++r) {
    const std::int32_t node = placement.node_of[r];
    if (node < 0 || static_cast<std::size_t>(node) >= placement.node_of.size()) {
      throw_invalid(
          "placement: rank {} has node id {}; ids run from 0 to {} (one rank per node at most)", r,
          node, placement.node_of.size() - 1);
    }
    used[static_cast<std::size_t>(node)] = true;
  }
  const std::int32_t nodes = placement.nodes();
  for (std::int32_t n = 0; n < nodes; ++n) {
    if (!used[static_cast<std::size_t>(n)]) {
      throw_invalid("placement: node {} holds no rank (node ids must be 0..{} with each used)", n,
                    nodes - 1);
    }
  }
}

void validate_for(const Placement& placement, Rank nranks) {
  validate(placement);
  if (placement.nranks() != nranks) {
    throw_invalid("placement {} has {} ranks but the collective has {}", to_string(placement),
                  placement.nranks(), nranks);
  }
}

}  // namespace optcoll
