// SPDX-License-Identifier: Apache-2.0
// File: the simulator's event loop (semantics: the comment at the top of simulator.cc).
//
// How it stays fast: every op lives in flat arrays indexed by a global op index; an op
// becomes ready when a counter of open dependencies reaches zero; work that cannot start
// waits in a per-rank queue of the resource it lacks (send ports, receive ports, processor),
// and only a release of that resource looks at that queue, and only as far as its head can
// start. Nothing scans all waiting transfers on an event. A transfer waits on one of its two
// ends' ports at a time and moves to the other end when it finds that one busy; in a
// many-to-many schedule most of the event loop is such moves, so the port queues are lists
// in which every waiting transfer stands at both ends (WaitLists) and a move is a change of
// tag, decided from the list entry alone (move_if_blocked). Under a placement a transfer
// between nodes that finds a NIC channel busy waits in the queue of its pair of nodes
// (from, to), which a release of either channel looks at only if the other one is free:
// were it parked at one channel, each release would move nearly every transfer parked there
// to its other end, all of the other channels being busy.
#include "optcoll/sim/engine.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>

#include "optcoll/model/error.h"
#include "optcoll/model/huge_pages.h"
#include "optcoll/schedule/validate.h"

namespace optcoll::sim::detail {

namespace {
constexpr std::uint32_t kPrefetchSuccessors = 8;

inline void prefetch(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}
}  // namespace

Engine::Engine(const Schedule& schedule, const CostModel& model,
               std::vector<std::uint32_t> partners)
    : schedule_(schedule),
      model_(model),
      full_duplex_(model.duplex == Duplex::kFull),
      overlap_(model.overlap),
      ports_(model.ports),
      cores_(model.cores.value_or(0)),
      cores_per_rank_(model.cores_per_rank),
      node_beta_(model.node_beta.value_or(0)),
      clocked_(model.stretches_clock()),
      helps_(model.helped_bytes.has_value() &&
             (!model.cores || std::ssize(schedule.ranks) <= *model.cores)) {
  flatten(partners);
  partners = {};  // no longer needed: free it before the run
  if (cores_ > 0) activity_.assign(schedule.ranks.size(), 0);
  if (model.topology) {
    topology_ = &*model.topology;
    const std::int64_t links = topology_->link_count();
    if (links >= std::numeric_limits<std::int32_t>::max()) {
      throw_invalid("topology has {} links; the simulator takes at most 2^31 - 2", links);
    }
    link_busy_.assign(static_cast<std::size_t>(links), 0);
    link_queue_slot_.assign(static_cast<std::size_t>(links), -1);
    link_capacity_ = 1;
    has_links_ = true;
  }
  if (model.placement) {
    // Each node's NICs: channel 2 node (out of the node) and 2 node + 1 (into it), each
    // taken by up to nic_ports transfers at once.
    placement_ = &*model.placement;
    const auto channels = 2 * static_cast<std::size_t>(placement_->nodes());
    link_busy_.assign(channels, 0);
    link_queue_slot_.assign(channels, -1);
    link_capacity_ = static_cast<std::uint16_t>(model.nic_ports);
    has_links_ = true;
    nodes_ = placement_->nodes();
    waiting_out_.assign(static_cast<std::size_t>(nodes_), {});
    waiting_in_.assign(static_cast<std::size_t>(nodes_), {});
  }
}

std::vector<Rank> Engine::number_ops() {
  const std::size_t p = schedule_.ranks.size();
  base_.assign(p + 1, 0);
  std::size_t total = 0;
  std::size_t longest = 0;
  for (std::size_t r = 0; r < p; ++r) {
    base_[r] = static_cast<std::int64_t>(total);
    total += schedule_.ranks[r].ops.size();
    longest = std::max(longest, schedule_.ranks[r].ops.size());
  }
  base_[p] = static_cast<std::int64_t>(total);
  if (total >= kMaxGids) {
    throw_invalid("schedule has {} ops; the simulator takes at most {}", total, kMaxGids - 1);
  }
  // Ranks by op count, descending, then by rank (a counting sort), and how many ranks have
  // an op of each index.
  const auto count_of = [&](std::size_t r) { return schedule_.ranks[r].ops.size(); };
  std::vector<std::int64_t> with_count(longest + 2, 0);  // then: first position per count
  for (std::size_t r = 0; r < p; ++r) ++with_count[longest - count_of(r)];
  std::int64_t sum = 0;
  for (std::int64_t& c : with_count) c = std::exchange(sum, sum + c);
  std::vector<Rank> rank_at(p);
  slot_pos_.assign(p, 0);
  for (std::size_t r = 0; r < p; ++r) {
    const auto position = with_count[longest - count_of(r)]++;
    slot_pos_[r] = static_cast<std::int32_t>(position);
    rank_at[static_cast<std::size_t>(position)] = static_cast<Rank>(r);
  }
  // slot_start_[k]: the ops of index below k; ranks with an op k are those at positions
  // below slot_start_[k + 1] - slot_start_[k].
  slot_start_.assign(longest + 1, 0);
  std::size_t ranks_left = p;  // ranks with more than k ops
  for (std::size_t k = 0; k < longest; ++k) {
    while (ranks_left > 0 && count_of(static_cast<std::size_t>(rank_at[ranks_left - 1])) <= k) {
      --ranks_left;
    }
    slot_start_[k + 1] = slot_start_[k] + static_cast<std::int64_t>(ranks_left);
  }
  return rank_at;
}

void Engine::renumber_partners(std::vector<std::uint32_t>& partners) const {
  // Program order -> gid, then each partner looked up (ahead: the lookups are scattered).
  std::vector<std::uint32_t> gid_of(partners.size());
  for (std::size_t r = 0; r + 1 < base_.size(); ++r) {
    const auto pos = static_cast<std::uint32_t>(slot_pos_[r]);
    for (auto i = base_[r]; i < base_[r + 1]; ++i) {
      gid_of[static_cast<std::size_t>(i)] =
          static_cast<std::uint32_t>(slot_start_[static_cast<std::size_t>(i - base_[r])]) + pos;
    }
  }
  constexpr std::size_t kAhead = 16;
  for (std::size_t i = 0; i < partners.size(); ++i) {
    if (i + kAhead < partners.size() && partners[i + kAhead] != kNoPartner) {
      prefetch(&gid_of[partners[i + kAhead]]);
    }
    if (partners[i] != kNoPartner) partners[i] = gid_of[partners[i]];
  }
}

void Engine::describe_op(Gid g, Rank rank, const Action& action) {
  Hot& h = hot_[g];
  Cold& c = cold_[g];
  const std::size_t eb = schedule_.spec.elem_bytes;
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        // A SendSlices / RecvSlices is one message of its slices' total: priced as a Send /
        // Recv of that size (no copy: the data move straight between the slices and the wire).
        Count& count = count_[static_cast<std::size_t>(g)];
        if constexpr (std::is_same_v<A, Send> || std::is_same_v<A, SendSlices>) {
          count = message_count(action);
          h.kind = OpKind::kSend;
          h.empty = count == 0;
          c.duration = model_.transfer_time(rank, a.peer, count, eb);
        } else if constexpr (std::is_same_v<A, Recv> || std::is_same_v<A, RecvSlices>) {
          count = message_count(action);
          h.kind = OpKind::kRecv;
          h.empty = count == 0;
        } else if constexpr (std::is_same_v<A, RecvReduce>) {
          count = a.dst.count;
          h.kind = OpKind::kRecvReduce;
          h.empty = count == 0;
          c.duration = model_.reduce_time(count, eb);
        } else if constexpr (std::is_same_v<A, Copy>) {
          count = a.src.count;
          h.kind = OpKind::kCopy;
          c.duration = model_.copy_time(count, eb);
        } else {
          static_assert(std::is_same_v<A, Reduce>);
          count = a.src.count;
          h.kind = OpKind::kReduce;
          c.duration = model_.reduce_time(count, eb);
        }
      },
      action);
}

