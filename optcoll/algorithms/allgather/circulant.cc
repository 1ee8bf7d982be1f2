// SPDX-License-Identifier: Apache-2.0
// allgather/circulant (also allgatherv/circulant) — all p broadcasts of bcast/circulant at
// once, on the same circulant graph (Träff's all-broadcast): rank i's block is cut into S
// pieces (two_tree.h's larger_last_segment; S from the largest block) and broadcast with the
// ranks relabelled from i, (r − i) mod p. Every broadcast runs the same relative transfers,
// so in round t (k = t mod q) all of rank r's transfers go to r + s_k: it sends ONE message
// holding, for every transfer f → f + s_k of round t, root (r − f)'s piece, and receives one
// from r − s_k. A message of several non-empty pieces is packed into scratch with copies,
// sent, received into scratch and unpacked into the output at each root's displacement; a
// single piece travels directly (from the input for the rank's own block); empty pieces are
// left out, and a message with none is not sent. Last, every rank copies its own block into
// place.
//
//   p = 4, S = 1 (skips 1, 2; q = 2): round 0: r → r+1 block r (direct);
//     round 1: r → r+2 blocks r and r−1 (packed, unpacked at r+2).
//   p = 3, S = 2 (skips 1, 2; 3 rounds): each root's broadcast, in relative ranks, is
//     0: 0→2 b0 | 1: 0→1 b1 | 2: 2→1 b0, 0→2 b1; so rank r sends in round 0 to r+2 its
//     piece 0, in round 1 to r+1 its piece 1 (both direct), and in round 2 to r+2 root
//     r+1's piece 0 and its own piece 1 (packed).
//
// Cost (alpha-beta, one port, full duplex, no overlap, copy per element): a rank's round is
//   its pack copies, then its send and its receive (each waiting for the partner's packs),
//   then its unpack copies, and every op of a round waits for the rank's previous round: the
//   time is the longest path through the S − 1 + q rounds (α = 1, β = 0, copy = 0: exactly
//   S − 1 + q for any blocks, the largest not empty). After the first rounds (about q)
//   every round is full: all p − 1 ranks but the root receive in every broadcast, so rank r's
//   message holds a piece of every block but (r + s_k)'s.
//   - Equal blocks m (m >= S): every round costs the same on every rank, and every piece of
//   every root crosses p − 1 edges once, so whatever S,
//     T(S) = (S − 1 + q)α + (p − 1)mβ + copy·(m + 2·Σ_{rounds of several pieces} M_t),
//   M_t the round's message; S = 1 minimizes it: qα + (p − 1)mβ, as Bruck's (copy = 0).
//   - Irregular blocks (total M, smallest m_min): the rounds' messages differ from rank to
//   rank and the largest decides; pipelining evens them out, a full round's being at most
//   (M − m_min)/S. segment=auto takes the S that minimizes Σ_t (α + (β + 2·copy)·min(the
//   n_t largest blocks, M − m_min)/S), n_t the transfers of round t (exact for equal blocks
//   and copy = 0; one non-empty block M: bcast/circulant's (q − 1)(α + ceil(M/S)β) + Sα + Mβ
//   up to the rounding), among the S that keep the pieces p(p − 1)·S at most 2^22 (the
//   schedule has up to two copies per piece; segment=N is not limited so). The estimate
//   replays the rounds' longest path (exact; O(p^2·S) for irregular blocks, so beyond 2^22
//   piece visits, p > 2048 with auto, it is segment=auto's cost instead).
//   α = 100, β = 1, 10^4-element blocks (docs/experiments.md has the commands and more): p =
//   64, random blocks: 618,418 against allgatherv/bruck's 1,226,145 and allgatherv/ring's
//   1,257,291 (the lower bound: 609,303); equal blocks: 630,600, Bruck's time.
//   tests/sim/circulant_allgather_test.cc checks the rounds, the equal-block formula and the
//   estimate against the simulator.
// Overlap: with a model that overlaps computation and communication the copies wait only
//   for their data (a pack for the pieces it reads, an unpack for its receive), so packs of
//   round t whose pieces arrived earlier run during round t − 1's transfers, and the own
//   block's copy whenever the core is free (α = 100, β = 1, copy = 0.5, p = 16, random
//   10^3-element blocks: 10% faster than strict rounds). Without overlap a copy cannot run
//   during a transfer, and one started early can only hold up a transfer that becomes ready
//   meanwhile (measured: from 2% faster to 0.3% slower), so there the rounds stay strict
//   and the estimate exact.
// Restrictions: segment "auto" or a positive integer (elements per piece of the largest
//   block) that cuts the largest block into at most 2^16 pieces; any p, any blocks (zeros,
//   all zero).
// Reference: J. L. Träff, "Round-optimal n-block broadcast schedules in logarithmic time",
//            arXiv:2312.11236, 2023 (the schedules, and their use for MPI_Allgatherv);
//            J. L. Träff, "Optimal broadcast schedules in logarithmic time with applications
//            to broadcast, all-broadcast, reduction and all-reduction", arXiv:2407.18004, 2024.

