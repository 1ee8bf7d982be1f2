// SPDX-License-Identifier: Apache-2.0
// File: the simulator's engine (internal): the schedule flattened into arrays indexed by a
// global op index, and the event loop that prices it. simulator.cc states the semantics and
// turns the engine's arrays into a SimResult; see there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"
#include "optcoll/sim/event_queue.h"

namespace optcoll::sim::detail {

enum class OpKind : std::uint8_t { kSend, kRecv, kRecvReduce, kCopy, kReduce };

inline bool is_computation(OpKind kind) { return kind == OpKind::kCopy || kind == OpKind::kReduce; }

// A global op index. Ops are numbered by op index across ranks: first op 0 of every rank,
// then op 1 of every rank that has one, and so on (ranks ordered by their op counts,
// descending, then by rank). Collective schedules run in near lock step, so the ops that
// one instant of the event loop visits (op k of many ranks) lie side by side in the
// engine's arrays: numbered rank by rank, each such visit was a cache miss (and often a
// TLB miss). Program order (rank, op) is kept beside it (Cold::order): every tie is broken
// by it. Schedules are limited to 2^31 - 1 ops in total.
using Gid = std::int32_t;
inline constexpr Gid kNoGid = -1;

class Engine {
 public:
  // The schedule must be well formed and the model valid for it (simulate() checks both);
  // `partners` is its match_messages_flat() (well_formed_partners() gives both at once).
  Engine(const Schedule& schedule, const CostModel& model, std::vector<std::uint32_t> partners);

  void run();

  // ---- the flattened schedule
  std::size_t op_count() const { return hot_.size(); }
  Gid gid(Rank rank, OpId op) const {
    return static_cast<Gid>(slot_start_[static_cast<std::size_t>(op)] +
                            slot_pos_[static_cast<std::size_t>(rank)]);
  }
  Rank rank_of(Gid g) const { return hot_[g].rank; }
  OpId op_of(Gid g) const { return static_cast<OpId>(cold_[g].order - base_[hot_[g].rank]); }
  // g's place in program order (rank by rank, each rank's ops in order).
  std::int32_t order_of(Gid g) const { return cold_[g].order; }
  // Every op in program order (rank by rank, each rank's ops in order): f(gid).
  template <typename F>
  void for_each_in_program_order(F&& f) const {
    for (std::size_t r = 0; r + 1 < base_.size(); ++r) {
      const auto n = static_cast<OpId>(base_[r + 1] - base_[r]);
      for (OpId i = 0; i < n; ++i) f(gid(static_cast<Rank>(r), i));
    }
  }
  OpKind kind(Gid g) const { return hot_[g].kind; }
  Gid partner(Gid g) const { return hot_[g].partner; }  // the other half of a message
  const Op& op(Gid g) const { return schedule_.ranks[rank_of(g)].ops[op_of(g)]; }
  // The Send of a message, given either half.
  Gid sender(Gid g) const { return hot_[g].kind == OpKind::kSend ? g : hot_[g].partner; }

  // ---- results (valid after run())
  bool complete() const { return done_ == hot_.size(); }
  std::size_t events() const { return events_count_; }
  bool finished(Gid g) const { return end_[g] >= 0; }
  bool is_ready(Gid g) const { return hot_[g].ready; }
  // Op g's release time (Op::not_before; 0 when it has none).
  Time release(Gid g) const { return release_.empty() ? 0 : release_[static_cast<std::size_t>(g)]; }
  // A Send or Recv: the transfer's start. A RecvReduce: the start of its reduction (the
  // transfer's start is the Send's). A Copy or Reduce: its start. -1: never started.
  Time start(Gid g) const { return to_real(start_[g]); }
  Time end(Gid g) const { return to_real(end_[g]); }  // -1: never completed
  // end(g) on the engine's own (virtual) clock: ordered as end(g) is, ties included (real
  // time grows strictly with it), without end()'s search of the clock's instants; for
  // comparing the ends of many ops (-1: never completed).
  Time end_order(Gid g) const { return end_[g]; }
  // The op whose completion released the resource this op (for a transfer: its Send; for a
  // RecvReduce: its reduction) waited for; kNoGid if it started as soon as it was ready.
  Gid blocker(Gid g) const { return cause_[g]; }
  // Whether the port of g's rank that message g held was released before the transfer's
  // end: a Send's after its send gap (CostModel::send_gap), a Recv's or RecvReduce's after
  // its receive gap (CostModel::receive_gap).
  bool released_early(Gid g) const { return hot_[g].port == PortHold::kReleased; }
  // When that port was released: the end of the gap when released_early(g), otherwise the
  // transfer's end.
  Time port_release(Gid g) const;