void Engine::build_successors(const std::vector<Gid>& preds) {
  const std::size_t edges = preds.size();
  if (edges >= kMaxGids) {
    throw_invalid("schedule has {} dependencies; the simulator takes at most {}", edges,
                  kMaxGids - 1);
  }
  // Successor lists (CSR). On entry each op's succ_begin holds its number of successors; it
  // becomes the end of its list, and the lists are filled from their ends, the ops taken in
  // flatten()'s order (the order within a list does not matter: whatever becomes ready is
  // sorted by program order before it starts).
  std::uint32_t sum = 0;
  for (Cold& c : cold_) {
    sum += c.succ_begin;
    c.succ_begin = sum;
  }
  reserve_on_huge_pages(succ_, edges);
  succ_.resize(edges);
  std::size_t k = 0;
  for_each_op_tiled([&](std::size_t g, std::size_t /*pos*/, std::size_t /*op*/) {
    for (std::int32_t j = 0; j < hot_[g].deps_left; ++j) {
      Cold& pred = cold_[static_cast<std::size_t>(preds[k++])];
      succ_[--pred.succ_begin] = static_cast<Gid>(g);
    }
  });
}

void Engine::reset_run_state() {
  const std::size_t total = hot_.size();
  const std::size_t p = schedule_.ranks.size();
  reserve_on_huge_pages(start_, total);
  reserve_on_huge_pages(end_, total);
  reserve_on_huge_pages(cause_, total);
  start_.assign(total, -1);
  end_.assign(total, -1);
  cause_.assign(total, kNoGid);
  sends_active_.assign(p, 0);
  recvs_active_.assign(p, 0);
  joined_active_.assign(p, 0);
  if (model_.send_mode == SendMode::kShared) sends_sharable_.assign(p, {});
  computing_.assign(p, 0);
  queue_slot_.assign(p * 3, -1);
}