#include "optcoll/algorithms/patterns/circulant.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/two_tree.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {
namespace {

using patterns::CirculantTransfer;
using patterns::larger_last_segment;

// The estimate replays the rounds rank by rank while that visits at most this many pieces.
constexpr double kReplayBudget = 4194304.0;  // 2^22
// segment=auto keeps the pieces of all broadcasts, p(p − 1)·S, at most this many (the
// schedule has up to two copies per piece: about ring's ops at p = 2048), and so within the
// replay's budget.
constexpr Count kAutoPieces = Count{1} << 22;

Count smallest_block(const CollectiveSpec& spec) {
  if (spec.counts.empty()) return spec.count;
  return *std::min_element(spec.counts.begin(), spec.counts.end());
}

bool equal_blocks(const CollectiveSpec& spec) {
  return spec.counts.empty() || largest_block(spec) == smallest_block(spec);
}

// Transfers per round of one broadcast of S pieces, for segment=auto's cost: the rounds that
// are not full (fewer than p − 1 transfers), in order; all later ones are full. For S > q
// these are the not-full rounds of S − q (every p <= 700, S <= 5q + 2 checked; the cost only
// ranks S, so a p where that failed would get a worse S, never a wrong schedule), so the
// rounds of S = 1..q describe every S.
class RoundProfile {
 public:
  explicit RoundProfile(Rank p) : q_(ceil_log2(p)) {
    if (q_ == 0) return;
    const auto plan = patterns::circulant_schedule(p);
    for (Count s = 1; s <= q_; ++s) {
      std::vector<Rank> transfers = patterns::circulant_bcast_round_sizes(plan, s);
      while (!transfers.empty() && transfers.back() == p - 1) transfers.pop_back();
      partial_.push_back(std::move(transfers));
    }
  }
  std::int64_t q() const { return q_; }
  const std::vector<Rank>& partial(Count s) const {
    return partial_[static_cast<std::size_t>((s - 1) % q_)];
  }
  Count full(Count s) const { return s - 1 + q_ - static_cast<Count>(partial(s).size()); }

