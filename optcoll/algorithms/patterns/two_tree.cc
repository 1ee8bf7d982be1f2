// SPDX-License-Identifier: Apache-2.0
// File: the two-tree step schedule (colouring, steps) and its bcast/reduce emitters.
#include "optcoll/algorithms/patterns/two_tree.h"

#include <algorithm>
#include <utility>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

// The transfers of `plan.trees` for a given first tree and step parity shift, appended to
// `out`; returns the number of steps.
std::int64_t place_steps(const std::array<TreeShape, 2>& trees, const TwoTreeColours& colours,
                         int first, int shift, Count segments, std::vector<TwoTreeTransfer>* out) {
  const std::size_t p = trees[0].children.size();
  std::int64_t steps = 0;
  for (int k = 0; k < 2; ++k) {
    // Tree k carries segments k', k' + 2, ... with k' = 0 for the first tree, 1 otherwise.
    const Count offset = k == first ? 0 : 1;
    const Count blocks = segments > offset ? (segments - offset + 1) / 2 : 0;
    if (blocks == 0) continue;
    const TreeShape& tree = trees[static_cast<std::size_t>(k)];
    // held[v][m]: the step in which v received block m (−1 on the root: held from the start).
    std::vector<std::vector<std::int64_t>> held(p);
    held[static_cast<std::size_t>(tree.root)].assign(static_cast<std::size_t>(blocks), -1);
    for (const Rank u : tree.preorder()) {
      const auto& have = held[static_cast<std::size_t>(u)];
      for (const Rank v : tree.children[static_cast<std::size_t>(u)]) {
        const int colour = colours[static_cast<std::size_t>(k)][static_cast<std::size_t>(v)];
        auto& got = held[static_cast<std::size_t>(v)];
        got.resize(static_cast<std::size_t>(blocks));
        std::int64_t previous = -1;
        for (Count m = 0; m < blocks; ++m) {
          std::int64_t t = std::max(have[static_cast<std::size_t>(m)], previous) + 1;
          if ((t + shift) % 2 != colour) ++t;
          got[static_cast<std::size_t>(m)] = t;
          previous = t;
          steps = std::max(steps, t + 1);
          if (out != nullptr) out->push_back({t, u, v, k, 2 * m + offset});
        }
      }
    }
  }
  return steps;
}

// Per rank: the step it is in and its ops of that step and of its previous step. Every op
// of a step waits for the rank's ops of its previous step.
// Why: every port then serves its transfers in step order (no two at once, none overtaking),
// and a rank finishes each step (a reduction included) before it starts the next: without
// overlap a reduction needs the rank's ports idle, so a transfer allowed to start early would
// delay it. The simulated time is then the step count's (see two_tree.h).
class StepChains {
 public:
  StepChains(ScheduleBuilder& b, std::size_t nranks) : b_(b), ranks_(nranks) {}
  void add(Rank r, std::int64_t step, OpId op) {
    if (op == kNoOp) return;
    PerRank& s = ranks_[static_cast<std::size_t>(r)];
    if (step != s.step) {
      s.previous = s.current;
      s.current = {kNoOp, kNoOp, kNoOp};
      s.step = step;
    }
    for (const OpId before : s.previous) b_.add_dependency(r, before, op);
    const auto free = std::find(s.current.begin(), s.current.end(), kNoOp);
    OPTCOLL_CHECK(free != s.current.end(), "rank {} has more than three ops in step {}", r, step);
    *free = op;
  }

 private:
  struct PerRank {
    std::int64_t step = -1;
    std::array<OpId, 3> current{kNoOp, kNoOp, kNoOp};
    std::array<OpId, 3> previous{kNoOp, kNoOp, kNoOp};
  };
  ScheduleBuilder& b_;
  std::vector<PerRank> ranks_;
};

}  // namespace