 private:
  enum QueueType : std::uint8_t {
    kSendQueue = 0,
    kRecvQueue = 1,
    kComputeQueue = 2,
    kLinkQueue = 3,     // work blocked on a busy link (QueueInfo::rank holds the link id)
    kNicPairQueue = 4,  // transfers from one node to another blocked on a NIC channel
                        // (QueueInfo::rank holds the pair's index in nic_pairs_)
  };
  // Bookkeeping of one rank's queue of work blocked on one resource. A rank's send and
  // receive queues are lists of lists_ (WaitLists: each knows which of its transfers are parked in
  // it), the others (computations, a topology's links, a placement's pairs of nodes) queues
  // of queues_.
  struct QueueInfo {
    Rank rank = 0;
    QueueType type = kSendQueue;
    bool candidate = false;  // its head is among the candidates of the current instant
    Gid waker = kNoGid;      // the op whose completion woke it at the current instant
    std::int32_t store = 0;  // its list in lists_ (send, receive) or queue in queues_
  };
  static bool is_port_queue(QueueType type) { return type == kSendQueue || type == kRecvQueue; }

  // flatten(): numbers the ops (number_ops) and checks the limit; sets an op's kind and
  // duration; builds the successor lists from the flat predecessors; sizes the run's state.
  void flatten(std::vector<std::uint32_t>& partners);
  // base_ (program order), slot_pos_ and slot_start_ (gids), the op limit checked; returns
  // the ranks by position (slot_pos_'s inverse).
  std::vector<Rank> number_ops();
  // f(gid, position, op index) for every op, in tiles of kTile rank positions: within a
  // tile op 0 of each rank, then op 1, ...: both the gids and each rank's ops are visited
  // nearly in memory order.
  template <typename F>
  void for_each_op_tiled(F&& f) const {
    constexpr std::size_t kTile = 64;
    const std::size_t ranks = slot_pos_.size();
    for (std::size_t tile = 0; tile < ranks; tile += kTile) {
      for (std::size_t k = 0; k + 1 < slot_start_.size(); ++k) {
        const auto row = static_cast<std::size_t>(slot_start_[k]);
        const std::size_t width = static_cast<std::size_t>(slot_start_[k + 1]) - row;
        if (width <= tile) break;  // widths only shrink with k
        const std::size_t stop = std::min(width, tile + kTile);
        for (std::size_t pos = tile; pos < stop; ++pos) f(row + pos, pos, k);
      }
    }
  }
  // partners (program-order indices, match_messages_flat) renumbered in place to gids.
  void renumber_partners(std::vector<std::uint32_t>& partners) const;
  void describe_op(Gid g, Rank rank, const Action& action);
  void build_successors(const std::vector<Gid>& preds);
  // CostModel::folds_copies: marks in folded_ every Copy that the executors fold into its
  // only dependent (copy_folds_into; a reduction takes at most one, the first in program
  // order, as the executors do).
  void mark_folded_copies();
  bool folded(Gid g) const { return !folded_.empty() && folded_[static_cast<std::size_t>(g)] != 0; }
  // CostModel::combines_in_place: every message into a RecvReduce takes latency + handshake
  // + reduce_time (its Send's duration), and the RecvReduce completes with it.
  void price_in_place_combines();
  bool combines_in_place(Gid send) const {
    return model_.combines_in_place && hot_[hot_[send].partner].kind == OpKind::kRecvReduce;
  }
  // A transfer's time without its data part: latency and handshake.
  Time fixed_transfer_time(Gid send) const;
  void reset_run_state();
  static constexpr auto kMaxGids = static_cast<std::size_t>(std::numeric_limits<Gid>::max());
  // Shared processors or memory (CostModel::cores, node_beta; stretches_clock()): the event
  // loop runs on a virtual clock on which every op in progress advances at its full rate;
  // between two instants real time passes stretch() times as fast. to_real() maps an
  // instant's virtual time to its real time (the identity without them). Ports and NIC
  // channels are held on the virtual clock alike.
  void advance_clock(Time now);
  // How much slower than its full rate everything in progress advances now: the larger of
  // busy / cores (shared processors: busy_) and demand * node_beta (shared memory), at least 1.
  Time stretch() const;
  // Memory traffic (node_beta): op g in progress asks for its traffic over its duration;
  // `started` adds that demand, otherwise removes it.
  void track_traffic(Gid g, bool started);
  double traffic_rate(Gid g) const;
  Time to_real(Time virtual_time) const;
  // A rank's port holds changed by `ports` and its computations in progress by `computations`:
  // keeps computing_ and (with cores) busy_ (processors_used()).
  void add_activity(Rank rank, int ports, int computations = 0) {
    const auto r = static_cast<std::size_t>(rank);
    if (cores_ == 0) {
      computing_[r] += computations;
      return;
    }
    const std::int32_t before = processors_used(r);
    activity_[r] += ports;
    computing_[r] += computations;
    busy_ += processors_used(r) - before;
  }
  // The shared processors (cores) a rank takes: one per computation in progress
  // (cores_per_rank of them at most), or one while it only holds ports.
  std::int32_t processors_used(std::size_t r) const {
    return std::max<std::int32_t>(computing_[r], activity_[r] > 0 ? 1 : 0);
  }
  void became_ready(Gid g, Time now);
  void complete(Gid g, Time now);
  void prefetch_successors(Gid g) const;
  std::uint32_t succ_begin(Gid g) const { return cold_[g].succ_begin; }
  std::uint32_t succ_end(Gid g) const { return cold_[static_cast<std::size_t>(g) + 1].succ_begin; }
  void handle_event(const Item& event, Time now);
  void start_ready_work(Time now);
  void try_start(Item item, Time now, Gid cause);
  void park(Rank rank, QueueType type, Item item);
  // The queue id of `rank`'s queue of `type`, made on first use.
  std::int32_t queue_of(Rank rank, QueueType type);
  std::int32_t new_queue(Rank rank, QueueType type);
  // Queue q's first item (it must not be empty), and that item taken out of it.
  Item queue_top(std::int32_t q);
  const WaitLists::Entry& list_top(std::int32_t q);  // a port list's first parked entry
  // A port list's first transfer, when try_start would only park it elsewhere (a port or NIC
  // channel it needs is busy): moved there, without try_start's look-ups; false if it may
  // start (or try_start must decide: it may join a send in progress).
  bool move_if_blocked(std::int32_t q);
  // The queue in which try_start would park the transfer of `entry` now (a port list, or its
  // pair of nodes' queue), or -1 if it may start or may join a send in progress.
  std::int32_t blocked_at(const WaitLists::Entry& entry);
  Item queue_pop(std::int32_t q);
  bool queue_empty(std::int32_t q) const;
  // Transfers (by their Send) in the port lists: Send g, waiting for the first time, is
  // added to its sender's send list and its receiver's receive list (list_transfer); it is
  // parked in one of them (park_listed), or elsewhere (a link's queue); a start marks it
  // started (unlist_started).
  void list_transfer(Gid g, const Item& item);
  void park_listed(Gid g, std::int32_t q);
  void unlist_started(Gid g);
  void wake(Rank rank, QueueType type, Gid waker);
  void wake_after_communication(Rank rank, bool sent, Gid waker);
  void wake_queue(std::int32_t q, Gid waker);
  // Links (a topology's, or a placement's NIC channels): take every link of the route of
  // Send g, or park `item` (on the first busy link; under a placement in its pair of nodes'
  // queue) and return false; release them when the transfer ends.
  bool take_links(Gid g, Item item);
  // A placement's NIC channels: node n's out of it (2 n) and into it (2 n + 1), and whether
  // one carries fewer transfers than it may.
  static std::int64_t out_channel_of(std::int64_t node) { return 2 * node; }
  static std::int64_t in_channel_of(std::int64_t node) { return 2 * node + 1; }
  bool channel_free(std::int64_t channel) const {
    return link_busy_[static_cast<std::size_t>(channel)] < link_capacity_;
  }
  // A placement's transfers blocked on a NIC channel wait in the queue of their pair of
  // nodes (made on first use, like a rank's queues). A pair that holds any is in its nodes'
  // waiting lists (waiting_out_ of its sender's node, waiting_in_ of its receiver's), and a
  // release of either channel wakes it when the other one is free (wake_pairs): all of a
  // pair's transfers wait for the same two channels, so a release looks at each waiting pair
  // once, not at each waiting transfer.
  struct NicPair {
    std::int32_t from_node = 0;
    std::int32_t to_node = 0;
    std::int32_t at_out = -1;  // its index in waiting_out_[from_node], while it waits
    std::int32_t at_in = -1;   // and in waiting_in_[to_node]
  };
  std::int32_t pair_queue(std::int64_t from_node, std::int64_t to_node);
  std::int64_t pair_key(std::int64_t from_node, std::int64_t to_node) const {
    return from_node * nodes_ + to_node;
  }
  NicPair& pair_of(std::int32_t q) {
    return nic_pairs_[static_cast<std::size_t>(queue_info_[static_cast<std::size_t>(q)].rank)];
  }
  void push_to_pair(std::int32_t q, const Item& item);
  void pair_drained(std::int32_t q);  // its last transfer left: it no longer waits
  void wake_pairs(std::int64_t channel, Gid waker);
  void links_of(Gid g);  // the links of Send g's transfer into route_
  void release_links(Gid g);
  bool has_resource(Rank rank, QueueType type) const;
  bool can_send(Rank r) const;
  bool can_receive(Rank r) const;
  bool can_compute(Rank r) const;
  // Helped transfers (CostModel::helped_bytes). A rank waits (and so may help) while it
  // receives nothing, computes nothing and helps no other transfer; its own sends do not
  // count (it waits for them).
  bool waits(Rank r) const {
    return recvs_active_[r] + computing_[r] == 0 && (helping_.empty() || helping_[r] == 0);
  }
  bool helping(Gid g) const { return !helped_.empty() && helped_[static_cast<std::size_t>(g)]; }
  // Whether Send g, starting now, may be helped: large enough, and its sender waits. The
  // decision waits for the end of the instant (settle_help): a receive or computation its
  // sender starts at the same instant rules it out.
  bool may_help(Gid g) const;
  // Sends started at this instant that may be helped: each, in start order, is helped if its
  // sender still waits (help), and then its transfer begins (begin_transfer).
  void settle_help(Time now);
  // Send g's sender helps it: g's duration becomes its fixed part (fixed_transfer_time) plus
  // half of its data time and of a receive-reduce's reduction (whose own duration becomes 0),
  // and the sender is busy with it (it starts no receive or computation) until it ends.
  void help(Gid g);
  // The started transfer of Send g: its traffic, its completion event and its gaps' releases.
  void begin_transfer(Gid g, Time now);
  // Send g's size in bytes, and the send mode that applies to it (CostModel::send_mode_for).
  std::size_t send_bytes(Gid g) const;
  // Either half of a message: its send's mode, from send_traits_ (under SendMode::kPort,
  // every size's mode, there are none).
  SendMode send_mode(Gid g) const {
    if (send_traits_.empty()) return SendMode::kPort;
    return static_cast<SendMode>(send_traits_[static_cast<std::size_t>(sender(g))] & kSendModeBits);
  }
  // Send g is done by its receiver and holds no port of its sender, not even for a send gap.
  bool holds_nothing(Gid send) const {
    return !send_traits_.empty() &&
           (send_traits_[static_cast<std::size_t>(send)] & kHoldsNothingBit) != 0;
  }
  // send_traits_ for every Send (only when the model's send mode is not kPort): a blocked
  // send is tried again at every port release of its sender or receiver, and reading its
  // size from the schedule each time (a variant and a cache miss) cost half the event loop
  // of a many-to-many schedule under a thread model (p = 512: 90 M tries for 0.8 M ops).
  void cache_send_traits();
  // Shared sends (SendMode::kShared): whether Send g may join a send of its rank in progress
  // with the same source slice, and the bookkeeping of those in progress.
  bool may_join(Gid g) const;
  void track_send(Gid g, bool started);
  Item key_of(Gid g, Time ready) const { return Item{ready, cold_[g].order, g, -1}; }