void Engine::flatten(std::vector<std::uint32_t>& partners) {
  const std::vector<Rank> rank_at = number_ops();
  const auto total = static_cast<std::size_t>(base_.back());
  OPTCOLL_CHECK(partners.size() == total, "simulator given {} partners for {} ops", partners.size(),
                total);
  renumber_partners(partners);
  reserve_on_huge_pages(hot_, total);
  reserve_on_huge_pages(cold_, total + 1);
  reserve_on_huge_pages(count_, total);
  hot_.resize(total);
  cold_.resize(total + 1);
  count_.resize(total);  // the last entry only ends the successor lists
  // Predecessors, flat, so that successor lists are built without a second pass over the
  // schedule's (scattered) ops and `after` lists: the schedule is read exactly once.
  std::vector<Gid> preds;
  reserve_on_huge_pages(preds, 2 * total);
  for_each_op_tiled([&](std::size_t g, std::size_t pos, std::size_t k) {
    const Rank rank = rank_at[pos];
    const auto r = static_cast<std::size_t>(rank);
    const auto& ops = schedule_.ranks[r].ops;
    const Op& op = ops[k];
    // The tile visits 64 ranks' programs at once, too many streams for the hardware
    // prefetcher: fetch this rank's op for two rows on.
    if (k + 2 < ops.size()) {
      const auto* ahead = reinterpret_cast<const char*>(&ops[k + 2]);
      prefetch(ahead);
      prefetch(ahead + sizeof(Op) - 1);
    }
    if (op.not_before > 0) {
      if (release_.empty()) release_.assign(total, 0);
      release_[g] = op.not_before;
    }
    Hot& h = hot_[g];
    h.rank = rank;
    h.deps_left = static_cast<std::int32_t>(op.after.size());
    const std::size_t order = static_cast<std::size_t>(base_[r]) + k;
    cold_[g].order = static_cast<std::int32_t>(order);
    for (const OpId d : op.after) {
      const Gid pred = gid(rank, d);
      preds.push_back(pred);
      ++cold_[static_cast<std::size_t>(pred)].succ_begin;  // a count, for now
    }
    if (partners[order] != kNoPartner) h.partner = static_cast<Gid>(partners[order]);
    describe_op(static_cast<Gid>(g), rank, op.action);
  });
  build_successors(preds);
  if (model_.folds_copies) mark_folded_copies();
  if (model_.combines_in_place) price_in_place_combines();
  if (model_.send_mode != SendMode::kPort) cache_send_traits();
  reset_run_state();
}

void Engine::price_in_place_combines() {
  const std::size_t eb = schedule_.spec.elem_bytes;
  for (std::size_t g = 0; g < hot_.size(); ++g) {
    const Hot& h = hot_[g];
    if (h.kind != OpKind::kSend || h.empty || hot_[h.partner].kind != OpKind::kRecvReduce) {
      continue;
    }
    cold_[g].duration =
        fixed_transfer_time(static_cast<Gid>(g)) + model_.reduce_time(count_[g], eb);
    cold_[h.partner].duration = 0;
  }
}

void Engine::cache_send_traits() {
  reserve_on_huge_pages(send_traits_, hot_.size());
  send_traits_.assign(hot_.size(), 0);
  for (std::size_t g = 0; g < hot_.size(); ++g) {
    if (hot_[g].kind != OpKind::kSend) continue;
    const auto send = static_cast<Gid>(g);
    const SendMode mode = model_.send_mode_for(send_bytes(send));
    std::uint8_t traits = static_cast<std::uint8_t>(mode);
    if (mode == SendMode::kReceiver && port_hold(send) <= 0) traits |= kHoldsNothingBit;
    send_traits_[g] = traits;
  }
}

Time Engine::fixed_transfer_time(Gid g) const {
  const Rank from = hot_[g].rank;
  const Rank to = hot_[hot_[g].partner].rank;
  return model_.latency(from, to) + model_.handshake_time(from, to, send_bytes(g));
}

void Engine::mark_folded_copies() {
  folded_.assign(hot_.size(), 0);
  std::vector<std::uint8_t> taken(hot_.size(), 0);  // reductions a copy folds into
  for_each_in_program_order([&](Gid g) {
    if (hot_[g].kind != OpKind::kCopy || succ_end(g) - succ_begin(g) != 1) return;
    const Gid reduction = succ_[succ_begin(g)];
    if (taken[static_cast<std::size_t>(reduction)] != 0 ||
        !copy_folds_into(std::get<Copy>(op(g).action), op(reduction).action)) {
      return;
    }
    taken[static_cast<std::size_t>(reduction)] = 1;
    folded_[static_cast<std::size_t>(g)] = 1;
    cold_[g].duration = 0;
  });
}

bool Engine::can_send(Rank r) const {
  if (!overlap_ && computing_[r] > 0) return false;
  const int busy = full_duplex_ ? sends_active_[r] : sends_active_[r] + recvs_active_[r];
  return busy < ports_;
}

bool Engine::can_receive(Rank r) const {
  if (!overlap_ && computing_[r] > 0) return false;
  if (!helping_.empty() && helping_[r] > 0) return false;
  const int busy = full_duplex_ ? recvs_active_[r] : sends_active_[r] + recvs_active_[r];
  return busy < ports_;
}

bool Engine::can_compute(Rank r) const {
  if (computing_[r] >= cores_per_rank_) return false;
  if (!helping_.empty() && helping_[r] > 0) return false;
  return overlap_ || sends_active_[r] + recvs_active_[r] + joined_active_[r] == 0;
}

namespace {

// Whether two sends carry the same data (a Send's slice, or a SendSlices' list).
bool same_data(const Action& a, const Action& b) {
  if (const auto* x = std::get_if<Send>(&a)) {
    const auto* y = std::get_if<Send>(&b);
    return y != nullptr && x->src == y->src;
  }
  const auto* x = std::get_if<SendSlices>(&a);
  const auto* y = std::get_if<SendSlices>(&b);
  return x != nullptr && y != nullptr && x->src == y->src;
}

}  // namespace

