// SPDX-License-Identifier: Apache-2.0
// File: ReductionTree -> Recv / Reduce / Send steps (see greedy_schedule.h).
#include "optcoll/algorithms/planners/greedy_schedule.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/planners/greedy_transfers.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

struct Labels {
  std::vector<Rank> rank;  // per machine
  std::vector<Side> side;  // per machine: where its subtree lies relative to its parent's
};

std::vector<Rank> subtree_sizes(const ReductionTree& tree) {
  std::vector<Rank> size(tree.parent.size(), 1);
  for (std::size_t v = tree.parent.size(); v-- > 1;)
    size[static_cast<std::size_t>(tree.parent[v])] += size[v];
  return size;
}

// Which of the sink's children lie left of it so that their sizes sum to `root` (subset sum
// over the sink's few children); nullopt if none does.
std::optional<std::vector<bool>> left_children(const ReductionTree& tree,
                                               const std::vector<Rank>& size, Rank root) {
  const auto& kids = tree.children[0];
  const auto width = static_cast<std::size_t>(root) + 1;
  // reach[k * width + s]: the first k children can make s.
  std::vector<char> reach((kids.size() + 1) * width, 0);
  reach[0] = 1;
  for (std::size_t k = 0; k < kids.size(); ++k) {
    const auto w = static_cast<std::size_t>(size[static_cast<std::size_t>(kids[k])]);
    for (std::size_t s = 0; s < width; ++s) {
      const bool ok = reach[k * width + s] || (s >= w && reach[k * width + s - w]);
      reach[(k + 1) * width + s] = ok ? 1 : 0;
    }
  }
  if (!reach[kids.size() * width + width - 1]) return std::nullopt;
  std::vector<bool> left(kids.size(), false);
  std::size_t s = width - 1;
  for (std::size_t k = kids.size(); k-- > 0;) {
    if (reach[k * width + s]) continue;  // reachable without child k
    left[k] = true;
    s -= static_cast<std::size_t>(size[static_cast<std::size_t>(kids[k])]);
  }
  return left;
}

// Pre-order labelling: a machine takes the lowest rank of its range and its children follow
// in receive order, on its right. The sink sits at `root`: the children in `left` fill the
// ranks below it (the first received nearest to it), the others the ranks above.
Labels label(const ReductionTree& tree, Rank root, const std::vector<bool>& left) {
  const auto n = tree.parent.size();
  const auto size = subtree_sizes(tree);
  Labels labels{std::vector<Rank>(n, 0), std::vector<Side>(n, Side::kRight)};
  labels.rank[0] = root;
  Rank below = root;
  Rank above = root + 1;
  const auto& sink_kids = tree.children[0];
  for (std::size_t k = 0; k < sink_kids.size(); ++k) {
    const auto c = static_cast<std::size_t>(sink_kids[k]);
    if (left[k]) {
      below -= size[c];
      labels.rank[c] = below;
      labels.side[c] = Side::kLeft;
    } else {
      labels.rank[c] = above;
      above += size[c];
    }
  }
  // Parents have smaller indices: their rank is known before their children's.
  for (std::size_t v = 1; v < n; ++v) {
    Rank next = labels.rank[v] + 1;
    for (const auto c : tree.children[v]) {
      labels.rank[static_cast<std::size_t>(c)] = next;
      next += size[static_cast<std::size_t>(c)];
    }
  }
  return labels;
}

// Commutative operators: the pre-order labelling rotated so that the sink is `root`.
Labels rotated(const ReductionTree& tree, Rank root) {
  const std::vector<bool> none(tree.children[0].size(), false);
  Labels labels = label(tree, 0, none);
  const auto p = static_cast<Rank>(tree.parent.size());
  for (auto& r : labels.rank) r = (r + root) % p;
  return labels;
}

// Segment i of `segments` nearly equal pieces of `count`: [first, first + len).
std::pair<Count, Count> segment_bounds(Count count, int segments, int i) {
  const Count base = count / segments;
  const Count extra = count % segments;
  return {i * base + std::min<Count>(i, extra), base + (i < extra ? 1 : 0)};
}