  const Schedule& schedule_;
  const CostModel& model_;
  bool full_duplex_ = true;
  bool overlap_ = false;
  int ports_ = 1;
  int cores_ = 0;           // 0: a processor per rank
  int cores_per_rank_ = 1;  // computations a rank runs at once
  Time node_beta_ = 0;      // 0: no shared memory system (CostModel::node_beta unset)
  bool clocked_ = false;    // a virtual clock: cores or node_beta
  bool helps_ = false;      // helped transfers: helped_bytes, and no more ranks than cores

  // What one half of a message in progress holds of its rank's ports (a Send: a send port,
  // a Recv or RecvReduce: a receive port).
  enum class PortHold : std::uint8_t {
    kHeld,      // a port, until the transfer ends (or until released, with a gap)
    kJoined,    // a Send only: none, it joined an identical send in progress (shared sends)
    kReleased,  // none any more: released after its gap (send_gap, receive_gap), or never
                // taken (a Send the receiver does, SendMode::kReceiver, without a send gap)
  };
  // A gap's port release for op g (the Send for the sender's port, the Recv or RecvReduce
  // for the receiver's) travels in the event queue with order -(order + 1), so that it sorts
  // before the completions of its instant and never collides with them.
  Item port_release_event(Gid g, Time at) const {
    return Item{at, -(cold_[g].order + 1), g, kPortRelease};
  }
  // How long half g of a message holds its rank's port: a Send its sender's
  // (CostModel::send_port_time), a Recv or RecvReduce its receiver's (receive_port_time).
  Time port_hold(Gid g) const;