bool Engine::may_join(Gid g) const {
  if (sends_sharable_.empty() || send_mode(g) != SendMode::kShared) return false;
  const Action& mine = op(g).action;
  const auto& in_progress = sends_sharable_[static_cast<std::size_t>(hot_[g].rank)];
  return std::any_of(in_progress.begin(), in_progress.end(),
                     [&](Gid other) { return same_data(op(other).action, mine); });
}

std::size_t Engine::send_bytes(Gid g) const {
  return static_cast<std::size_t>(count_[static_cast<std::size_t>(sender(g))]) *
         schedule_.spec.elem_bytes;
}

void Engine::track_send(Gid g, bool started) {
  if (sends_sharable_.empty() || send_mode(g) != SendMode::kShared) return;
  auto& in_progress = sends_sharable_[static_cast<std::size_t>(hot_[g].rank)];
  if (started) {
    in_progress.push_back(g);
  } else {
    in_progress.erase(std::find(in_progress.begin(), in_progress.end(), g));
  }
}

bool Engine::has_resource(Rank rank, QueueType type) const {
  switch (type) {
    case kSendQueue:
      return can_send(rank);
    case kRecvQueue:
      return can_receive(rank);
    case kComputeQueue:
      return can_compute(rank);
    case kLinkQueue:
      return link_busy_[static_cast<std::size_t>(rank)] < link_capacity_;
    case kNicPairQueue: {
      const NicPair& pair = nic_pairs_[static_cast<std::size_t>(rank)];
      return channel_free(out_channel_of(pair.from_node)) &&
             channel_free(in_channel_of(pair.to_node));
    }
  }
  return false;
}

Time Engine::stretch() const {
  Time s = 1.0;
  if (cores_ > 0 && busy_ > cores_) {
    s = static_cast<Time>(busy_) / static_cast<Time>(cores_);
  }
  if (node_beta_ > 0) s = std::max(s, demand_ * node_beta_);
  return s;
}

void Engine::advance_clock(Time now) {
  if (now == instant_virtual_.back()) return;
  instant_real_.push_back(instant_real_.back() + (now - instant_virtual_.back()) * stretch());
  instant_virtual_.push_back(now);
}

double Engine::traffic_rate(Gid g) const {
  const Time duration = cold_[g].duration;
  if (duration <= 0) return 0;  // done at once: it asks for no bandwidth over time
  const std::size_t eb = schedule_.spec.elem_bytes;
  const double units = model_.units(count_[static_cast<std::size_t>(g)], eb);
  double traffic = 0;
  switch (hot_[g].kind) {
    case OpKind::kSend: {
      const bool into_reduce = hot_[hot_[g].partner].kind == OpKind::kRecvReduce;
      if (into_reduce && model_.combines_in_place) {
        traffic = units * kReduceTraffic;  // the combine reads the sender's buffer
        break;
      }
      traffic = units * (send_mode(g) == SendMode::kReceiver ? kSingleCopyTransferTraffic
                                                             : kStagedTransferTraffic);
      if (into_reduce && helping(g)) traffic += units * kReduceTraffic;  // its reduction
      break;
    }
    case OpKind::kCopy:
      traffic = units * kCopyTraffic;
      break;
    case OpKind::kReduce:
    case OpKind::kRecvReduce:  // its reduction (the transfer is its Send's)
      traffic = units * kReduceTraffic;
      break;
    case OpKind::kRecv:
      break;
  }
  return traffic / duration;
}

void Engine::track_traffic(Gid g, bool started) {
  if (node_beta_ <= 0) return;
  const double rate = traffic_rate(g);
  if (rate <= 0) return;
  if (started) {
    demand_ += rate;
    ++demanding_;
  } else if (--demanding_ == 0) {
    demand_ = 0;  // no rounding left over once nothing asks
  } else {
    demand_ -= rate;
  }
}

Time Engine::to_real(Time virtual_time) const {
  if (instant_virtual_.empty() || virtual_time <= 0) return virtual_time;
  const auto it = std::lower_bound(instant_virtual_.begin(), instant_virtual_.end(), virtual_time);
  OPTCOLL_CHECK(it != instant_virtual_.end() && *it == virtual_time,
                "simulator time {} is not an instant of the run", virtual_time);
  return instant_real_[static_cast<std::size_t>(it - instant_virtual_.begin())];
}

void Engine::run() {
  const auto total = static_cast<Gid>(hot_.size());
  if (clocked_) {
    instant_virtual_.assign(1, 0);
    instant_real_.assign(1, 0);
  }
  for (Gid g = 0; g < total; ++g) {
    if (hot_[g].deps_left == 0) became_ready(g, 0);
  }
  start_ready_work(0);
  while (!events_.empty()) {
    const Time now = events_.next_time();
    if (clocked_) advance_clock(now);
    events_.pop_instant(instant_);
    events_count_ += instant_.size();
    for (const Item& event : instant_) handle_event(event, now);
    start_ready_work(now);
  }
}

