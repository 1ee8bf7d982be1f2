// SPDX-License-Identifier: Apache-2.0
// File: the two-block planner (Träff 2019, Lemma 2 and TWO_Gatherv;
// docs/math/gather-scatter-trees.md §7).
//
// Classes. For a threshold t among the distinct block sizes, the large class is {r : m_r >= t}
//   and the small class the rest. t = the smallest size gives one class (a single adaptive
//   binomial tree over all ranks, gatherv/adaptive_binomial's tree); every other distinct size
//   is tried too, and the split with the least predicted cost wins. With two distinct sizes
//   that is the obvious split or one class; zeros are just the smallest size.
// Trees. Each class is gathered over its members in rank order (renumbered 0..n-1): the root's
//   class with the root fixed, the other class at the root its tree picks itself. The split is
//   searched with Träff's adaptive binomial tree (Proposition 1) per class: O(p) per class, so
//   the whole search is O(d·p·log p) for d distinct sizes, where the optimal DP (O(n^3) per
//   class) would make it O(d·p^3); within a class the blocks are equal (two sizes) or close,
//   where a binomial tree is what the DP finds too (tree_dp_test
//   BinomialIsOptimalOnRegularProblems), and it is what TWO_Gatherv uses (the library's regular
//   gather). Then the optimal ordered DP's trees (optimal_tree, homogeneous, O(n^3)) are
//   planned for the chosen split and for one class, and the cheapest of the three joined plans
//   wins. One class with the DP's tree is gatherv/optimal's tree, so under a homogeneous model
//   the plan is never slower than gatherv/optimal. Planning cost at p = 2000 (alpha = 100,
//   copy = 1, root 1000): Spikes 2.7 s, Random 3.4 s, Increasing (2000 distinct sizes) 5.1 s,
//   of which the threshold search is at most 0.5 s and the rest the two DP runs (one fixed-root
//   optimal_tree alone: 2.8 s).
// Joining. The other class's sub-root sends its whole collection to the root in one message,
//   as one more item of the root; every place among the root's items (before or after its
//   copy and each of its children) is tried and the cheapest kept.
// Placement. The classes interleave in rank order, so a segment can arrive at the root whose
//   blocks are not one slice of the root's buffer. As in TWO_Gatherv (which receives it through
//   an MPI derived datatype), it is received in ONE message straight into the runs of
//   consecutive ranks it forms there (a RecvSlices; scatter: a SendSlices), which the model
//   prices as any message of its size: no copy. So positioned_completion_time is the tree's
//   Definition 2 time, and Lemma 2's non-ordered optimum copy·b_L + alpha + beta(p-1)b_S is
//   reached wherever the large block sits (docs/design.md, "Two-block gather/scatter").
// Pair matrices: the class trees are planned with alpha and beta; every cost is evaluated with
//   the matrices (positioned_completion_time uses GatherProblem::message(from, to, M)).
#include "optcoll/algorithms/planners/two_block.h"

#include <algorithm>
#include <string>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_positioned_gather_scatter.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::planners {
namespace {

std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

// Definition 2 over a tree emitted by the positioned emitters, by parts: fold() computes every
// node's completion and segment size below `start`; root_time() folds the root's items for a
// given child order and copy slot from those values. Every message costs its segment's
// message, wherever its blocks land in the root's buffer.
class PositionedTimes {
 public:
  PositionedTimes(const TreeShape& shape, const std::vector<int>& copy_slot,
                  const std::vector<Rank>& positions, const GatherProblem& pb)
      : shape_(shape), slot_(copy_slot), pb_(pb) {
    const auto p = shape.children.size();
    OPTCOLL_CHECK(p == pb.sizes.size() && copy_slot.size() == p && positions.size() == p,
                  "tree, positions and problem differ in size");
    done_.assign(p, 0);
    total_.assign(p, 0);
  }

  // Post-order by an explicit stack: (node, expanded?).
  void fold(Rank start) {
    std::vector<std::pair<Rank, bool>> stack{{start, false}};
    while (!stack.empty()) {
      const auto [v, expanded] = stack.back();
      stack.pop_back();
      const auto& kids = shape_.children[at(v)];
      if (!expanded) {
        stack.emplace_back(v, true);
        for (const Rank c : kids) stack.emplace_back(c, false);
        continue;
      }
      total_[at(v)] = pb_.sizes[at(v)];
      for (const Rank c : kids) total_[at(v)] += total_[at(c)];
      done_[at(v)] = items(v, kids, slot_[at(v)], v == shape_.root);
    }
  }