  // The flattened schedule in two arrays of 16-byte records, four ops per cache line. The
  // event loop touches ops of many ranks in turn, and successors far ahead in a rank's
  // program (a recv that waits on a copy made at the start, say): dense records keep the
  // number of distinct cache lines (and pages) it touches small. `Hot` is what readiness
  // needs, `Cold` what starting and completing need.
  struct Hot {
    std::int32_t deps_left = 0;  // `after` ops not yet complete
    Gid partner = kNoGid;        // the other half of a message
    Rank rank = 0;
    OpKind kind = OpKind::kSend;
    bool empty = false;               // a zero-element message
    bool ready = false;               // deps_left reached 0
    PortHold port = PortHold::kHeld;  // a message in progress: what it holds of its rank's ports
  };
  struct Cold {
    Time duration = 0;             // Send: the transfer; RecvReduce: its reduction; Copy, Reduce
    std::uint32_t succ_begin = 0;  // successors (same-rank ops that list this one in `after`)
                                   // are succ_[succ_begin, the next gid's succ_begin)
    std::int32_t order = 0;        // program order: base_[rank] + op index
  };
  static_assert(sizeof(Hot) == 16 && sizeof(Cold) == 16);

  // Events that are no completion (Item::from; completions have -1): a release time reached
  // (Op::not_before), a port released after its gap.
  static constexpr std::int32_t kReleaseTime = -2;
  static constexpr std::int32_t kPortRelease = -3;

