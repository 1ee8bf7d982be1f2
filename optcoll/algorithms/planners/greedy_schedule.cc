// SPDX-License-Identifier: Apache-2.0
// File: ReductionTree -> Recv / Reduce / Send steps (see greedy_schedule.h).
#include "optcoll/algorithms/planners/greedy_schedule.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "optcoll/algorithms/patterns/slices.h"
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

void emit(ScheduleBuilder& b, const ReductionTree& tree, const Labels& labels, Slice contribution,
          Slice result) {
  const auto n = tree.parent.size();
  std::vector<Slice> value(n, contribution);  // what each machine sends: input or accumulator
  // Children have larger indices than their parent: decreasing index is a post-order.
  for (std::size_t v = n; v-- > 0;) {
    const Rank at = labels.rank[v];
    const auto& kids = tree.children[v];
    if (kids.empty()) {
      if (v == 0) b.copy(at, contribution, result);
      continue;
    }
    Slice acc = v == 0 ? result : b.scratch(at, contribution.count);
    OpId previous_recv = kNoOp;
    for (std::size_t k = 0; k < kids.size(); ++k) {
      const auto c = static_cast<std::size_t>(kids[k]);
      const Slice slot = k == 0 ? acc : b.scratch(at, contribution.count);
      const auto t = b.transfer(labels.rank[c], at, value[c], slot);
      // Receives are served in the tree's order (the model's FIFO by arrival, spec §1.3):
      // without this, the simulator could start a later child's transfer first when both
      // are ready at once, and the fixed reduction order would then wait for it.
      b.add_dependency(at, previous_recv, t.recv);
      if (t.recv != kNoOp) previous_recv = t.recv;
      if (k == 0) {
        // The first child's slot becomes the accumulator: own element on the other side.
        b.reduce(at, contribution, acc,
                 labels.side[c] == Side::kRight ? Side::kLeft : Side::kRight);
      } else {
        b.reduce(at, slot, acc, labels.side[c]);
      }
    }
    value[v] = acc;
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
    throw Error(ErrorCode::kInvalidArgument, "limit either transfers or reducers, not both");
  // Algorithm 2's fixed start times order transfers across ranks, which a schedule cannot
  // express (dependencies are per rank), and its tree run as soon as possible exceeds the
  // limit (measured: p = 16, K = 1, d < c: 7 transfers at once). Algorithm 3's tree keeps it
  // by construction (K receivers with one port each) and is as short when d >= c (Thm 10).
  if (transfers > 0) return greedy_reducers(nranks, costs, transfers);
  if (reducers > 0) return greedy_reducers(nranks, costs, reducers);
  return greedy_optimal(nranks, costs);
}

bool emit_greedy_reduce(ScheduleBuilder& b, const ReductionTree& tree, Slice contribution,
                        Slice result, Rank root) {
  OPTCOLL_CHECK(static_cast<Rank>(tree.parent.size()) == b.nranks(),
                "tree of {} machines for {} ranks", tree.parent.size(), b.nranks());
  if (b.spec().commutative) {
    emit(b, tree, rotated(tree, root), contribution, result);
    return false;
  }
  if (auto left = left_children(tree, subtree_sizes(tree), root)) {
    emit(b, tree, label(tree, root, *left), contribution, result);
    return false;
  }
  const std::vector<bool> none(tree.children[0].size(), false);
  const Slice partial = b.scratch(0, contribution.count);
  emit(b, tree, label(tree, 0, none), contribution, partial);
  b.transfer(0, root, partial, result);
  return true;
}

}  // namespace optcoll::algorithms::planners