TwoTreeColours two_tree_colouring(const std::array<TreeShape, 2>& trees) {
  const std::size_t p = trees[0].children.size();
  const std::array<std::vector<Rank>, 2> parent{trees[0].parents(), trees[1].parents()};
  // Edge e = k·p + v (v's edge in tree k). Vertex u: u's sending side; p + v: v's receiving
  // side. Each vertex has at most two edges.
  std::vector<std::array<std::int64_t, 2>> incident(2 * p, {-1, -1});
  auto attach = [&](std::size_t vertex, std::int64_t e) {
    auto& slots = incident[vertex];
    OPTCOLL_CHECK(slots[1] < 0, "two-tree rank side {} has more than two edges", vertex);
    slots[slots[0] < 0 ? 0 : 1] = e;
  };
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t v = 0; v < p; ++v) {
      const Rank u = parent[k][v];
      if (u == kNoRank) continue;
      const auto e = static_cast<std::int64_t>(k * p + v);
      attach(static_cast<std::size_t>(u), e);
      attach(p + v, e);
    }
  }
  std::vector<int> colour(2 * p, -1);
  for (std::size_t start = 0; start < 2 * p; ++start) {
    if (parent[start / p][start % p] == kNoRank || colour[start] >= 0) continue;
    // Walk the path or cycle of `start`, alternating colours (cycles are even: bipartite).
    colour[start] = 0;
    std::vector<std::size_t> stack{start};
    while (!stack.empty()) {
      const std::size_t e = stack.back();
      stack.pop_back();
      const std::size_t v = e % p;
      const auto u = static_cast<std::size_t>(parent[e / p][v]);
      for (const std::size_t vertex : {u, p + v}) {
        for (const std::int64_t other : incident[vertex]) {
          if (other < 0 || static_cast<std::size_t>(other) == e) continue;
          const auto o = static_cast<std::size_t>(other);
          if (colour[o] < 0) {
            colour[o] = 1 - colour[e];
            stack.push_back(o);
          }
          OPTCOLL_CHECK(colour[o] != colour[e], "two-tree edge colouring failed at edge {}", e);
        }
      }
    }
  }
  TwoTreeColours colours;
  for (std::size_t k = 0; k < 2; ++k) {
    colours[k].assign(p, 0);
    for (std::size_t v = 0; v < p; ++v) {
      if (colour[k * p + v] >= 0) colours[k][v] = static_cast<std::uint8_t>(colour[k * p + v]);
    }
  }
  return colours;
}

TwoTreeSchedule two_tree_schedule(Rank nranks, Rank root, Count segments) {
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  TwoTreeSchedule plan;
  if (nranks == 3) {
    // Why: the double binary trees of p = 3 (root → a → b and root → b → a) force every
    // forward to wait a step for its colour (D = 3); the chain root → a → b in both trees,
    // coloured so that a forwards in the step after it receives, takes D = 2.
    plan.trees = {virtual_chain(3, root), virtual_chain(3, root)};
    const auto a = static_cast<std::size_t>((root + 1) % 3);
    const auto c = static_cast<std::size_t>((root + 2) % 3);
    plan.colours = {std::vector<std::uint8_t>(3, 0), std::vector<std::uint8_t>(3, 0)};
    plan.colours[0][c] = 1;
    plan.colours[1][a] = 1;
  } else {
    plan.trees = double_binary_trees(nranks, root);
    plan.colours = two_tree_colouring(plan.trees);
  }
  plan.segments = segments;
  if (nranks == 1) return plan;
  // Step 0 uses the colour of the first tree's root edge.
  auto shift_for = [&](int first) {
    const TreeShape& tree = plan.trees[static_cast<std::size_t>(first)];
    const Rank top = tree.children[static_cast<std::size_t>(root)].front();
    return static_cast<int>(
        plan.colours[static_cast<std::size_t>(first)][static_cast<std::size_t>(top)]);
  };
  const std::int64_t steps0 =
      place_steps(plan.trees, plan.colours, 0, shift_for(0), segments, nullptr);
  const std::int64_t steps1 =
      place_steps(plan.trees, plan.colours, 1, shift_for(1), segments, nullptr);
  plan.first = steps1 < steps0 ? 1 : 0;
  plan.steps = place_steps(plan.trees, plan.colours, plan.first, shift_for(plan.first), segments,
                           &plan.transfers);
  std::stable_sort(plan.transfers.begin(), plan.transfers.end(),
                   [](const TwoTreeTransfer& x, const TwoTreeTransfer& y) {
                     return std::pair(x.step, x.from) < std::pair(y.step, y.from);
                   });
  return plan;
}

