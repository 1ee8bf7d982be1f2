// SPDX-License-Identifier: Apache-2.0
// File: tree emitter times from the tree alone (tree_estimate.h).
#include "optcoll/algorithms/patterns/tree_estimate.h"

#include <algorithm>
#include <utility>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/tree_params.h"

namespace optcoll::algorithms::patterns {
namespace {

std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

// Per rank: the elements of its subtree, and the lowest and highest position in it.
struct Spans {
  std::vector<Count> size;
  std::vector<Rank> lo, hi;
};

Spans subtree_spans(const TreeShape& tree, const std::vector<Rank>& pre,
                    const std::vector<Rank>& positions, const std::vector<Count>& blocks) {
  const std::size_t p = tree.children.size();
  Spans s{std::vector<Count>(p, 0), std::vector<Rank>(p, 0), std::vector<Rank>(p, 0)};
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const std::size_t v = at(*it);
    s.size[v] = blocks[v];
    s.lo[v] = s.hi[v] = positions[v];
    for (const Rank c : tree.children[v]) {
      s.size[v] += s.size[at(c)];
      s.lo[v] = std::min(s.lo[v], s.lo[at(c)]);
      s.hi[v] = std::max(s.hi[v], s.hi[at(c)]);
    }
  }
  return s;
}

// The messages the root exchanges with a child whose subtree holds positions lo..hi: one
// per run of consecutive real ranks (emit_tree_gather's for_each_rank_run).
template <typename Fn>
void for_each_run(const std::vector<Rank>& rank_at, const std::vector<Count>& blocks, Rank lo,
                  Rank hi, Fn fn) {
  Count elements = 0;
  for (Rank k = lo; k <= hi; ++k) {
    elements += blocks[at(rank_at[at(k)])];
    if (k == hi || rank_at[at(k) + 1] != rank_at[at(k)] + 1) {
      fn(elements);
      elements = 0;
    }
  }
}

std::vector<Rank> inverse(const std::vector<Rank>& positions) {
  std::vector<Rank> rank_at(positions.size());
  for (std::size_t r = 0; r < positions.size(); ++r)
    rank_at[at(positions[r])] = static_cast<Rank>(r);
  return rank_at;
}

}  // namespace

Time tree_bcast_time(const TreeShape& tree, const LinkCosts& costs, Count n) {
  return static_cast<Time>(bcast_slots(tree)) * costs.message(n);
}

Time tree_reduce_time(const TreeShape& tree, const LinkCosts& costs, Count n) {
  const std::vector<Rank> pre = tree.preorder();
  std::vector<Time> done(tree.children.size(), 0);
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const auto& kids = tree.children[at(*it)];
    if (kids.empty() && *it != tree.root) continue;  // a leaf sends its contribution as it is
    Time t = costs.copy_of(n);
    for (const Rank c : kids) t = std::max(t, done[at(c)]) + costs.message_reduce(n);
    done[at(*it)] = t;
  }
  return done[at(tree.root)];
}

Time tree_gather_time(const TreeShape& tree, const std::vector<Rank>& positions,
                      const std::vector<Count>& blocks, const LinkCosts& costs) {
  const std::vector<Rank> pre = tree.preorder();
  const Spans spans = subtree_spans(tree, pre, positions, blocks);
  const std::vector<Rank> rank_at = inverse(positions);
  std::vector<Time> done(tree.children.size(), 0);
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const Rank v = *it;
    const auto& kids = tree.children[at(v)];
    if (kids.empty() && v != tree.root) continue;
    std::vector<std::pair<Time, Rank>> ready;
    for (const Rank c : kids) ready.emplace_back(done[at(c)], c);
    std::sort(ready.begin(), ready.end());
    Time t = costs.copy_of(blocks[at(v)]);
    for (const auto& [child_done, c] : ready) {
      if (v != tree.root) {
        t = std::max(t, child_done) + costs.message(spans.size[at(c)]);
        continue;
      }
      const Time child = child_done;  // clang 14 cannot capture a structured binding
      for_each_run(rank_at, blocks, spans.lo[at(c)], spans.hi[at(c)],
                   [&](Count run) { t = std::max(t, child) + costs.message(run); });
    }
    done[at(v)] = t;
  }
  return done[at(tree.root)];
}