void Engine::became_ready(Gid g, Time now) {
  if (!release_.empty() && release_[static_cast<std::size_t>(g)] > now) {
    // Held until its release time: an event of that instant makes it ready.
    Item release = key_of(g, release_[static_cast<std::size_t>(g)]);
    release.from = kReleaseTime;
    events_.push(release);
    return;
  }
  Hot& h = hot_[g];
  h.ready = true;
  if (folded(g)) {  // the executors do not run it: it completes at once and holds nothing
    start_[g] = now;
    events_.push(key_of(g, now));
    return;
  }
  if (is_computation(h.kind)) {
    candidates_.push_back(key_of(g, now));
    return;
  }
  if (!hot_[h.partner].ready) return;  // the partner starts the transfer when it is ready
  const Gid send = h.kind == OpKind::kSend ? g : h.partner;
  if (h.empty) {
    // Zero elements: costs nothing and holds nothing; completes right away.
    start_[g] = now;
    start_[h.partner] = now;
    events_.push(key_of(send, now));
    return;
  }
  candidates_.push_back(key_of(send, now));
}

void Engine::complete(Gid g, Time now) {
  end_[g] = now;
  ++done_;
  const std::uint32_t stop = succ_end(g);
  for (std::uint32_t i = succ_begin(g); i < stop; ++i) {
    const Gid next = succ_[i];
    if (--hot_[next].deps_left == 0) became_ready(next, now);
  }
}

// Started work completes at a later instant, after every other rank's events of this one:
// fetching the counters its completion will decrement now hides those cache misses.
void Engine::prefetch_successors(Gid g) const {
  const std::uint32_t begin = succ_begin(g);
  const std::uint32_t stop = std::min(succ_end(g), begin + kPrefetchSuccessors);
  for (std::uint32_t i = begin; i < stop; ++i) {
    prefetch(&hot_[succ_[i]]);
    prefetch(&cold_[succ_[i]]);
  }
}

void Engine::wake(Rank rank, QueueType type, Gid waker) {
  wake_queue(queue_slot_[static_cast<std::size_t>(rank) * 3 + type], waker);
}

void Engine::wake_queue(std::int32_t q, Gid waker) {
  if (q < 0) return;
  QueueInfo& info = queue_info_[static_cast<std::size_t>(q)];
  if (info.candidate || queue_empty(q)) return;
  info.candidate = true;
  info.waker = waker;
  if (is_port_queue(info.type)) {
    lists_.rewind(info.store, [this](Gid g) {
      return listing_[static_cast<std::size_t>(g)] == Listing::kStarted;
    });
  }
  Item head = queue_top(q);
  head.from = q;
  candidates_.push_back(head);
}

// A send (or receive) of `rank` ended: a port is free, and without overlap the processor may
// be too. `waker` is an op that completed at this instant: its Send or Recv (the Send for a
// RecvReduce, which completes only after its reduction).
void Engine::wake_after_communication(Rank rank, bool sent, Gid waker) {
  if (full_duplex_) {
    wake(rank, sent ? kSendQueue : kRecvQueue, waker);
  } else {
    wake(rank, kSendQueue, waker);
    wake(rank, kRecvQueue, waker);
  }
  if (!overlap_ && sends_active_[rank] + recvs_active_[rank] + joined_active_[rank] == 0) {
    wake(rank, kComputeQueue, waker);
  }
}

Time Engine::port_hold(Gid g) const {
  const Gid send = sender(g);
  const Count count = count_[static_cast<std::size_t>(send)];
  const Rank from = hot_[send].rank;
  const Rank to = hot_[hot_[send].partner].rank;
  const std::size_t eb = schedule_.spec.elem_bytes;
  return g == send ? model_.send_port_time(from, to, count, eb)
                   : model_.receive_port_time(from, to, count, eb);
}

Time Engine::port_release(Gid g) const {
  const Gid send = sender(g);
  if (hot_[g].port != PortHold::kReleased) return end(send);
  // The addition try_start made: the release event's (virtual) time exactly.
  return to_real(start_[send] + port_hold(g));
}

void Engine::handle_event(const Item& event, Time now) {
  if (event.from == kReleaseTime) {
    became_ready(event.gid, now);
    return;
  }
  if (event.from == kPortRelease) {  // a gap ended: that end's port is free, the message travels on
    const Gid g = event.gid;
    Hot& h = hot_[g];
    h.port = PortHold::kReleased;
    const bool sent = h.kind == OpKind::kSend;
    --(sent ? sends_active_ : recvs_active_)[h.rank];
    add_activity(h.rank, -1);
    // The waker as at a completion: for a RecvReduce its Send (whose end is the transfer's).
    wake_after_communication(h.rank, sent, h.kind == OpKind::kRecvReduce ? h.partner : g);
    return;
  }
  const Gid g = event.gid;
  const Hot& h = hot_[g];
  const Rank r = h.rank;
  if (h.kind == OpKind::kSend) {
    const Gid other = h.partner;
    const Hot& o = hot_[other];
    if (!h.empty) {
      if (has_links_) release_links(g);
      track_send(g, false);
      track_traffic(g, false);
      if (h.port != PortHold::kReleased) add_activity(r, -1);
      if (h.port == PortHold::kJoined) {
        --joined_active_[r];
        if (!overlap_) wake_after_communication(r, true, g);  // perhaps the processor
      } else if (h.port == PortHold::kHeld) {
        --sends_active_[r];
        wake_after_communication(r, true, g);
      }
      if (helping(g)) {  // its sender may receive and compute again
        --helping_[r];
        add_activity(r, -1);
        wake(r, kRecvQueue, g);
        wake(r, kComputeQueue, g);
      }
      if (o.port == PortHold::kHeld) {
        --recvs_active_[o.rank];
        add_activity(o.rank, -1);
        wake_after_communication(o.rank, false, o.kind == OpKind::kRecv ? other : g);
      }
    }
    complete(g, now);
    if (o.kind == OpKind::kRecvReduce && !combines_in_place(g) && !helping(g)) {
      candidates_.push_back(key_of(other, now));  // now the reduction of the received elements
    } else {  // a Recv, or a RecvReduce whose transfer did its reduction
      complete(other, now);
    }
    return;
  }
  if (folded(g)) {
    complete(g, now);
    return;
  }
  add_activity(r, 0, -1);
  track_traffic(g, false);
  wake(r, kComputeQueue, g);
  if (!overlap_) {
    wake(r, kSendQueue, g);
    wake(r, kRecvQueue, g);
  }
  complete(g, now);
}