  // The root's completion with children `kids` (folded) and its copy after slot of them.
  Time root_time(const std::vector<Rank>& kids, int slot) {
    return items(shape_.root, kids, slot, true);
  }
  Time done(Rank v) const { return done_[at(v)]; }

 private:
  Time items(Rank v, const std::vector<Rank>& kids, int slot, bool root) {
    const bool copies = root || !kids.empty();
    Time t = 0;
    for (std::size_t i = 0; i <= kids.size(); ++i) {
      if (copies && static_cast<int>(i) == slot) t += pb_.copy * pb_.sizes[at(v)];
      if (i == kids.size()) break;
      const Rank c = kids[i];
      t = std::max(t, done_[at(c)]) + pb_.message(c, v, total_[at(c)]);
    }
    return t;
  }

  const TreeShape& shape_;
  const std::vector<int>& slot_;
  const GatherProblem& pb_;
  std::vector<Time> done_;
  std::vector<Time> total_;
};

// Plans `kind`'s tree (adaptive binomial or the optimal ordered DP's) over `members`
// (increasing ranks, renumbered 0..n-1; alpha, beta and copy of `pb`) and writes it into
// `into` in global ranks; returns its root.
Rank class_tree(const GatherProblem& pb, const std::vector<Rank>& members, std::optional<Rank> root,
                TreeKind kind, OrderedTree& into) {
  GatherProblem sub;
  sub.alpha = pb.alpha;
  sub.beta = pb.beta;
  sub.copy = pb.copy;
  std::optional<Rank> local_root;
  for (std::size_t k = 0; k < members.size(); ++k) {
    sub.sizes.push_back(pb.sizes[at(members[k])]);
    if (root && members[k] == *root) local_root = static_cast<Rank>(k);
  }
  const OrderedTree t = kind == TreeKind::kOptimal ? optimal_tree(sub, local_root)
                                                   : adaptive_binomial_tree(sub, local_root);
  for (std::size_t k = 0; k < members.size(); ++k) {
    auto& kids = into.shape.children[at(members[k])];
    kids.clear();
    for (const Rank c : t.shape.children[k]) kids.push_back(members[at(c)]);
    into.copy_slot[at(members[k])] = t.copy_slot[k];
  }
  return members[at(t.shape.root)];
}

}  // namespace

TwoBlockPlan two_block_join(const GatherProblem& pb, Rank root, Time threshold, TreeKind kind) {
  OPTCOLL_CHECK(kind == TreeKind::kOptimal || kind == TreeKind::kAdaptiveBinomial,
                "two_block_join plans adaptive or optimal class trees only");
  const Rank p = pb.nranks();
  TwoBlockPlan plan;
  plan.threshold = threshold;
  plan.tree.shape.root = root;
  plan.tree.shape.children.resize(at(p));
  plan.tree.copy_slot.assign(at(p), 0);
  std::vector<Rank> mine;
  std::vector<Rank> other;
  for (Rank r = 0; r < p; ++r) {
    plan.large.push_back(pb.sizes[at(r)] >= threshold);
    (plan.large.back() == (pb.sizes[at(root)] >= threshold) ? mine : other).push_back(r);
  }
  plan.positions.assign(at(p), 0);
  Rank next = 0;
  for (const Rank r : mine) plan.positions[at(r)] = next++;
  for (const Rank r : other) plan.positions[at(r)] = next++;
  class_tree(pb, mine, root, kind, plan.tree);
  if (other.empty()) {
    plan.tree.cost =
        positioned_completion_time(plan.tree.shape, plan.tree.copy_slot, plan.positions, pb);
    return plan;
  }
  plan.sub_root = class_tree(pb, other, std::nullopt, kind, plan.tree);
  // The sub-root as item q of the root (its copy counts as an item): before the copy it
  // becomes child q and the copy moves one later; after it, child q - 1.
  const auto kids = plan.tree.shape.children[at(root)];
  const int slot = std::clamp(plan.tree.copy_slot[at(root)], 0, static_cast<int>(kids.size()));
  PositionedTimes times(plan.tree.shape, plan.tree.copy_slot, plan.positions, pb);
  times.fold(root);
  times.fold(plan.sub_root);
  int best_q = 0;
  Time best_cost = 0;
  for (int q = 0; q <= static_cast<int>(kids.size()) + 1; ++q) {
    auto k = kids;
    k.insert(k.begin() + (q <= slot ? q : q - 1), plan.sub_root);
    const Time cost = times.root_time(k, q <= slot ? slot + 1 : slot);
    if (q == 0 || cost < best_cost) {
      best_q = q;
      best_cost = cost;
    }
  }
  auto& k = plan.tree.shape.children[at(root)];
  k.insert(k.begin() + (best_q <= slot ? best_q : best_q - 1), plan.sub_root);
  plan.tree.copy_slot[at(root)] = best_q <= slot ? slot + 1 : slot;
  plan.tree.cost = best_cost;
  return plan;
}