// Every machine's receive slots: slot 0 is its accumulator (the result on the sink).
std::vector<std::vector<Slice>> receive_slots(ScheduleBuilder& b, const ReductionTree& tree,
                                              const Labels& labels, Count count, Slice result) {
  std::vector<std::vector<Slice>> slots(tree.parent.size());
  for (std::size_t v = 0; v < slots.size(); ++v) {
    for (std::size_t k = 0; k < tree.children[v].size(); ++k) {
      const bool sink_acc = v == 0 && k == 0;
      slots[v].push_back(sink_acc ? result : b.scratch(labels.rank[v], count));
    }
  }
  return slots;
}

void emit(ScheduleBuilder& b, const ReductionTree& tree, const Labels& labels, Slice contribution,
          Slice result, int segments) {
  const auto n = tree.parent.size();
  const auto slots = receive_slots(b, tree, labels, contribution.count, result);
  std::vector<OpId> previous_recv(n, kNoOp);
  for (int s = 0; s < segments; ++s) {
    const auto [first, len] = segment_bounds(contribution.count, segments, s);
    const Slice own = sub(contribution, first, len);
    // Children have larger indices than their parent: decreasing index is a post-order.
    for (std::size_t v = n; v-- > 0;) {
      const Rank at = labels.rank[v];
      const auto& kids = tree.children[v];
      if (kids.empty()) {
        if (v == 0) b.copy(at, own, sub(result, first, len));
        continue;
      }
      const Slice acc = sub(slots[v][0], first, len);
      for (std::size_t k = 0; k < kids.size(); ++k) {
        const auto c = static_cast<std::size_t>(kids[k]);
        const Slice from = tree.children[c].empty() ? own : sub(slots[c][0], first, len);
        const Slice slot = sub(slots[v][k], first, len);
        const auto t = b.transfer(labels.rank[c], at, from, slot);
        // Algorithm 2: the send starts at its fixed time, which keeps at most K transfers
        // in progress (greedy_transfers.h); no data hazard or rank order could say it.
        if (!tree.send_start.empty()) b.set_not_before(labels.rank[c], t.send, tree.send_start[c]);
        // Receives are served in the tree's order, segment after segment (the model's FIFO
        // by arrival, docs/math/reduction-overlap.md §1, §3): without this, the simulator could
        // start a later child's transfer first when both are ready at once, and the fixed reduction
        // order would then wait for it.
        b.add_dependency(at, previous_recv[v], t.recv);
        if (t.recv != kNoOp) previous_recv[v] = t.recv;
        if (k == 0) {
          // The first child's slot becomes the accumulator: own element on the other side.
          b.reduce(at, own, acc, labels.side[c] == Side::kRight ? Side::kLeft : Side::kRight);
        } else {
          b.reduce(at, slot, acc, labels.side[c]);
        }
      }
    }
  }
}

}  // namespace

ReductionCosts reduction_costs(const CollectiveSpec& spec, Count count, const CostModel& model) {
  const Rank to = spec.nranks > 1 ? 1 : 0;
  const Time d = model.transfer_time(0, to, count, spec.elem_bytes);
  const Time c = model.reduce_time(count, spec.elem_bytes);
  if (!model.overlap) return {.d = 0, .c = d + c};
  return {.d = d, .c = c};
}

ReductionTree plan_greedy_tree(Rank nranks, const ReductionCosts& costs, std::int64_t transfers,
                               std::int64_t reducers) {
  if (transfers > 0 && reducers > 0)
    throw_invalid("limit either transfers ({}) or reducers ({}), not both", transfers, reducers);
  if (transfers > 0) return greedy_transfers(nranks, costs, transfers);
  if (reducers > 0) return greedy_reducers(nranks, costs, reducers);
  return greedy_optimal(nranks, costs);
}

int greedy_algorithm_for(std::int64_t transfers, std::int64_t reducers) {
  if (transfers > 0) return 2;
  return reducers > 0 ? 3 : 1;
}