void Engine::start_ready_work(Time now) {
  sorter_.sort(candidates_);
  std::size_t next = 0;
  while (next < candidates_.size() || !more_candidates_.empty()) {
    const bool from_list =
        more_candidates_.empty() ||
        (next < candidates_.size() && before(candidates_[next], more_candidates_.top()));
    const Item candidate = from_list ? candidates_[next++] : more_candidates_.pop();
    if (candidate.from < 0) {
      try_start(candidate, now, kNoGid);
      continue;
    }
    const std::int32_t q = candidate.from;
    const QueueInfo info = queue_info_[static_cast<std::size_t>(q)];
    // The queue's items while they come first among the candidates (the next head is tried
    // at once rather than through more_candidates_: the same order, without a heap push and
    // pop per item; a drained queue of blocked sends is most of a many-to-many schedule's
    // event loop).
    for (;;) {
      if (!has_resource(info.rank, info.type)) {
        // Everything in this queue needs the resource that is gone again.
        queue_info_[static_cast<std::size_t>(q)].candidate = false;
        break;
      }
      // A transfer whose other end's port (or NIC channel) is busy moves there, as try_start
      // would move it, without looking it up (most of what a many-to-many schedule's drains
      // do).
      if (!is_port_queue(info.type) || !move_if_blocked(q)) {
        try_start(queue_pop(q), now, info.waker);
      }
      if (queue_empty(q)) {
        queue_info_[static_cast<std::size_t>(q)].candidate = false;
        break;
      }
      Item head = queue_top(q);
      head.from = q;
      const bool first = (next == candidates_.size() || before(head, candidates_[next])) &&
                         (more_candidates_.empty() || before(head, more_candidates_.top()));
      if (!first) {
        more_candidates_.push(head);
        break;
      }
    }
  }
  candidates_.clear();
  if (!help_pending_.empty()) settle_help(now);
}

void Engine::try_start(Item item, Time now, Gid cause) {
  const Gid g = item.gid;
  const Hot& h = hot_[g];
  const Rank r = h.rank;
  if (h.kind == OpKind::kSend) {
    const Rank q = hot_[h.partner].rank;
    // Joining an identical send in progress needs no send port (but the processor rule
    // still holds: without overlap no communication starts while the rank computes). A
    // send the receiver does holds its sender's port only for a send gap, if the model has
    // one, and otherwise nothing at all (not even the processor).
    const bool joins = may_join(g) && (overlap_ || computing_[r] == 0);
    const bool holds_nothing = this->holds_nothing(g);
    if (!joins && !holds_nothing && !can_send(r)) {
      park(r, kSendQueue, item);
    } else if (!can_receive(q)) {
      park(q, kRecvQueue, item);
    } else if (!has_links_ || take_links(g, item)) {
      hot_[g].port = joins           ? PortHold::kJoined
                     : holds_nothing ? PortHold::kReleased
                                     : PortHold::kHeld;
      if (!holds_nothing) {
        ++(joins ? joined_active_[r] : sends_active_[r]);
        add_activity(r, 1);
      }
      unlist_started(g);
      track_send(g, true);
      ++recvs_active_[q];
      add_activity(q, 1);
      start_[g] = now;
      start_[h.partner] = now;
      cause_[g] = cause;
      if (may_help(g)) {
        help_pending_.push_back(g);
      } else {
        begin_transfer(g, now);
      }
    }
    return;
  }
  if (!can_compute(r)) {
    park(r, kComputeQueue, item);
    return;
  }
  add_activity(r, 0, 1);
  track_traffic(g, true);
  start_[g] = now;
  cause_[g] = cause;
  events_.push(key_of(g, now + cold_[g].duration));
  prefetch_successors(g);
}

void Engine::begin_transfer(Gid g, Time now) {
  const Hot& h = hot_[g];
  track_traffic(g, true);
  events_.push(key_of(g, now + cold_[g].duration));
  // A gap releases that end's port early: an event of its own (handle_event).
  for (const Gid half : {g, h.partner}) {
    const bool gap = half == g ? h.port == PortHold::kHeld &&
                                     (model_.send_gap || send_mode(g) == SendMode::kReceiver)
                               : model_.receive_gap.has_value() && !combines_in_place(g);
    if (!gap) continue;
    const Time hold = port_hold(half);
    if (hold < cold_[g].duration) events_.push(port_release_event(half, now + hold));
  }
  prefetch_successors(g);
  prefetch_successors(h.partner);
}

