// SPDX-License-Identifier: Apache-2.0
// File: the circulant broadcast's receive schedules and transfers (circulant.h).
//
// Receive schedules (Träff's construction, "Round-optimal n-block broadcast schedules in
// logarithmic time", arXiv:2312.11236, written here from its description).
//   Base block. Every r in [1, p) is a sum of distinct skips taken greedily from the largest;
//   its base block b(r) is the smallest skip index of that sum (b(0) = q). In each phase a
//   rank receives exactly one block of that phase, its base block (value b(r) >= 0); the
//   other q − 1 values are blocks of the previous phase (value e − q for e != b(r)).
//   Search. With R = r + p (so that r − s_k needs no wrap-around), a depth-first search
//   walks the canonical paths from 0, each step adding the largest skip s_e still unused by r
//   (indices e in [0, q] other than b(r), largest first): a path node y = x + s_e within
//   reach of round k's sender (y <= R − s_k) and below the previous choice's node gives
//   round k the block index e, and the search first descends from y while y is also within
//   reach of round k + 1's sender. Index q stands for the path through s_q = p, that is,
//   the root's own block of this phase: round k then receives b(r) itself. Every index is
//   used once, so the q rounds of a phase bring q different blocks. O(q^2) per rank.
//   Correctness (every sender holds what it sends, every rank gets every block) is the
//   paper's theorem; circulant_bcast_transfers checks it round by round, and
//   tests/sim/circulant_bcast_test.cc runs it for every p <= 300 (and it was run for every
//   p <= 4096 with n = 1 .. 2q + 2).
//
// Ends of the broadcast. Blocks are numbered virtually from x = (1 − n) mod q, so that the
// last block n − 1 has virtual index ≡ 0 (mod q); rounds run over virtual rounds x .. x + n +
// q − 2, i.e. n − 1 + q of them. Values below x (blocks before the first) are skipped; values
// above n − 1 mean block n − 1 (its early copies), received once: a rank that already holds it
// skips the round.
#include "optcoll/algorithms/patterns/circulant.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/two_tree.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

// Rank r's base block: the smallest skip index in its greedy sum of skips (q for r = 0).
int base_block(const std::vector<Rank>& skips, int q, Rank r) {
  Rank sum = 0;
  for (int i = q - 1; i >= 0; --i) {
    const Rank next = sum + skips[static_cast<std::size_t>(i)];
    if (next == r) return i;
    if (next < r) sum = next;
  }
  return q;
}

// The depth-first search of one rank's receive schedule (see the file comment).
class ReceiveSearch {
 public:
  ReceiveSearch(const std::vector<Rank>& skips, int q, Rank r)
      : skips_(skips),
        q_(q),
        target_(r + skips[static_cast<std::size_t>(q)]),
        unused_((std::uint64_t{1} << (q + 1)) - 1),
        index_(static_cast<std::size_t>(q), -1) {
    base_ = base_block(skips, q, r);
    unused_ &= ~(std::uint64_t{1} << base_);
    fill(0, 2 * skips[static_cast<std::size_t>(q)]);
  }
  // Round k's value: b(r) for the index q, else index − q (a block of the previous phase).
  std::int32_t value(int k) const {
    const int e = index_[static_cast<std::size_t>(k)];
    OPTCOLL_CHECK(e >= 0, "circulant receive schedule: round {} left empty", k);
    return e == q_ ? base_ : e - q_;
  }

 private:
  Rank skip(int i) const { return skips_[static_cast<std::size_t>(i)]; }
  // The largest unused index <= e, or −1.
  int unused_at_most(int e) const {
    if (e < 0) return -1;
    const std::uint64_t below = unused_ & ((std::uint64_t{2} << e) - 1);
    return below == 0 ? -1 : 63 - __builtin_clzll(below);
  }
  // From path node `node`, with the next node required to stay below `bound`.
  void fill(Rank node, Rank bound) {
    for (int e = unused_at_most(q_); e >= 0 && next_ < q_; e = unused_at_most(e - 1)) {
      const Rank y = node + skip(e);
      if (y > target_ - skip(next_) || y >= bound) continue;
      if (y <= target_ - skip(next_ + 1)) {
        fill(y, bound);
        if (next_ >= q_) return;
      }
      if (node > target_ - skip(next_ + 1)) return;
      bound = y;
      index_[static_cast<std::size_t>(next_++)] = e;
      unused_ &= ~(std::uint64_t{1} << e);
    }
  }

  const std::vector<Rank>& skips_;
  int q_;
  Rank target_;             // R = r + p
  std::uint64_t unused_;    // indices in [0, q] not yet given to a round
  std::vector<int> index_;  // per round, the index it receives
  int base_ = 0;
  int next_ = 0;  // the next round to fill
};