std::int64_t two_tree_depth(Rank nranks) { return two_tree_schedule(nranks, 0, 1).steps; }

std::int64_t two_tree_depth_formula(Rank nranks) {
  if (nranks <= 3) return std::max<std::int64_t>(0, nranks - 1);
  const std::int64_t q = nranks - 1;
  std::int64_t levels = 0;
  for (std::int64_t x = q; x > 1; x /= 2) ++levels;
  return 2 * levels + (q % 4 == 2 || (q & (q + 1)) == 0 ? 1 : 0);
}

SegmentBounds larger_last_segment(Count count, Count segments, Count s) {
  const Count base = count / segments;
  const Count small = segments - count % segments;  // segments of `base` elements, first
  return {s * base + std::max<Count>(0, s - small), base + (s >= small ? 1 : 0)};
}

void emit_two_tree_bcast(ScheduleBuilder& b, const TwoTreeSchedule& plan, Slice data,
                         OpId root_after) {
  StepChains chains(b, static_cast<std::size_t>(b.nranks()));
  for (const TwoTreeTransfer& x : plan.transfers) {
    const auto [offset, len] = larger_last_segment(data.count, plan.segments, x.segment);
    const Slice piece = sub(data, offset, len);
    const auto t = b.transfer(x.from, x.to, piece, piece);
    // (Later sends of the root wait for this one through the step chains.)
    if (x.step == 0) b.add_dependency(x.from, root_after, t.send);
    chains.add(x.from, x.step, t.send);
    chains.add(x.to, x.step, t.recv);
  }
}

namespace {

// How emit_two_tree_reduce combines: per tree, the side each child's partial goes on (a
// parent receives its children in reverse broadcast order, and a child whose ranks lie below
// what the parent has combined so far goes on the left), and which ranks are inner in
// either tree (they keep an accumulator).
struct ReduceOrder {
  std::array<std::vector<Side>, 2> side;
  std::vector<bool> inner;
};

ReduceOrder reduce_order(const TwoTreeSchedule& plan) {
  const auto p = plan.trees[0].children.size();
  const Rank root = plan.trees[0].root;
  // Per tree: each child's side, the step at which each rank first receives, and (below)
  // the lowest rank of every subtree.
  std::array<std::vector<Side>, 2> side{std::vector<Side>(p, Side::kRight),
                                        std::vector<Side>(p, Side::kRight)};
  std::array<std::vector<std::int64_t>, 2> first_step{std::vector<std::int64_t>(p, -1),
                                                      std::vector<std::int64_t>(p, -1)};
  for (const TwoTreeTransfer& x : plan.transfers) {
    auto& f = first_step[static_cast<std::size_t>(x.tree)][static_cast<std::size_t>(x.to)];
    if (f < 0) f = x.step;
  }
  std::vector<bool> inner(p, false);
  inner[static_cast<std::size_t>(root)] = true;
  for (std::size_t k = 0; k < 2; ++k) {
    const TreeShape& tree = plan.trees[k];
    const std::vector<Rank> pre = tree.preorder();
    std::vector<Rank> lo(p);
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
      const auto v = static_cast<std::size_t>(*it);
      lo[v] = *it;
      for (const Rank c : tree.children[v])
        lo[v] = std::min(lo[v], lo[static_cast<std::size_t>(c)]);
      if (!tree.children[v].empty()) inner[v] = true;
      std::vector<Rank> kids = tree.children[v];
      std::stable_sort(kids.begin(), kids.end(), [&](Rank x, Rank y) {
        return first_step[k][static_cast<std::size_t>(x)] >
               first_step[k][static_cast<std::size_t>(y)];
      });
      Rank combined = *it;
      for (const Rank c : kids) {
        const auto ci = static_cast<std::size_t>(c);
        side[k][ci] = lo[ci] < combined ? Side::kLeft : Side::kRight;
        combined = std::min(combined, lo[ci]);
      }
    }
  }
  return {std::move(side), std::move(inner)};
}

}  // namespace