bool Engine::may_help(Gid g) const {
  return helps_ && !hot_[g].empty && model_.may_be_helped(send_bytes(g)) && waits(hot_[g].rank);
}

void Engine::settle_help(Time now) {
  for (const Gid g : help_pending_) {
    if (waits(hot_[g].rank)) help(g);
    begin_transfer(g, now);
  }
  help_pending_.clear();
}

void Engine::help(Gid g) {
  const Hot& h = hot_[g];
  if (helped_.empty()) {
    helped_.assign(hot_.size(), 0);
    helping_.assign(schedule_.ranks.size(), 0);
  }
  helped_[static_cast<std::size_t>(g)] = 1;
  ++helping_[static_cast<std::size_t>(h.rank)];
  add_activity(h.rank, 1);  // its processor (with cores)
  // Half of the data time, and of a receive-reduce's reduction (done by both in one pass).
  const Time fixed = fixed_transfer_time(g);
  cold_[g].duration = fixed + (cold_[g].duration - fixed + cold_[h.partner].duration) / 2;
  cold_[h.partner].duration = 0;
}

void Engine::links_of(Gid g) {
  route_.clear();
  const Rank from = hot_[g].rank;
  const Rank to = hot_[hot_[g].partner].rank;
  if (topology_ != nullptr) {
    topology_->route(from, to, route_);
  } else if (!placement_->same_node(from, to)) {
    route_.push_back(out_channel_of(placement_->node_of[static_cast<std::size_t>(from)]));
    route_.push_back(in_channel_of(placement_->node_of[static_cast<std::size_t>(to)]));
  }
}

bool Engine::take_links(Gid g, Item item) {
  links_of(g);
  for (const std::int64_t link : route_) {
    const auto l = static_cast<std::size_t>(link);
    if (link_busy_[l] < link_capacity_) continue;
    item.from = -1;
    list_transfer(g, item);
    if (placement_ != nullptr) {  // route_: out of the sender's node, into the receiver's
      push_to_pair(pair_queue(route_[0] / 2, route_[1] / 2), item);
      return false;
    }
    if (link_queue_slot_[l] < 0)
      link_queue_slot_[l] = new_queue(static_cast<Rank>(link), kLinkQueue);
    queues_.push(queue_info_[static_cast<std::size_t>(link_queue_slot_[l])].store, item);
    return false;
  }
  for (const std::int64_t link : route_) ++link_busy_[static_cast<std::size_t>(link)];
  return true;
}

void Engine::release_links(Gid g) {
  links_of(g);
  for (const std::int64_t link : route_) {
    const auto l = static_cast<std::size_t>(link);
    --link_busy_[l];
    if (placement_ != nullptr) {
      wake_pairs(link, g);
    } else {
      wake_queue(link_queue_slot_[l], g);
    }
  }
}

std::int32_t Engine::pair_queue(std::int64_t from_node, std::int64_t to_node) {
  const auto [it, added] = pair_queue_of_.try_emplace(pair_key(from_node, to_node), 0);
  if (added) {
    nic_pairs_.push_back(
        NicPair{static_cast<std::int32_t>(from_node), static_cast<std::int32_t>(to_node)});
    it->second = new_queue(static_cast<Rank>(nic_pairs_.size() - 1), kNicPairQueue);
  }
  return it->second;
}

void Engine::push_to_pair(std::int32_t q, const Item& item) {
  const QueueInfo& info = queue_info_[static_cast<std::size_t>(q)];
  if (queues_.empty(info.store)) {  // the pair waits: both of its channels' releases look at it
    NicPair& pair = pair_of(q);
    auto& out = waiting_out_[static_cast<std::size_t>(pair.from_node)];
    auto& in = waiting_in_[static_cast<std::size_t>(pair.to_node)];
    pair.at_out = static_cast<std::int32_t>(out.size());
    pair.at_in = static_cast<std::int32_t>(in.size());
    out.push_back(q);
    in.push_back(q);
  }
  queues_.push(info.store, item);
}

void Engine::pair_drained(std::int32_t q) {
  const NicPair& pair = pair_of(q);
  // Removed from both nodes' lists of waiting pairs by moving their last pair into its place.
  const auto remove = [this](std::vector<std::int32_t>& waiting, std::int32_t at, bool out) {
    const std::int32_t last = waiting.back();
    waiting[static_cast<std::size_t>(at)] = last;
    waiting.pop_back();
    NicPair& moved = pair_of(last);
    (out ? moved.at_out : moved.at_in) = at;
  };
  remove(waiting_out_[static_cast<std::size_t>(pair.from_node)], pair.at_out, true);
  remove(waiting_in_[static_cast<std::size_t>(pair.to_node)], pair.at_in, false);
}

void Engine::wake_pairs(std::int64_t channel, Gid waker) {
  const bool out = channel % 2 == 0;
  const auto node = static_cast<std::size_t>(channel / 2);
  for (const std::int32_t q : out ? waiting_out_[node] : waiting_in_[node]) {
    const NicPair& pair = pair_of(q);
    if (channel_free(out ? in_channel_of(pair.to_node) : out_channel_of(pair.from_node))) {
      wake_queue(q, waker);
    }
  }
}