Time tree_scatter_time(const TreeShape& tree, const std::vector<Rank>& positions,
                       const std::vector<Count>& blocks, const LinkCosts& costs) {
  const std::vector<Rank> pre = tree.preorder();
  const Spans spans = subtree_spans(tree, pre, positions, blocks);
  const std::vector<Rank> rank_at = inverse(positions);
  std::vector<Time> received(tree.children.size(), 0);
  Time last = 0;
  for (const Rank v : pre) {
    const auto& kids = tree.children[at(v)];
    Time t = received[at(v)];
    for (const Rank c : kids) {
      if (v == tree.root) {
        for_each_run(rank_at, blocks, spans.lo[at(c)], spans.hi[at(c)],
                     [&](Count run) { t += costs.message(run); });
      } else {
        t += costs.message(spans.size[at(c)]);
      }
      received[at(c)] = t;
    }
    if (!kids.empty() || v == tree.root) t += costs.copy_of(blocks[at(v)]);
    last = std::max(last, t);
  }
  return last;
}

double tree_subtree_elements(const TreeShape& tree, const std::vector<Count>& blocks) {
  const std::vector<Rank> pre = tree.preorder();
  std::vector<Count> size(blocks);
  double total = 0;
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    for (const Rank c : tree.children[at(*it)]) size[at(*it)] += size[at(c)];
    if (*it != tree.root) total += static_cast<double>(size[at(*it)]);
  }
  return total;
}

std::optional<Estimate> pipelined_reduce_estimate(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model, const TreeShape& tree) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t slots = reduce_slots(tree);
  const std::int64_t fanout = max_fanout(tree);
  const Count segments = pipelined_segments(params, link, slots, fanout, spec.count, true);
  const Time time = spec.count == 0
                        ? 0
                        : c->copy_of(spec.count) +
                              pipelined_tree_cost(link, slots, fanout, spec.count, segments, true);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, time, sends * spec.count,
                       2 * sends * static_cast<double>(segments) + spec.nranks, false,
                       segment_param_text(spec.count, segments));
}

LinkCosts base_link_costs(const CollectiveSpec& spec, const CostModel& model) {
  const double unit = model.units(1, spec.elem_bytes);
  return {.alpha = model.alpha, .beta = model.beta * unit, .gamma = 0, .copy = model.copy * unit};
}

std::vector<std::vector<Rank>> lpt_port_lists(const std::vector<Count>& blocks, Rank root,
                                              const LinkCosts& costs, int ports) {
  std::vector<Rank> ranks;
  for (Rank q = 0; q < static_cast<Rank>(blocks.size()); ++q) {
    if (q != root && blocks[at(q)] > 0) ranks.push_back(q);
  }
  std::stable_sort(ranks.begin(), ranks.end(),
                   [&](Rank a, Rank b) { return blocks[at(a)] > blocks[at(b)]; });
  std::vector<std::vector<Rank>> lists(static_cast<std::size_t>(ports));
  std::vector<Time> ends(lists.size(), 0);
  for (const Rank q : ranks) {
    const auto port =
        static_cast<std::size_t>(std::min_element(ends.begin(), ends.end()) - ends.begin());
    lists[port].push_back(q);
    ends[port] += costs.message(blocks[at(q)]);
  }
  return lists;
}

Time lpt_star_messages_time(const std::vector<Count>& blocks, Rank root, const LinkCosts& costs,
                            int ports) {
  Time longest = 0;
  for (const auto& list : lpt_port_lists(blocks, root, costs, ports)) {
    Time sum = 0;
    for (const Rank q : list) sum += costs.message(blocks[at(q)]);
    longest = std::max(longest, sum);
  }
  return longest;
}

std::optional<Estimate> lpt_star_estimate(const CollectiveSpec& spec, const CostModel& model) {
  CostModel one_port = model;  // the link costs; the ports are the lists'
  one_port.ports = 1;
  const auto c = closed_form_costs(spec, one_port);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Time time = c->copy_of(layout.block(spec.root)) +
                    lpt_star_messages_time(blocks_of(layout), spec.root, *c, model.ports);
  const double elements =
      static_cast<double>(layout.total()) - static_cast<double>(layout.block(spec.root));
  return make_estimate(spec, time, elements, 2.0 * spec.nranks, true);
}

}  // namespace optcoll::algorithms::patterns