 private:
  std::int64_t q_;
  std::vector<std::vector<Rank>> partial_;  // index S − 1, S in [1, q]
};

// What segment=auto's cost reads of a spec.
struct Shape {
  RoundProfile rounds;
  std::vector<Count> top;  // top[n]: the n largest blocks' sum
  Count received = 0;      // M − m_min: what the rank with the smallest block receives
  explicit Shape(const CollectiveSpec& spec) : rounds(spec.nranks) {
    std::vector<Count> blocks = blocks_of(Layout(spec));
    std::sort(blocks.begin(), blocks.end(), std::greater<>());
    top.assign(blocks.size() + 1, 0);
    for (std::size_t i = 0; i < blocks.size(); ++i) top[i + 1] = top[i] + blocks[i];
    received = top.back() - (blocks.empty() ? 0 : blocks.back());
  }
};

// segment=auto's cost of S pieces (file comment): per round, α plus at most what the n
// largest blocks' pieces weigh, n its transfers, and never more than a full round's
// (M − m_min)/S; pack and unpack copies add 2·copy per element to β.
Time approximate_cost(const Shape& shape, const LinkCost& link, Time copy, Count blocks) {
  if (shape.rounds.q() == 0) return 0;
  Time elements = static_cast<Time>(shape.rounds.full(blocks)) * static_cast<Time>(shape.received);
  for (const Rank n : shape.rounds.partial(blocks)) {
    elements += static_cast<Time>(std::min(shape.top[static_cast<std::size_t>(n)], shape.received));
  }
  return static_cast<Time>(blocks - 1 + shape.rounds.q()) * link.alpha +
         (link.beta + 2 * copy) * elements / static_cast<Time>(blocks);
}

// S: from params' segment (elements per piece of the largest block), or the S that
// minimizes approximate_cost among those that keep p(p − 1)·S <= kAutoPieces (at least 1).
Count circulant_pieces(const CollectiveSpec& spec, const Params& params, const CostModel& model,
                       const Shape& shape) {
  Count largest = largest_block(spec);
  if (largest == 0) return 1;
  if (!params.has("segment") || params.get("segment") == "auto") {
    const Count pairs = std::max<Count>(1, spec.nranks * (spec.nranks - 1));
    largest = std::min(largest, std::max<Count>(1, kAutoPieces / pairs));
  }
  const LinkCost link = link_cost(model, spec);
  const Time copy = model.copy * model.units(1, spec.elem_bytes);
  const double hint =
      std::sqrt(static_cast<double>(shape.rounds.q()) * static_cast<double>(shape.received) *
                (link.beta + 2 * copy) / std::max(link.alpha, 1e-300));
  return resolve_segments(
      params, largest, [&](Count s) { return approximate_cost(shape, link, copy, s); }, hint);
}

// One broadcast's transfers, from relative rank 0, by round: every root's broadcast runs
// these (relative to the root).
struct Rounds {
  std::vector<CirculantTransfer> transfers;  // in round order
  std::vector<std::size_t> begin;            // round t: transfers [begin[t], begin[t + 1])
  std::vector<Rank> skip;                    // round t's skip s_k
  std::size_t count() const { return skip.size(); }
  std::span<const CirculantTransfer> of(std::size_t t) const {
    return std::span(transfers).subspan(begin[t], begin[t + 1] - begin[t]);
  }
};

Rounds all_broadcast_rounds(Rank p, Count blocks) {
  Rounds rounds;
  if (p <= 1) return rounds;
  const auto plan = patterns::circulant_schedule(p);
  rounds.transfers = patterns::circulant_bcast_transfers(plan, blocks);
  const auto n = static_cast<std::size_t>(blocks - 1 + plan.q);
  rounds.begin.assign(n + 1, rounds.transfers.size());
  rounds.skip.assign(n, 0);
  for (std::size_t i = rounds.transfers.size(); i-- > 0;) {
    const CirculantTransfer& x = rounds.transfers[i];
    const auto t = static_cast<std::size_t>(x.round);
    rounds.begin[t] = i;
    rounds.skip[t] = (x.to - x.from + p) % p;
  }
  // A round without transfers (none in practice) starts where the next one does.
  for (std::size_t t = n; t-- > 0;)
    rounds.begin[t] = std::min(rounds.begin[t], rounds.begin[t + 1]);
  return rounds;
}

// A non-empty piece of a message: root `root`'s elements [offset, offset + count).
struct Piece {
  Rank root = 0;
  Count offset = 0;
  Count count = 0;
};

// Rank `from`'s message in round t: for each transfer f → f + s of the round, in the order
// sender and receiver share, root (from − f) mod p's piece, where not empty.
void message_pieces(const Layout& layout, const Rounds& rounds, std::size_t t, Count blocks,
                    Rank from, std::vector<Piece>& pieces) {
  pieces.clear();
  const Rank p = layout.nranks();
  for (const CirculantTransfer& x : rounds.of(t)) {
    const Rank root = (from - x.from + p) % p;
    const auto [offset, count] = larger_last_segment(layout.block(root), blocks, x.block);
    if (count > 0) pieces.push_back({root, offset, count});
  }
}

Count total_of(const std::vector<Piece>& pieces) {
  Count total = 0;
  for (const Piece& piece : pieces) total += piece.count;
  return total;
}

// Emits the rounds. Without overlap each rank's ops form one chain through the rounds: its
// packs, then its send and its receive side by side, then its unpacks, then the next
// round's. With overlap only the transfers keep that order; the copies wait for their data.
class AllBroadcastEmitter {
 public:
  AllBroadcastEmitter(ScheduleBuilder& b, const Rounds& rounds, Count blocks, bool overlap)
      : b_(b),
        layout_(b.layout()),
        rounds_(rounds),
        blocks_(blocks),
        p_(b.nranks()),
        overlap_(overlap),
        tail_(static_cast<std::size_t>(p_)),
        packs_(static_cast<std::size_t>(p_)),
        send_buf_(static_cast<std::size_t>(p_)),
        recv_buf_(static_cast<std::size_t>(p_)),
        pieces_(static_cast<std::size_t>(p_)) {
    allocate_scratch();
  }

