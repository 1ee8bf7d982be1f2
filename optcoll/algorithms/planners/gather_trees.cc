// SPDX-License-Identifier: Apache-2.0
// File: Definition 2 evaluation and the non-DP gather/scatter trees (linear, oblivious and
// adaptive binomial).
#include "optcoll/algorithms/planners/gather_trees.h"

#include <algorithm>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

// A block of the binomial constructions: its root, data, completion and whether the root
// already received (interior nodes have paid for their copy, which comes first).
struct Block {
  Rank root = 0;
  Time size = 0;
  Time done = 0;
  bool interior = false;
};

// `from` sends its block to `to`'s root; returns the merged block.
Block merge_into(const GatherProblem& pb, OrderedTree& tree, const Block& to, const Block& from) {
  const Time start = to.interior ? to.done : pb.copy * pb.sizes[at(to.root)];
  tree.shape.children[at(to.root)].push_back(from.root);
  return {to.root, to.size + from.size, std::max(start, from.done) + pb.message(from.size), true};
}

// The aligned-block binomial construction shared by the oblivious and adaptive trees.
template <typename SendsUp>
OrderedTree binomial_blocks(const GatherProblem& pb, std::optional<Rank> root, SendsUp sends_up) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OrderedTree tree;
  tree.shape.children.resize(at(p));
  tree.copy_slot.assign(at(p), 0);
  std::vector<Block> blocks;
  for (Rank r = 0; r < p; ++r) blocks.push_back({r, pb.sizes[at(r)], 0, false});
  for (Rank width = 1; width < p; width *= 2) {
    std::vector<Block> next;
    for (std::size_t l = 0; l < blocks.size(); l += 2) {
      if (l + 1 == blocks.size()) {
        next.push_back(blocks[l]);
        continue;
      }
      const Block& lower = blocks[l];
      const Block& upper = blocks[l + 1];
      const Rank lo = static_cast<Rank>(l) * width;
      const bool root_lower = root && *root >= lo && *root < lo + width;
      const bool root_upper = root && *root >= lo + width && *root < lo + 2 * width;
      const bool up = root_upper || (!root_lower && sends_up(lower, upper));
      next.push_back(up ? merge_into(pb, tree, upper, lower) : merge_into(pb, tree, lower, upper));
    }
    blocks = std::move(next);
  }
  tree.shape.root = blocks[0].root;
  tree.cost = completion_time(tree.shape, tree.copy_slot, pb);
  return tree;
}

}  // namespace

GatherProblem gather_problem(const Layout& layout, const CostModel& model, std::size_t elem_bytes,
                             TreeDirection direction) {
  GatherProblem pb;
  pb.alpha = model.alpha;
  pb.beta = model.beta;
  pb.copy = model.copy;
  const Rank p = layout.nranks();
  for (Rank r = 0; r < p; ++r) pb.sizes.push_back(model.units(layout.block(r), elem_bytes));
  if (!model.homogeneous()) {
    validate_for(model, p);  // the matrices (or the placement) must be for p ranks
    pb.pair_model = &model;
    pb.pair_direction = direction;
  }
  return pb;
}

Time completion_time(const TreeShape& shape, const std::vector<int>& copy_slot,
                     const GatherProblem& pb) {
  const auto p = shape.children.size();
  OPTCOLL_CHECK(p == pb.sizes.size() && copy_slot.size() == p, "tree and problem differ in size");
  // Post-order by an explicit stack: (node, expanded?).
  std::vector<Time> done(p, 0);
  std::vector<Time> total(p, 0);
  std::vector<std::pair<Rank, bool>> stack{{shape.root, false}};
  while (!stack.empty()) {
    const auto [v, expanded] = stack.back();
    stack.pop_back();
    const auto& kids = shape.children[at(v)];
    if (!expanded) {
      stack.emplace_back(v, true);
      for (const Rank c : kids) stack.emplace_back(c, false);
      continue;
    }
    const bool copies = v == shape.root || !kids.empty();
    Time t = 0;
    total[at(v)] = pb.sizes[at(v)];
    for (std::size_t i = 0; i <= kids.size(); ++i) {
      if (copies && static_cast<int>(i) == copy_slot[at(v)]) t += pb.copy * pb.sizes[at(v)];
      if (i == kids.size()) break;
      const Rank c = kids[i];
      t = std::max(t, done[at(c)]) + pb.message(c, v, total[at(c)]);
      total[at(v)] += total[at(c)];
    }
    done[at(v)] = t;
  }
  return done[at(shape.root)];
}

OrderedTree linear_tree(const GatherProblem& pb, Rank root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(root >= 0 && root < p, "root {} out of range", root);
  OrderedTree tree;
  tree.shape.root = root;
  tree.shape.children.resize(at(p));
  tree.copy_slot.assign(at(p), 0);
  for (Rank r = 0; r < p; ++r) {
    if (r != root) tree.shape.children[at(root)].push_back(r);
  }
  tree.cost = completion_time(tree.shape, tree.copy_slot, pb);
  return tree;
}

OrderedTree oblivious_binomial_tree(const GatherProblem& pb, Rank root) {
  OPTCOLL_CHECK(root >= 0 && root < pb.nranks(), "root {} out of range", root);
  return binomial_blocks(pb, root, [](const Block&, const Block&) { return true; });
}

OrderedTree adaptive_binomial_tree(const GatherProblem& pb, std::optional<Rank> root) {
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < pb.nranks()), "root out of range");
  return binomial_blocks(pb, root, [&pb](const Block& lower, const Block& upper) {
    auto start = [&pb](const Block& x) {
      return x.interior ? x.done : pb.copy * pb.sizes[at(x.root)];
    };
    const Time lower_sends = std::max(lower.done, start(upper)) + pb.message(lower.size);
    const Time upper_sends = std::max(upper.done, start(lower)) + pb.message(upper.size);
    return lower_sends <= upper_sends;
  });
}

OrderedTree best_root_by_search(const GatherProblem& pb,
                                OrderedTree (*planner)(const GatherProblem&, Rank)) {
  OrderedTree best = planner(pb, 0);
  for (Rank r = 1; r < pb.nranks(); ++r) {
    OrderedTree t = planner(pb, r);
    if (t.cost < best.cost) best = std::move(t);
  }
  return best;
}

}  // namespace optcoll::algorithms::planners