// Per rank, its ops of the round it last took part in and of the one before: every op of a
// round waits for the rank's ops of its previous round.
class RoundChains {
 public:
  RoundChains(ScheduleBuilder& b, Rank nranks) : b_(b), ranks_(static_cast<std::size_t>(nranks)) {}
  void add(Rank r, std::int64_t round, OpId op) {
    if (op == kNoOp) return;
    PerRank& c = ranks_[static_cast<std::size_t>(r)];
    if (round != c.round) {
      c.previous.swap(c.current);
      c.current.clear();
      c.round = round;
    }
    for (const OpId before : c.previous) b_.add_dependency(r, before, op);
    c.current.push_back(op);
  }

 private:
  struct PerRank {
    std::int64_t round = -1;
    std::vector<OpId> current;
    std::vector<OpId> previous;
  };
  ScheduleBuilder& b_;
  std::vector<PerRank> ranks_;
};

}  // namespace

CirculantSchedule circulant_schedule(Rank nranks) {
  OPTCOLL_CHECK(nranks >= 1, "circulant schedule for {} ranks", nranks);
  CirculantSchedule plan;
  plan.nranks = nranks;
  std::vector<Rank> skips{nranks};
  while (skips.back() > 1) skips.push_back((skips.back() + 1) / 2);
  std::reverse(skips.begin(), skips.end());
  plan.skips = skips;
  const int q = static_cast<int>(skips.size()) - 1;
  plan.q = q;
  if (q == 0) return plan;
  const auto p = static_cast<std::size_t>(nranks);
  const auto uq = static_cast<std::size_t>(q);
  plan.recv.assign(p * uq, 0);
  for (Rank r = 1; r < nranks; ++r) {
    const ReceiveSearch search(skips, q, r);
    for (int k = 0; k < q; ++k) {
      plan.recv[static_cast<std::size_t>(r) * uq + static_cast<std::size_t>(k)] = search.value(k);
    }
  }
  return plan;
}

std::vector<CirculantTransfer> circulant_bcast_transfers(const CirculantSchedule& plan,
                                                         Count blocks) {
  OPTCOLL_CHECK(blocks >= 1, "circulant broadcast of {} blocks", blocks);
  std::vector<CirculantTransfer> transfers;
  const Rank p = plan.nranks;
  const int q = plan.q;
  if (p <= 1) return transfers;
  const auto n = static_cast<std::size_t>(blocks);
  // holds[r·n + v]: rank r holds block v (the root all of them).
  std::vector<std::uint8_t> holds(static_cast<std::size_t>(p) * n, 0);
  std::fill_n(holds.begin(), n, 1);
  const auto held = [&](Rank r, Count v) -> std::uint8_t& {
    return holds[static_cast<std::size_t>(r) * n + static_cast<std::size_t>(v)];
  };
  const std::int64_t x = ((1 - blocks) % q + q) % q;
  const std::int64_t rounds = blocks - 1 + q;
  transfers.reserve(static_cast<std::size_t>(p - 1) * n);
  std::size_t round_begin = 0;
  for (std::int64_t i = x; i < x + rounds; ++i) {
    const int k = static_cast<int>(i % q);
    const Rank skip = plan.skips[static_cast<std::size_t>(k)];
    for (Rank r = 1; r < p; ++r) {
      Count v = plan.received(r, k) + (i - k) - x;
      if (v < 0) continue;
      v = std::min(v, blocks - 1);
      if (held(r, v) != 0) continue;
      const Rank from = (r - skip + p) % p;
      OPTCOLL_CHECK(held(from, v) != 0,
                    "circulant broadcast p = {}, n = {}: rank {} lacks block {} in round {}", p,
                    blocks, from, v, i - x);
      transfers.push_back({i - x, from, r, v});
    }
    // Receipts count from the next round on.
    for (std::size_t t = round_begin; t < transfers.size(); ++t) {
      held(transfers[t].to, transfers[t].block) = 1;
    }
    round_begin = transfers.size();
  }
  OPTCOLL_CHECK(transfers.size() == static_cast<std::size_t>(p - 1) * n,
                "circulant broadcast p = {}, n = {}: {} transfers", p, blocks, transfers.size());
  return transfers;
}

std::vector<Rank> circulant_bcast_round_sizes(const CirculantSchedule& plan, Count blocks) {
  OPTCOLL_CHECK(blocks >= 1, "circulant broadcast of {} blocks", blocks);
  const Rank p = plan.nranks;
  const int q = plan.q;
  if (p <= 1) return {};
  // The same rounds and block values as circulant_bcast_transfers, walked per receiver.
  const std::int64_t x = ((1 - blocks) % q + q) % q;
  const std::int64_t rounds = blocks - 1 + q;
  std::vector<Rank> sizes(static_cast<std::size_t>(rounds), 0);
  // `held` marks the blocks rank r has: held.test_and_set(v) says whether it had v already.
  const auto count_receipts = [&](auto& held) {
    for (Rank r = 1; r < p; ++r) {
      held.clear();
      int k = static_cast<int>(x % q);  // i mod q, kept without a division per round
      for (std::int64_t i = x; i < x + rounds; ++i) {
        Count v = plan.received(r, k) + (i - k) - x;
        if (++k == q) k = 0;
        if (v < 0) continue;
        v = std::min(v, blocks - 1);
        // (One receipt per round: marking it now changes no earlier round.)
        if (!held.test_and_set(v)) ++sizes[static_cast<std::size_t>(i - x)];
      }
    }
  };
  if (blocks <= 64) {  // every S the estimates ask for (S <= q)
    struct {
      std::uint64_t bits = 0;
      void clear() { bits = 0; }
      bool test_and_set(Count v) {
        const std::uint64_t bit = std::uint64_t{1} << v;
        const bool had = (bits & bit) != 0;
        bits |= bit;
        return had;
      }
    } mask;
    count_receipts(mask);
  } else {
    struct {
      std::vector<std::uint8_t> has;
      void clear() { std::fill(has.begin(), has.end(), 0); }
      bool test_and_set(Count v) { return std::exchange(has[static_cast<std::size_t>(v)], 1) != 0; }
    } flags{std::vector<std::uint8_t>(static_cast<std::size_t>(blocks))};
    count_receipts(flags);
  }
  return sizes;
}

