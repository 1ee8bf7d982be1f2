// SPDX-License-Identifier: Apache-2.0
// File: MST and ring phases on groups of ranks (group_phases.h).
#include "optcoll/algorithms/patterns/group_phases.h"

#include <algorithm>
#include <iterator>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

// The MST edges over [lo, hi) rooted at `root`, top-down (a parent's edge before its
// subtree's edges; the root's larger halves first).
void mst_edges(Rank lo, Rank hi, Rank root, std::vector<MstEdge>& out) {
  if (hi - lo <= 1) return;
  const Rank mid = lo + (hi - lo + 1) / 2;
  if (root < mid) {
    out.push_back({root, mid, mid, hi});
    mst_edges(lo, mid, root, out);
    mst_edges(mid, hi, mid, out);
  } else {
    out.push_back({root, lo, lo, mid});
    mst_edges(mid, hi, root, out);
    mst_edges(lo, mid, lo, out);
  }
}

std::size_t idx(Rank i) { return static_cast<std::size_t>(i); }

}  // namespace

std::vector<MstEdge> mst(Rank q, Rank root) {
  OPTCOLL_CHECK(root >= 0 && root < q, "root index {} outside the group of {}", root, q);
  std::vector<MstEdge> edges;
  mst_edges(0, q, root, edges);
  return edges;
}

void Held::add(Rank r, const Slice& slice) {
  if (slice.count == 0) return;
  auto& map = intervals_[static_cast<std::size_t>(r)];
  Count start = slice.offset;
  Count end = slice.offset + slice.count;
  auto it = map.upper_bound(start);
  if (it != map.begin() && std::prev(it)->second >= start) --it;
  while (it != map.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = map.erase(it);
  }
  map.emplace(start, end);
}

bool Held::covers(Rank r, const Slice& slice) const {
  if (slice.count == 0) return true;
  const auto& map = intervals_[static_cast<std::size_t>(r)];
  auto it = map.upper_bound(slice.offset);
  if (it == map.begin()) return false;
  --it;
  return it->first <= slice.offset && it->second >= slice.offset + slice.count;
}

ScheduleBuilder::Transfer transfer_new(ScheduleBuilder& b, Held* held, Rank from, Rank to,
                                       const Slice& src, const Slice& dst) {
  if (held != nullptr) {
    if (held->covers(to, dst)) return {};
    held->add(to, dst);
  }
  return b.transfer(from, to, src, dst);
}

void StepOrder::send(ScheduleBuilder& b, Rank from, const ScheduleBuilder::Transfer& t) {
  b.add_dependency(members_[idx(from)], last_recv_[idx(from)], t.send);
}

void StepOrder::received(Rank to, const ScheduleBuilder::Transfer& t) {
  if (t.recv != kNoOp) pending_.emplace_back(to, t.recv);
}

void StepOrder::end_step() {
  for (const auto& [r, op] : pending_) last_recv_[idx(r)] = op;
  pending_.clear();
}

Members all_ranks(Rank p) {
  Members members(idx(p));
  for (Rank r = 0; r < p; ++r) members[idx(r)] = r;
  return members;
}

Parts even_parts(Count n, Rank q) {
  Parts parts(idx(q));
  for (Rank i = 0; i < q; ++i) parts[idx(i)] = even_piece(n, q, i);
  return parts;
}

Parts parts_of_sizes(const std::vector<Count>& sizes) {
  Parts parts(sizes.size());
  Count offset = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    parts[i] = {offset, sizes[i]};
    offset += sizes[i];
  }
  return parts;
}

Piece parts_span(const Parts& parts, Rank first, Rank last) {
  const Piece& a = parts[idx(first)];
  const Piece& z = parts[idx(last)];
  return {a.offset, z.offset + z.count - a.offset};
}

Slice at(const Slice& base, const Piece& piece) {
  return {base.buf, base.offset + piece.offset, piece.count};
}

void mst_scatter(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                 const Parts& parts, Rank root, Held* held) {
  for (const auto& e : mst(static_cast<Rank>(members.size()), root)) {
    const Piece span = parts_span(parts, e.lo, e.hi - 1);
    transfer_new(b, held, members[idx(e.from)], members[idx(e.to)], at(bases[idx(e.from)], span),
                 at(bases[idx(e.to)], span));
  }
}

void mst_gather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                const Parts& parts, Rank root) {
  const auto edges = mst(static_cast<Rank>(members.size()), root);
  for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
    const Piece span = parts_span(parts, e->lo, e->hi - 1);
    b.transfer(members[idx(e->to)], members[idx(e->from)], at(bases[idx(e->to)], span),
               at(bases[idx(e->from)], span));
  }
}

void mst_bcast(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
               Rank root, Held* held) {
  for (const auto& e : mst(static_cast<Rank>(members.size()), root)) {
    transfer_new(b, held, members[idx(e.from)], members[idx(e.to)], bases[idx(e.from)],
                 bases[idx(e.to)]);
  }
}

void mst_reduce(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                Rank root) {
  // Bottom-up: every rank combines its subtrees (contiguous index ranges next to its own
  // range) before it sends; the side keeps member order.
  const auto edges = mst(static_cast<Rank>(members.size()), root);
  for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
    const Side side = e->lo < e->from ? Side::kLeft : Side::kRight;
    b.transfer_reduce(members[idx(e->to)], members[idx(e->from)], bases[idx(e->to)],
                      bases[idx(e->from)], side);
  }
}

void ring_allgather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                    const Parts& parts, Held* held) {
  const auto q = static_cast<Rank>(members.size());
  StepOrder order(members);
  for (Rank step = 0; step + 1 < q; ++step) {
    for (Rank i = 0; i < q; ++i) {
      const Rank next = (i + 1) % q;
      const Piece& part = parts[idx((i - step + q) % q)];
      const auto t = transfer_new(b, held, members[idx(i)], members[idx(next)],
                                  at(bases[idx(i)], part), at(bases[idx(next)], part));
      order.send(b, i, t);
      order.received(next, t);
    }
    order.end_step();
  }
}

void ring_reduce_scatter(ScheduleBuilder& b, const Members& members,
                         const std::vector<Slice>& bases, const Parts& parts) {
  const auto q = static_cast<Rank>(members.size());
  for (Rank step = 0; step + 1 < q; ++step) {
    for (Rank i = 0; i < q; ++i) {
      const Rank next = (i + 1) % q;
      const Piece& part = parts[idx(((i - step - 1) % q + q) % q)];
      b.transfer_reduce(members[idx(i)], members[idx(next)], at(bases[idx(i)], part),
                        at(bases[idx(next)], part), Side::kLeft);
    }
  }
}

}  // namespace optcoll::algorithms::patterns