  void emit_round(std::size_t t) {
    for (Rank r = 0; r < p_; ++r) message_pieces(layout_, rounds_, t, blocks_, r, at(pieces_, r));
    for (Rank r = 0; r < p_; ++r) pack(r);
    transfers(rounds_.skip[t]);
    for (Rank r = 0; r < p_; ++r) unpack(r, (r - rounds_.skip[t] + p_) % p_);
  }

  // Every rank's own block, input to output. Why after its last round without overlap: the
  // copy holds the rank's processor, and there it delays no transfer, its own or a partner's.
  // With overlap it waits for nothing.
  void own_blocks() {
    for (Rank r = 0; r < p_; ++r) {
      const OpId copy = b_.copy(r, input_of(layout_, r), out(r));
      if (!overlap_) chain(r, copy);
    }
  }

 private:
  struct Tail {  // what a rank's next op waits for
    OpId first = kNoOp;
    OpId second = kNoOp;
  };

  template <typename T>
  static T& at(std::vector<T>& v, Rank r) {
    return v[static_cast<std::size_t>(r)];
  }
  Slice out(Rank root) const { return block_in(layout_, Buf::kOutput, root); }
  // Where rank r reads root's piece: its input for its own block, else its output.
  Slice source(Rank r, const Piece& piece) const {
    const Slice data = piece.root == r ? input_of(layout_, r) : out(piece.root);
    return sub(data, piece.offset, piece.count);
  }
  void after_tail(Rank r, OpId op) {
    b_.add_dependency(r, at(tail_, r).first, op);
    b_.add_dependency(r, at(tail_, r).second, op);
  }
  void chain(Rank r, OpId op) {
    if (op == kNoOp) return;
    after_tail(r, op);
    at(tail_, r) = {op, kNoOp};
  }

  // One send and one receive buffer per rank, as large as its largest packed message: a
  // round's packs wait for the rank's previous send, its receive for its previous unpacks.
  void allocate_scratch() {
    std::vector<Count> send(static_cast<std::size_t>(p_), 0);
    std::vector<Count> recv(static_cast<std::size_t>(p_), 0);
    std::vector<Piece> pieces;
    for (std::size_t t = 0; t < rounds_.count(); ++t) {
      for (Rank r = 0; r < p_; ++r) {
        message_pieces(layout_, rounds_, t, blocks_, r, pieces);
        if (pieces.size() < 2) continue;
        const Count total = total_of(pieces);
        at(send, r) = std::max(at(send, r), total);
        const Rank to = (r + rounds_.skip[t]) % p_;
        at(recv, to) = std::max(at(recv, to), total);
      }
    }
    for (Rank r = 0; r < p_; ++r) {
      if (at(send, r) > 0) at(send_buf_, r) = b_.scratch(r, at(send, r));
      if (at(recv, r) > 0) at(recv_buf_, r) = b_.scratch(r, at(recv, r));
    }
  }

  // A message of several pieces is gathered into the sender's scratch: without overlap
  // after the rank's previous round (chained), with overlap as soon as its data are there.
  void pack(Rank r) {
    const auto& pieces = at(pieces_, r);
    at(packs_, r).clear();
    if (pieces.size() < 2) return;
    Count offset = 0;
    for (const Piece& piece : pieces) {
      const OpId copy = b_.copy(r, source(r, piece), sub(at(send_buf_, r), offset, piece.count));
      if (overlap_) {
        at(packs_, r).push_back(copy);
      } else {
        chain(r, copy);
      }
      offset += piece.count;
    }
  }