Time positioned_completion_time(const TreeShape& shape, const std::vector<int>& copy_slot,
                                const std::vector<Rank>& positions, const GatherProblem& pb) {
  PositionedTimes times(shape, copy_slot, positions, pb);
  times.fold(shape.root);
  return times.done(shape.root);
}

TwoBlockPlan two_block_plan(const GatherProblem& pb, Rank root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(root >= 0 && root < p, "root {} out of range", root);
  std::vector<Time> distinct = pb.sizes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  // The split: every threshold with the adaptive trees (O(p log p) each).
  std::optional<TwoBlockPlan> best;
  for (const Time threshold : distinct) {
    TwoBlockPlan plan = two_block_join(pb, root, threshold, TreeKind::kAdaptiveBinomial);
    if (!best || plan.tree.cost < best->tree.cost) best = std::move(plan);
  }
  // The optimal DP's trees for one class (gatherv/optimal's tree) and for the chosen split.
  std::vector<Time> again{distinct.front()};
  if (best->threshold != distinct.front()) again.push_back(best->threshold);
  for (const Time threshold : again) {
    TwoBlockPlan plan = two_block_join(pb, root, threshold, TreeKind::kOptimal);
    if (plan.tree.cost < best->tree.cost) best = std::move(plan);
  }
  return std::move(*best);
}

std::optional<Estimate> two_block_estimate(const CollectiveSpec& spec, const CostModel& model) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const bool gather = spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
  const GatherProblem pb = gather_problem(
      layout, model, spec.elem_bytes, gather ? TreeDirection::kGather : TreeDirection::kScatter);
  const bool planned = spec.nranks <= kDpInEstimate;
  const OrderedTree tree =
      planned ? two_block_plan(pb, spec.root).tree : cheapest_ordered_tree(pb, spec.root);
  std::vector<Count> blocks;
  for (Rank r = 0; r < spec.nranks; ++r) blocks.push_back(layout.block(r));
  const double p = spec.nranks;
  return make_estimate(spec, tree.cost, patterns::tree_subtree_elements(tree.shape, blocks),
                       4 * p + p * p * p / 2048, planned);
}

Schedule build_two_block_schedule(const CollectiveSpec& spec, const CostModel& model) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/two_block");
  const bool gather = spec.kind == CollectiveKind::kGather || spec.kind == CollectiveKind::kGatherv;
  const GatherProblem pb =
      gather_problem(b.layout(), model, spec.elem_bytes,
                     gather ? TreeDirection::kGather : TreeDirection::kScatter);
  TwoBlockPlan plan = two_block_plan(pb, spec.root);
  if (gather) {
    patterns::emit_positioned_gather(b, plan.tree.shape, plan.tree.copy_slot, plan.positions,
                                     output_of(b.layout(), spec.root));
  } else {
    patterns::emit_positioned_scatter(b, plan.tree.shape, plan.tree.copy_slot, plan.positions,
                                      input_of(b.layout(), spec.root));
  }
  b.set_tree(std::move(plan.tree.shape));
  return std::move(b).finish();
}

}  // namespace optcoll::algorithms::planners