  std::vector<std::int64_t> base_;  // p + 1 prefix sums of op counts: program order
  // gid(rank, op) = slot_start_[op] + slot_pos_[rank]: slot_start_[k] counts the ops of
  // index below k, and slot_pos_ places the ranks in order of their op counts, descending
  // (then by rank), so the ranks with an op k are the first ones.
  std::vector<std::int64_t> slot_start_;
  std::vector<std::int32_t> slot_pos_;
  std::vector<Time> release_;         // per op, only when some op has a release time
  std::vector<std::uint8_t> folded_;  // per op, only with CostModel::folds_copies
  // Per op, only when CostModel::send_mode is not kPort: a Send's mode (kSendModeBits) and
  // whether it holds nothing of its sender (kHoldsNothingBit); 0 for the other ops.
  std::vector<std::uint8_t> send_traits_;
  static constexpr std::uint8_t kSendModeBits = 3;
  static constexpr std::uint8_t kHoldsNothingBit = 4;
  // Helped transfers (only with CostModel::helped_bytes): per op, whether its sender helped;
  // per rank, the transfers it helps now; the sends of this instant that may be helped.
  std::vector<std::uint8_t> helped_;
  std::vector<std::int32_t> helping_;
  std::vector<Gid> help_pending_;
  std::vector<Hot> hot_;
  std::vector<Cold> cold_;  // one more than the ops: the last succ_begin ends the lists
  std::vector<Gid> succ_;
  // Per op, the elements it moves or computes (a message's size, a Copy's or Reduce's source,
  // a RecvReduce's destination), read once from the schedule by describe_op: the event loop
  // asks for it at every start and end (ports, memory traffic), and each look-up into the
  // schedule's ops was a cache miss.
  std::vector<Count> count_;
  std::vector<Time> start_;
  std::vector<Time> end_;
  std::vector<Gid> cause_;