std::optional<std::string> greedy_param_mismatch(std::int64_t transfers, std::int64_t reducers,
                                                 std::string_view greedy) {
  if (greedy == "auto") return std::nullopt;
  const int wanted = greedy_algorithm_for(transfers, reducers);
  if (greedy == std::to_string(wanted)) return std::nullopt;
  if (greedy != "1" && greedy != "2" && greedy != "3") {
    return fmt::format("greedy must be auto, 1, 2 or 3, got '{}'", greedy);
  }
  return fmt::format(
      "greedy={} does not fit transfers={}, reducers={}: Algorithm 1 takes no limit, "
      "Algorithm 2 is transfers=K, Algorithm 3 is reducers=K (these call for greedy={})",
      greedy, transfers, reducers, wanted);
}

GreedyOverlapTree plan_greedy_overlap(const CollectiveSpec& spec, const CostModel& model,
                                      std::int64_t transfers, std::int64_t reducers,
                                      std::string_view greedy) {
  if (const auto mismatch = greedy_param_mismatch(transfers, reducers, greedy)) {
    throw Error(ErrorCode::kInvalidArgument, *mismatch);
  }
  if (transfers > 0 && !model.overlap) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("transfers={} (Canon & Antoniu's Algorithm 2) needs a model where "
                            "reduction overlaps communication (overlap): without it transfers "
                            "take no time in the paper's model (d' = 0, c' = d + c), so a limit "
                            "on them means nothing; reducers=K (Algorithm 3) applies",
                            transfers));
  }
  GreedyOverlapTree result;
  result.tree =
      plan_greedy_tree(spec.nranks, reduction_costs(spec, spec.count, model), transfers, reducers);
  result.algorithm = greedy_algorithm_for(transfers, reducers);
  result.params =
      fmt::format("transfers={},reducers={},greedy={}", transfers, reducers, result.algorithm);
  return result;
}

int choose_segments(const CollectiveSpec& spec, Count count, const CostModel& model) {
  if (!model.overlap || count <= 1 || spec.nranks <= 1) return 1;
  int best = 1;
  Time best_estimate = 0;
  for (const int segments : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}) {
    if (segments > count) break;
    const Count piece = (count + segments - 1) / segments;
    const auto costs = reduction_costs(spec, piece, model);
    const auto tree = greedy_optimal(spec.nranks, costs);
    Time busiest = 0;
    for (std::size_t v = 0; v < tree.children.size(); ++v) {
      const auto kids = static_cast<Time>(tree.children[v].size());
      const Time port = (kids + (v == 0 ? 0 : 1)) * costs.d;
      busiest = std::max({busiest, port, kids * costs.c});
    }
    const Time estimate = tree.length + (segments - 1) * busiest;
    if (segments == 1 || estimate < best_estimate) {
      best = segments;
      best_estimate = estimate;
    }
  }
  return best;
}

bool emit_greedy_reduce(ScheduleBuilder& b, const ReductionTree& tree, Slice contribution,
                        Slice result, Rank root, int segments) {
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  OPTCOLL_CHECK(segments == 1 || tree.send_start.empty(),
                "fixed start times are for one segment, not {}", segments);
  OPTCOLL_CHECK(static_cast<Rank>(tree.parent.size()) == b.nranks(),
                "tree of {} machines for {} ranks", tree.parent.size(), b.nranks());
  if (b.spec().commutative) {
    emit(b, tree, rotated(tree, root), contribution, result, segments);
    return false;
  }
  if (auto left = left_children(tree, subtree_sizes(tree), root)) {
    emit(b, tree, label(tree, root, *left), contribution, result, segments);
    return false;
  }
  const std::vector<bool> none(tree.children[0].size(), false);
  const Slice partial = b.scratch(0, contribution.count);
  emit(b, tree, label(tree, 0, none), contribution, partial, segments);
  b.transfer(0, root, partial, result);
  return true;
}

bool greedy_reduce_forwards(const ReductionTree& tree, Rank root, bool commutative) {
  return !commutative && !left_children(tree, subtree_sizes(tree), root);
}

}  // namespace optcoll::algorithms::planners