  void transfers(Rank skip) {
    std::vector<Tail> round(static_cast<std::size_t>(p_));  // each rank's send and receive
    for (Rank r = 0; r < p_; ++r) {
      const auto& pieces = at(pieces_, r);
      if (pieces.empty()) continue;
      const Rank to = (r + skip) % p_;
      const bool single = pieces.size() == 1;
      const Count total = total_of(pieces);
      const auto x =
          b_.transfer(r, to, single ? source(r, pieces[0]) : sub(at(send_buf_, r), 0, total),
                      single ? sub(out(pieces[0].root), pieces[0].offset, total)
                             : sub(at(recv_buf_, to), 0, total));
      // Why: both follow the rank's previous round (the round structure); the send its packs
      // (with overlap not chained: its data); without overlap the receive waits for the
      // rank's packs too (chained), so that it never starts first and holds them up, and
      // with them the rank's own send, past the round.
      after_tail(r, x.send);
      after_tail(to, x.recv);
      for (const OpId copy : at(packs_, r)) b_.add_dependency(r, copy, x.send);
      at(round, r).first = x.send;
      at(round, to).second = x.recv;
    }
    // The round's transfers become the tail: they already wait for the old one.
    for (Rank r = 0; r < p_; ++r) {
      if (at(round, r).first != kNoOp || at(round, r).second != kNoOp) at(tail_, r) = at(round, r);
    }
  }

  // Rank r's message from `from`, if packed, goes from scratch to each root's place. Why
  // without overlap the unpacks wait for the rank's send too (chain): a copy started before
  // it would hold the processor and delay the send, and so the partner's round. With
  // overlap they wait only for the receive (their data), and the next round for none of
  // them but the copies that need their data.
  void unpack(Rank r, Rank from) {
    const auto& pieces = at(pieces_, from);
    if (pieces.size() < 2) return;
    Count offset = 0;
    for (const Piece& piece : pieces) {
      const OpId copy = b_.copy(r, sub(at(recv_buf_, r), offset, piece.count),
                                sub(out(piece.root), piece.offset, piece.count));
      if (!overlap_) chain(r, copy);
      offset += piece.count;
    }
  }

  ScheduleBuilder& b_;
  const Layout& layout_;
  const Rounds& rounds_;
  Count blocks_;
  Rank p_;
  bool overlap_;  // the model's: copies may run during transfers
  std::vector<Tail> tail_;
  std::vector<std::vector<OpId>> packs_;  // with overlap, per rank, its packs of the round
  std::vector<Slice> send_buf_;
  std::vector<Slice> recv_buf_;
  std::vector<std::vector<Piece>> pieces_;  // per rank, its message of the current round
};

}  // namespace

std::optional<std::string> circulant_allgather_why_not(const CollectiveSpec& spec,
                                                       const Params& params) {
  if (auto reason = segment_why_not(spec, params)) return reason;
  if (!params.has("segment") || params.get("segment") == "auto") return std::nullopt;
  const Count segment = params.get_int("segment");
  const Count largest = largest_block(spec);
  const Count pieces = largest <= 0 ? 1 : (largest - 1) / segment + 1;
  if (pieces <= kMaxSegments) return std::nullopt;
  return fmt::format(
      "segment={} cuts the largest block ({} elements) into more than {} pieces; use a larger "
      "segment or auto",
      segment, largest, kMaxSegments);
}

Schedule build_allgather_circulant(const CollectiveSpec& spec, const Params& params,
                                   const CostModel& model) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/circulant");
  const Count blocks = circulant_pieces(spec, params, model, Shape(spec));
  b.set_params(segment_param_text(largest_block(spec), blocks));
  const Rounds rounds = all_broadcast_rounds(spec.nranks, blocks);
  AllBroadcastEmitter emitter(b, rounds, blocks, model.overlap);
  for (std::size_t t = 0; t < rounds.count(); ++t) emitter.emit_round(t);
  emitter.own_blocks();
  return std::move(b).finish();
}

namespace {

// Rank `from`'s message in round t: its elements and its non-empty pieces.
struct MessageSize {
  Count elements = 0;
  std::size_t pieces = 0;
};

// Every root's block cut into `blocks` pieces as larger_last_segment cuts it: the first
// `first_larger` pieces hold `base` elements, the rest one more. Made once per replay, so
// that a piece's size costs a comparison instead of two divisions (the replay visits up to
// kReplayBudget pieces, and node-aware estimates replay many phases).
class PieceSizes {
 public:
  PieceSizes(const Layout& layout, Count blocks) {
    const auto up = static_cast<std::size_t>(layout.nranks());
    base_.resize(up);
    first_larger_.resize(up);
    for (std::size_t root = 0; root < up; ++root) {
      const Count block = layout.block(static_cast<Rank>(root));
      base_[root] = block / blocks;
      first_larger_[root] = blocks - block % blocks;
    }
  }
  // Elements of piece `piece` of `root`'s block (larger_last_segment(...).count).
  Count of(Rank root, Count piece) const {
    const auto r = static_cast<std::size_t>(root);
    return base_[r] + (piece >= first_larger_[r] ? 1 : 0);
  }