  // Per rank resources.
  std::vector<std::int32_t> sends_active_;
  std::vector<std::int32_t> recvs_active_;
  std::vector<std::int32_t> joined_active_;       // joined sends in progress (no port)
  std::vector<std::vector<Gid>> sends_sharable_;  // shared sends: sends in progress
  std::vector<std::int32_t> computing_;           // computations in progress (<= cores_per_rank_)
  std::vector<std::int32_t> queue_slot_;          // [rank * 3 + type] -> queue id, or -1
  // Shared processors (only with cores): per rank, the ports it holds; the processors in use
  // (processors_used() summed over the ranks); every instant's virtual and real time, in
  // increasing order.
  std::vector<std::int32_t> activity_;
  std::int32_t busy_ = 0;
  // Shared memory (only with node_beta): the traffic asked for by the ops in progress (units
  // per time unit at their full rates), and how many ops ask.
  double demand_ = 0;
  std::int64_t demanding_ = 0;
  std::vector<Time> instant_virtual_;
  std::vector<Time> instant_real_;
  // Links (only with a topology: the torus links, or a placement: the nodes' NIC
  // channels): transfers in progress on each and blocked-queue ids by link id.
  const Topology* topology_ = nullptr;
  const Placement* placement_ = nullptr;
  bool has_links_ = false;
  std::uint16_t link_capacity_ = 1;  // transfers one link carries at once
  std::vector<std::uint16_t> link_busy_;
  std::vector<std::int32_t> link_queue_slot_;
  std::int64_t nodes_ = 0;                                        // the placement's
  std::vector<NicPair> nic_pairs_;                                // by pair index
  std::unordered_map<std::int64_t, std::int32_t> pair_queue_of_;  // from * nodes + to -> queue
  std::vector<std::vector<std::int32_t>> waiting_out_;  // by node: its waiting pairs' queues
  std::vector<std::vector<std::int32_t>> waiting_in_;
  std::vector<std::int64_t> route_;    // scratch
  BlockedQueues queues_;               // created on first use
  WaitLists lists_;                    // the ranks' send and receive queues
  std::vector<QueueInfo> queue_info_;  // by queue id
  // Per Send, once any transfer waits: whether it is in the port lists, and whether it
  // started since (which port list it is parked in, if any, the lists keep themselves).
  enum class Listing : std::uint8_t { kNotListed, kListed, kStarted };
  std::vector<Listing> listing_;

  EventQueue events_;          // completions
  std::vector<Item> instant_;  // the completions of the current instant
  // Work that may start at the current instant: found while applying its completions
  // (sorted once), and heads of blocked queues found while starting work (a heap).
  std::vector<Item> candidates_;
  ItemSorter sorter_;  // for candidates_
  ItemHeap more_candidates_;
  std::size_t done_ = 0;
  std::size_t events_count_ = 0;
};

}  // namespace optcoll::sim::detail