void emit_circulant_bcast(ScheduleBuilder& b, Rank root, Count blocks, Slice data,
                          OpId root_after) {
  const Rank p = b.nranks();
  if (p == 1 || data.count == 0) return;
  const auto plan = circulant_schedule(p);
  RoundChains chains(b, p);
  for (const auto& x : circulant_bcast_transfers(plan, blocks)) {
    const auto [offset, len] = larger_last_segment(data.count, blocks, x.block);
    const Slice piece = sub(data, offset, len);
    const Rank from = (x.from + root) % p;
    const Rank to = (x.to + root) % p;
    const auto t = b.transfer(from, to, piece, piece);
    if (from == root) b.add_dependency(from, root_after, t.send);
    chains.add(from, x.round, t.send);
    chains.add(to, x.round, t.recv);
  }
}

OpId emit_circulant_reduce(ScheduleBuilder& b, Rank root, Count blocks, Slice contribution,
                           Slice result) {
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const Rank p = b.nranks();
  const Count n = contribution.count;
  if (n == 0) return kNoOp;
  if (p == 1) return b.copy(root, contribution, result);
  const auto plan = circulant_schedule(p);
  const auto transfers = circulant_bcast_transfers(plan, blocks);
  const std::int64_t rounds = transfers.back().round + 1;
  const auto up = static_cast<std::size_t>(p);
  std::vector<Slice> acc(up);
  std::vector<Slice> incoming(up);
  OpId root_last = kNoOp;
  for (Rank r = 0; r < p; ++r) {
    acc[static_cast<std::size_t>(r)] = r == root ? result : b.scratch(r, n);
    const OpId copy = b.copy(r, contribution, acc[static_cast<std::size_t>(r)]);
    if (r == root) root_last = copy;
  }
  for (const auto& x : transfers) {  // who receives in the reduction: who sends in the bcast
    const Rank at = (x.from + root) % p;
    if (incoming[static_cast<std::size_t>(at)].count == 0) {
      incoming[static_cast<std::size_t>(at)] = b.scratch(at, n);
    }
  }
  RoundChains chains(b, p);
  std::vector<OpId> sent(up, kNoOp);  // each rank's send of the current round
  struct Arrival {
    Rank at;
    Slice landing;
    Slice into;
    Side side;
  };
  std::vector<Arrival> arrivals;
  auto it = transfers.rbegin();
  while (it != transfers.rend()) {
    const std::int64_t bcast_round = it->round;
    const std::int64_t round = rounds - 1 - bcast_round;
    arrivals.clear();
    for (; it != transfers.rend() && it->round == bcast_round; ++it) {
      const Rank child = (it->to + root) % p;
      const Rank parent = (it->from + root) % p;
      const auto [offset, len] = larger_last_segment(n, blocks, it->block);
      const Slice landing = sub(incoming[static_cast<std::size_t>(parent)], offset, len);
      const auto t = b.transfer(child, parent,
                                sub(acc[static_cast<std::size_t>(child)], offset, len), landing);
      chains.add(child, round, t.send);
      chains.add(parent, round, t.recv);
      sent[static_cast<std::size_t>(child)] = t.send;
      // (p = 2: the one child is the other rank; its partial goes on its side.)
      arrivals.push_back({parent, landing, sub(acc[static_cast<std::size_t>(parent)], offset, len),
                          child < parent ? Side::kLeft : Side::kRight});
    }
    // Each arrival is combined after the rank's own send of the round.
    // Why: without overlap a reduction holds the rank's ports; started before the send, it
    // would push the send past the round.
    for (const Arrival& a : arrivals) {
      const OpId r = b.reduce(a.at, a.landing, a.into, a.side);
      b.add_dependency(a.at, sent[static_cast<std::size_t>(a.at)], r);
      chains.add(a.at, round, r);
      if (a.at == root) root_last = r;
    }
    std::fill(sent.begin(), sent.end(), kNoOp);
  }
  return root_last;
}

}  // namespace optcoll::algorithms::patterns