void Engine::park(Rank rank, QueueType type, Item item) {
  const std::int32_t q = queue_of(rank, type);
  item.from = -1;
  if (is_port_queue(type)) {
    list_transfer(item.gid, item);
    park_listed(item.gid, q);
    return;
  }
  queues_.push(queue_info_[static_cast<std::size_t>(q)].store, item);
}

std::int32_t Engine::queue_of(Rank rank, QueueType type) {
  std::int32_t& slot = queue_slot_[static_cast<std::size_t>(rank) * 3 + type];
  if (slot < 0) slot = new_queue(rank, type);
  return slot;
}

std::int32_t Engine::new_queue(Rank rank, QueueType type) {
  const std::int32_t store = type == kSendQueue   ? lists_.create(WaitLists::kSends, rank)
                             : type == kRecvQueue ? lists_.create(WaitLists::kReceives, rank)
                                                  : queues_.create();
  queue_info_.push_back(QueueInfo{rank, type, false, kNoGid, store});
  return static_cast<std::int32_t>(queue_info_.size() - 1);
}

bool Engine::queue_empty(std::int32_t q) const {
  const QueueInfo& info = queue_info_[static_cast<std::size_t>(q)];
  return is_port_queue(info.type) ? lists_.empty(info.store) : queues_.empty(info.store);
}

Item Engine::queue_top(std::int32_t q) {
  const QueueInfo& info = queue_info_[static_cast<std::size_t>(q)];
  if (!is_port_queue(info.type)) return queues_.top(info.store);
  return list_top(q).item();
}

const WaitLists::Entry& Engine::list_top(std::int32_t q) {
  return lists_.top(queue_info_[static_cast<std::size_t>(q)].store);
}

std::int32_t Engine::blocked_at(const WaitLists::Entry& entry) {
  // try_start's checks in its order: the sender's port, the receiver's, the route's channels.
  const auto from = static_cast<std::size_t>(entry.sender);
  const auto to = static_cast<std::size_t>(entry.receiver);
  if (!entry.holds_nothing && !can_send(entry.sender)) {
    const bool may_join_any = !sends_sharable_.empty() && !sends_sharable_[from].empty();
    return may_join_any ? -1 : queue_slot_[from * 3 + kSendQueue];
  }
  if (!can_receive(entry.receiver)) return queue_slot_[to * 3 + kRecvQueue];
  if (placement_ == nullptr || placement_->same_node(entry.sender, entry.receiver)) return -1;
  const std::int64_t from_node = placement_->node_of[from];
  const std::int64_t to_node = placement_->node_of[to];
  if (channel_free(out_channel_of(from_node)) && channel_free(in_channel_of(to_node))) return -1;
  return pair_queue(from_node, to_node);
}

bool Engine::move_if_blocked(std::int32_t q) {
  const std::int32_t list = queue_info_[static_cast<std::size_t>(q)].store;
  const WaitLists::Entry& head = list_top(q);
  const std::int32_t target = blocked_at(head);  // (may make a queue: no QueueInfo& held)
  if (target < 0) return false;
  if (is_port_queue(queue_info_[static_cast<std::size_t>(target)].type)) {
    lists_.move_top_to_other(list);  // parked at its other end
  } else {                           // waits for a NIC channel
    const Item item = head.item();
    lists_.take_top(list);
    push_to_pair(target, item);
  }
  return true;
}

Item Engine::queue_pop(std::int32_t q) {
  const QueueInfo& info = queue_info_[static_cast<std::size_t>(q)];
  if (!is_port_queue(info.type)) {
    const Item item = queues_.pop(info.store);
    if (info.type == kNicPairQueue && queues_.empty(info.store)) pair_drained(q);
    return item;
  }
  const Item item = queue_top(q);
  lists_.take_top(info.store);  // being tried: try_start parks or starts it
  return item;
}

void Engine::list_transfer(Gid g, const Item& item) {
  if (listing_.empty()) {
    listing_.assign(hot_.size(), Listing::kNotListed);
    lists_.set_gid_count(hot_.size());
  }
  Listing& listing = listing_[static_cast<std::size_t>(g)];
  if (listing != Listing::kNotListed) return;
  listing = Listing::kListed;
  const WaitLists::Entry entry{
      item.time, item.order, g, hot_[g].rank, hot_[hot_[g].partner].rank, holds_nothing(g)};
  queue_of(entry.sender, kSendQueue);  // both lists made
  queue_of(entry.receiver, kRecvQueue);
  lists_.add(entry);
}

void Engine::park_listed(Gid g, std::int32_t q) {
  lists_.park(queue_info_[static_cast<std::size_t>(q)].store, g);
}

void Engine::unlist_started(Gid g) {
  if (listing_.empty() || listing_[static_cast<std::size_t>(g)] == Listing::kNotListed) return;
  listing_[static_cast<std::size_t>(g)] = Listing::kStarted;
  for (const std::int32_t q :
       {queue_of(hot_[g].rank, kSendQueue), queue_of(hot_[hot_[g].partner].rank, kRecvQueue)}) {
    lists_.add_started(queue_info_[static_cast<std::size_t>(q)].store);
  }
}

}  // namespace optcoll::sim::detail