 private:
  std::vector<Count> base_;
  std::vector<Count> first_larger_;
};

MessageSize message_size(const PieceSizes& sizes, Rank p, const Rounds& rounds, std::size_t t,
                         Rank from) {
  MessageSize size;
  for (const CirculantTransfer& x : rounds.of(t)) {
    Rank root = from - x.from;
    if (root < 0) root += p;
    const Count count = sizes.of(root, x.block);
    size.elements += count;
    size.pieces += count > 0 ? 1 : 0;
  }
  return size;
}

// The makespan of build_allgather_circulant's schedule under a closed-form model, replayed
// round by round: a rank's packs start when its previous round ends; a transfer starts when
// both ends have packed; the unpacks start when the rank's send and receive have ended. Its
// chain orders every op of a rank that could compete for its port or processor, so the
// simulator's rules leave no other choice. With equal blocks every rank's message of a round
// is the same size.
Time replay(const CollectiveSpec& spec, const Rounds& rounds, Count blocks, const LinkCosts& c) {
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  const auto up = static_cast<std::size_t>(p);
  const bool equal = equal_blocks(spec);
  std::vector<Time> ready(up, 0);
  std::vector<Time> packed(up);
  std::vector<Time> done(up);
  std::vector<MessageSize> message(up);
  const auto copies = [&](const MessageSize& m) {
    return m.pieces >= 2 ? c.copy_of(m.elements) : 0;
  };
  const PieceSizes sizes(layout, blocks);
  for (std::size_t t = 0; t < rounds.count(); ++t) {
    if (equal) {
      std::fill(message.begin(), message.end(), message_size(sizes, p, rounds, t, 0));
    } else {
      for (Rank r = 0; r < p; ++r)
        message[static_cast<std::size_t>(r)] = message_size(sizes, p, rounds, t, r);
    }
    for (std::size_t r = 0; r < up; ++r) done[r] = packed[r] = ready[r] + copies(message[r]);
    const Rank skip = rounds.skip[t];
    for (Rank r = 0; r < p; ++r) {
      const auto from = static_cast<std::size_t>(r);
      const auto to = static_cast<std::size_t>((r + skip) % p);
      if (message[from].elements == 0) continue;
      const Time end = std::max(packed[from], packed[to]) + c.message(message[from].elements);
      done[from] = std::max(done[from], end);
      done[to] = std::max(done[to], end);
    }
    for (Rank r = 0; r < p; ++r) {
      const auto from = static_cast<std::size_t>((r - skip + p) % p);
      ready[static_cast<std::size_t>(r)] =
          done[static_cast<std::size_t>(r)] + copies(message[from]);
    }
  }
  Time makespan = 0;
  for (Rank r = 0; r < p; ++r) {
    makespan = std::max(makespan, ready[static_cast<std::size_t>(r)] + c.copy_of(layout.block(r)));
  }
  return makespan;
}

}  // namespace

// Estimate: the replay of the rounds (exact) while it visits at most 2^22 pieces, else
// segment=auto's cost plus the largest block's copy (a ranking estimate).
std::optional<Estimate> estimate_allgather_circulant(const CollectiveSpec& spec,
                                                     const Params& params, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Shape shape(spec);
  const Count blocks = circulant_pieces(spec, params, model, shape);
  const Count largest = largest_block(spec);
  const double pieces =
      static_cast<double>(p) * static_cast<double>(p - 1) * static_cast<double>(blocks);
  const bool exact = pieces / (equal_blocks(spec) ? p : 1) <= kReplayBudget;
  const Time time = exact ? replay(spec, all_broadcast_rounds(p, blocks), blocks, *c)
                          : approximate_cost(shape, link_cost(model, spec), c->copy, blocks) +
                                c->copy_of(largest);
  const double rounds = static_cast<double>(blocks - 1 + ceil_log2(p));
  return make_estimate(spec, time,
                       static_cast<double>(p - 1) * static_cast<double>(Layout(spec).total()),
                       2 * pieces + 2 * p * rounds + p, exact, segment_param_text(largest, blocks));
}

}  // namespace optcoll::algorithms