OpId emit_two_tree_reduce(ScheduleBuilder& b, const TwoTreeSchedule& plan, Slice contribution,
                          Slice result) {
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const auto p = static_cast<std::size_t>(b.nranks());
  const Rank root = plan.trees[0].root;
  const ReduceOrder order = reduce_order(plan);
  const auto& side = order.side;
  const std::vector<bool>& inner = order.inner;
  // Accumulators start as the rank's contribution, copied once before any segment.
  std::vector<Slice> acc(p);
  OpId root_last = kNoOp;
  for (std::size_t v = 0; v < p; ++v) {
    if (!inner[v]) continue;
    const auto r = static_cast<Rank>(v);
    acc[v] = r == root ? result : b.scratch(r, contribution.count);
    const OpId copy = b.copy(r, contribution, acc[v]);
    if (r == root) root_last = copy;
  }
  // Incoming segments land in scratch and are reduced by a separate op that also waits for
  // the rank's send of the same step.
  // Why: with a RecvReduce, a receive that ends before the rank's send of that step has
  // started would begin its reduction and (without overlap) hold that send back past the
  // step; after the send, the reduction ends the step as the step count assumes.
  std::vector<Slice> incoming(p);
  for (std::size_t v = 0; v < p; ++v) {
    const bool receives = !plan.trees[0].children[v].empty() || !plan.trees[1].children[v].empty();
    if (receives) incoming[v] = b.scratch(static_cast<Rank>(v), contribution.count);
  }
  StepChains chains(b, p);
  std::vector<OpId> sent(p, kNoOp);  // each rank's send of the current step
  struct Arrival {
    Rank at;
    OpId recv;
    Slice from;
    Slice into;
    Side side;
  };
  std::vector<Arrival> arrivals;
  auto it = plan.transfers.rbegin();
  while (it != plan.transfers.rend()) {
    const std::int64_t bcast_step = it->step;
    const std::int64_t step = plan.steps - 1 - bcast_step;
    arrivals.clear();
    std::fill(sent.begin(), sent.end(), kNoOp);
    for (; it != plan.transfers.rend() && it->step == bcast_step; ++it) {
      const TwoTreeTransfer& x = *it;
      const auto k = static_cast<std::size_t>(x.tree);
      const auto child = static_cast<std::size_t>(x.to);
      const auto parent = static_cast<std::size_t>(x.from);
      const bool child_inner = !plan.trees[k].children[child].empty();
      const auto [offset, len] = larger_last_segment(contribution.count, plan.segments, x.segment);
      const Slice landing = sub(incoming[parent], offset, len);
      const auto t = b.transfer(x.to, x.from,
                                sub(child_inner ? acc[child] : contribution, offset, len), landing);
      chains.add(x.to, step, t.send);
      chains.add(x.from, step, t.recv);
      sent[child] = t.send;
      if (t.recv != kNoOp) {
        arrivals.push_back(
            {x.from, t.recv, landing, sub(acc[parent], offset, len), side[k][child]});
      }
    }
    for (const Arrival& a : arrivals) {
      const OpId r = b.reduce(a.at, a.from, a.into, a.side);
      b.add_dependency(a.at, sent[static_cast<std::size_t>(a.at)], r);
      chains.add(a.at, step, r);
      if (a.at == root) root_last = r;
    }
  }
  return root_last;
}

}  // namespace optcoll::algorithms::patterns
