// SPDX-License-Identifier: Apache-2.0
// File: the thread backend's transport. Ranks are threads of one process; a Fabric holds,
// per ordered pair (from, to), a mailbox of posted and not yet matched sends and receives,
// and per rank an inbox of completed requests. Whichever side posts second completes the
// match itself: one memcpy from the sender's memory into the receiver's (or, for a
// receive-reduce, the combine step reading the sender's memory directly), then it completes
// both requests and wakes the other rank. There is no intermediate buffer and no global lock
// on the hot path: a message touches only its pair's mailbox and the two ranks' inboxes.
//
// One exception, for parallelism: when the sender comes second with a large message
// (kHandOverBytes or more) and finds the receiver idle (asleep in wait_some), it hands the
// match over instead: it marks the posted receive with its data and wakes the receiver,
// which then does the copy or reduction into its own memory. Without it, the rank that
// happens to post last does every transfer of a step while its peers sleep (measured: one
// thread did all the work of a p = 2 ring allreduce).
//
// Small messages are eager: a send of at most kEagerBytes that finds no receive posted
// copies its data into the mailbox and completes at once, as an MPI library's eager
// protocol does, so the sender goes on (to its next op, or its next collective) without
// waiting for the receiver to be scheduled; the receive copies it out when it is posted.
// With more ranks than CPUs that saves a scheduling round per message. A mailbox holds at
// most kEagerMailboxMessages such copies and kEagerMailboxBytes in all; beyond that sends
// wait for their receive again
// (flow control: a rank that only sends, such as a bcast root in a loop, cannot run ahead
// without bound).
//
// Small messages (at most kRingMessageBytes, such as a bcast of a few elements or the steps
// of a recursive-doubling allgather of 64 B per rank) skip the mailbox: each ordered pair
// has an eager ring, a fixed array of slots that only the sender writes and only the
// receiver drains, with no lock. The sender copies the message into the next slot (and the
// slots after it, kRingPayload bytes in each, where it is larger) and publishes it by
// stamping its first slot with its position (so the flag and the start of the data share
// the slot's cache line), and completes; the receiver polls the slot it
// expects next on each of its incoming rings, and when it posts a receive or waits, moves
// what arrived into the matching posted receive or keeps it in a list of its own for a
// receive still to come. A receive posted when its message is already the ring's next one
// takes it straight from the slot: no mailbox lock and no copy into that list (at p = 2
// that made an 8 B allreduce 17% faster). Where the mailbox costs a lock and a few cache lines that
// bounce between CPUs per message, a ring message costs one line in flight: the sender writes no
// counter the receiver watches (a receiver about to sleep says so in `sleeping`, which the
// sender reads after a fence). A full ring sends through the mailbox as before. Rings are
// used only when every rank has a CPU (the world spins): there a small call at p = 2 costs
// 2-4x less than through the mailbox. With more ranks than CPUs they cost more than they
// save: a receive posted first then waits for its own thread (or a helper) to run, where
// through the mailbox the sender completes it (docs/design.md, "Eager rings").
//
// Cooperative progress (Transport::attach), with more ranks than CPUs: each rank has a seat,
// a mutex its thread holds while it runs its attached execution and releases only while it
// waits. A waiting rank, before it yields the CPU, takes the free seats of ranks whose inbox
// has news and advances their executions (issues what became ready, takes in what
// completed), so that a collective whose ranks have all entered it can complete on the
// threads that happen to run, instead of costing a scheduling round for every message.
// Lock order: a seat before any mailbox or inbox lock, never the reverse; a helper only
// try-locks seats, and holds one at a time.
//
// Shared copies: when the world spins, a plain copy of kShareBytes or more (a large message
// into a plain receive) is split into chunks that the rank making it offers to its peer. The
// peer, once it waits (spinning for this very message: the receiver for its data, the sender
// for its completion), takes the offer and copies chunks too, so that the two CPUs share the
// copy instead of one copying while the other spins (a bcast root and its child at p = 2 are
// such a pair: a 2 MiB bcast took half the time). The offer lives on the copier's stack; the
// copier withdraws it when its chunks run out, or, if the peer took it, waits for the peer's
// last chunk (HelpSlot, SharedCopy). A receive-reduce is shared the same way, in chunks of
// whole elements, when its combine step takes parts (ReduceInto::by_parts: the executor's
// does), so a rooted reduce's combine runs on both CPUs too.
//
// Fibers (fibers.h): when the world runs its ranks as fibers, a waiting rank neither spins
// nor yields nor sleeps: it parks its fiber on its inbox's news, and every change of that
// news pokes the pool. There are no seats and no helpers then (the waiting rank's worker
// runs the others), and no rings (measured: no faster than the mailboxes there). No lock is
// held across a park.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "optcoll/exec/spin_wait.h"
#include "optcoll/exec/threads/fibers.h"
#include "optcoll/exec/transport.h"
#include "optcoll/model/error.h"

namespace optcoll::threads {

// Before a rank goes to sleep waiting for another, it spins, if the world has no more ranks
// than CPUs (so the peer it waits for has a CPU of its own): for SpinBudget::kLongSpin, or
// for kSpinBudget while the node is oversubscribed by other programs (spin_wait.h). A thread
// woken on another, idle CPU took 20-40 us to run on the 2-core VM and 50-100 us on a 16-core
// KVM node, so a rank that sleeps makes its peers wait past their spin and sleep too.
inline constexpr std::chrono::microseconds kSpinBudget{20};

// With more ranks than CPUs the peer may be waiting for this CPU: a waiting rank yields it
// (sched_yield) for this long before it sleeps, so that a runnable peer runs at once rather
// than after a sleep and a wake-up (tens of us on a busy 2-core VM; docs/design.md, Thread
// backend).
inline constexpr std::chrono::microseconds kYieldBudget{200};

// Calls `ready()`, yielding the CPU between calls, until it returns true or `budget` has
// passed; returns whether it did.
template <typename Ready>
bool yield_until(Ready&& ready, std::chrono::microseconds budget) {
  const auto end = std::chrono::steady_clock::now() + budget;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::yield();
  }
  return true;
}

// The mailboxes' lock: taken once or twice per message and held for a match and a copy. One
// atomic exchange takes it and a store releases it, where a pthread mutex costs an atomic
// operation each way (with ranks as fibers, the mailbox locks were 21% of a small bcast's
// time: docs/design.md, "Ranks as fibers"). A waiter spins briefly, then yields its CPU between
// looks (a holder may be copying a large message, or be preempted).
class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
          cpu_relax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// The posted, not yet matched halves of one ordered pair's messages, oldest first. Matching
// is mostly oldest first, so taking the front is O(1) (the dead prefix is dropped in
// batches); taking from the middle shifts the rest.
template <typename Posted>
class PostedQueue {
 public:
  using iterator = typename std::vector<Posted>::iterator;
  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  bool empty() const { return head_ == items_.size(); }
  Posted& emplace_back() {
    make_room();
    return items_.emplace_back();
  }
  void push_back(Posted posted) {
    make_room();
    items_.push_back(std::move(posted));
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  // The element with this key, or end().
  iterator find(MsgKey key) {
    return std::find_if(begin(), end(), [key](const Posted& p) { return p.key == key; });
  }
  // Removes and returns *it.
  Posted take(iterator it) {
    Posted taken = std::move(*it);
    drop(it);
    return taken;
  }
  // Removes *it (take() without the copy out).
  void drop(iterator it) {
    if (it != begin()) {
      items_.erase(it);
    } else if (++head_ == items_.size()) {
      clear();
    } else if (head_ >= 16 && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  template <typename Predicate>
  void erase_if(Predicate&& predicate) {
    items_.erase(std::remove_if(begin(), end(), std::forward<Predicate>(predicate)), end());
  }

 private:
  // Before an append: a first use reserves kInitialCapacity; a full vector drops its taken
  // prefix before it grows. Together they keep a pair's steady traffic allocation-free.
  static constexpr std::size_t kInitialCapacity = 16;
  void make_room() {
    if (items_.capacity() == 0) items_.reserve(kInitialCapacity);
    if (items_.size() == items_.capacity() && head_ > 0) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::vector<Posted> items_;
  std::size_t head_ = 0;  // items_[0 .. head_) were taken
};

// The shared state of one ThreadWorld: mailboxes, inboxes and the abort flag. Reset between
// runs, so that nothing left over from a failed run can match in the next one.
class Fabric {
 public:
  // `spin`: waiting ranks spin (spin_wait.h) before they sleep.
  Fabric(Rank nranks, std::chrono::milliseconds timeout, bool spin);
  // What the constructor allocates for `nranks` ranks (its p² pairs dominate), for estimates
  // made before making one.
  static std::size_t bytes_for(Rank nranks);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;
  ~Fabric();

  Rank size() const { return nranks_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  bool spins() const { return spin_; }
  // How the next run's ranks wait (set by the world between runs, while no rank runs):
  // spinning (ranks as threads with a CPU each; small messages then go through the rings),
  // or as fibers of `pool` (fibers.h: waits park the rank's fiber, and every change of a
  // rank's news pokes its worker), or neither (threads that yield and help each other).
  // A fabric that spins (and so uses rings) is not for fibers.
  void set_mode(bool spin, FiberPool* pool) {
    OPTCOLL_CHECK(!(spin && pool != nullptr), "a fabric with rings cannot run its ranks as fibers");
    spin_ = spin;
    fibers_ = pool;
  }
  FiberPool* fibers() const { return fibers_; }
  // Small messages go through the pairs' rings (file comment): only when ranks spin.
  bool rings() const { return spin_; }

  // Empties every mailbox and inbox and clears the abort flag. Only while no rank runs.
  void reset();

  // Records the first failure (`rank` and its `reason`, which should name the rank) and
  // wakes every rank; later calls change nothing. Thread-safe.
  void abort(Rank rank, const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Rank abort_rank() const;           // kNoRank if not aborted
  std::string abort_reason() const;  // empty if not aborted
  // How many shared copies (file comment) rank `helper` helped with, since the fabric was
  // made: for tests and reports.
  std::uint64_t copies_helped(Rank helper) const {
    return help_slots_[static_cast<std::size_t>(helper)].taken.load(std::memory_order_relaxed);
  }

 private:
  friend class ThreadTransport;

  struct PostedSend {
    MsgKey key;
    RequestId id = 0;                 // 0: an eager send (complete already)
    std::span<const std::byte> data;  // not eager: the sender's memory
    // A vectored send (isendv), not eager: the pieces of the sender's memory, in order (then
    // `data` is empty).
    std::vector<std::span<const std::byte>> parts;
    // Eager: a copy of the data, in `small` if it fits, else in `copy` (of copy_capacity
    // bytes, from the mailbox's spare copies where one is large enough).
    std::size_t eager_bytes = 0;
    std::unique_ptr<std::byte[]> copy;
    std::size_t copy_capacity = 0;
    std::array<std::byte, 48> small{};

    bool eager() const { return id == 0; }
    std::span<const std::byte> payload() const {
      if (!eager()) return data;
      return {copy != nullptr ? copy.get() : small.data(), eager_bytes};
    }
  };
  struct PostedRecv {
    MsgKey key;
    RequestId id = 0;
    std::span<std::byte> data;  // a plain receive
    // A vectored receive (irecvv): the pieces of the receiver's memory, in order (then `data`
    // is empty and `bytes` their total).
    std::vector<std::span<std::byte>> parts;
    std::size_t bytes = 0;  // the expected size (== data.size() for a plain receive)
    ReduceInto reduce;      // set for a receive-reduce
    // Set when a sender handed the match over to the receiver (see the file comment).
    RequestId handed_send = 0;  // 0: none
    std::span<const std::byte> handed_data;
  };
  // Tells a receiver that a sender handed it the match of (from, key).
  struct HandOver {
    Rank from = kNoRank;
    MsgKey key;
  };
  // The lock-free eager channel of one ordered pair (file comment). `tail` and
  // `sender_head` belong to the sender, `head` to the receiver. Positions count slots from
  // the ring's creation, across runs. A message at position k starts in slot k % kRingSlots,
  // which is published when its `stamp` becomes k + 1: the receiver, at head k, polls that
  // one slot, whose line carries the stamp, the key, the size and (up to 48 bytes) the data.
  // A message of more than kRingPayload bytes (at most kRingMessageBytes) goes on in the
  // next slots, kRingPayload bytes in each, whose stamps it leaves alone (they keep a
  // position of an earlier lap, never the one the receiver expects there); the receiver's
  // head then moves past all of its slots. Made by the sender on its first small send.
  static constexpr std::size_t kRingPayload = 112;
  static constexpr std::uint32_t kRingSlots = 32;
  static constexpr std::uint32_t kRingMessageSlots = kRingSlots / 2;
  static constexpr std::size_t kRingMessageBytes = kRingPayload * kRingMessageSlots;
  // The slots a message of `bytes` takes in a ring (at least one).
  static constexpr std::uint32_t ring_slots_for(std::size_t bytes) {
    return bytes <= kRingPayload
               ? 1
               : static_cast<std::uint32_t>((bytes + kRingPayload - 1) / kRingPayload);
  }
  struct EagerRing {
    struct alignas(64) Slot {
      std::atomic<std::uint32_t> stamp{0};  // k + 1 once message k is in the slot
      std::uint32_t bytes = 0;
      MsgKey key;
      std::array<std::byte, kRingPayload> data{};
    };
    alignas(64) std::uint32_t tail = 0;  // the sender's next position
    std::uint32_t sender_head = 0;       // the last head the sender read: the ring is full below it
    alignas(64) std::atomic<std::uint32_t> head{0};
    std::array<Slot, kRingSlots> slots{};

    // Whether the slot at `position` holds message `position` (read by the receiver).
    bool published(std::uint32_t position) const {
      return slots[position % kRingSlots].stamp.load(std::memory_order_acquire) == position + 1;
    }
    // Writes the concatenation of `pieces` into the slots from `position` on (the sender,
    // before it publishes the message there).
    void fill(std::uint32_t position, std::span<const std::span<const std::byte>> pieces);
    // Copies the `bytes` of the message published at `position` to `out` (the receiver).
    void copy_out(std::uint32_t position, std::size_t bytes, std::byte* out) const;
  };
  // A ring message the receiver took out before its receive was posted.
  struct Arrived {
    MsgKey key;
    std::uint32_t bytes = 0;
    std::array<std::byte, kRingPayload> data{};  // a message of one slot
    // A message of several slots, out of line (from the receiver's spares), so that the
    // list stays small to fill, move and search. Inline, its 1.75 KiB were zeroed for every
    // message kept and moved when the list was compacted; with it inline an 8 B bcast at
    // p = 16 on the 16-core node took 1.3x as long as before the multi-slot messages (5 runs;
    // this form was not measured there).
    std::unique_ptr<std::array<std::byte, kRingMessageBytes>> large;

    std::span<const std::byte> payload() const {
      return {large != nullptr ? large->data() : data.data(), bytes};
    }
  };
  // Messages from one rank to another that are posted on one side only. Small vectors: a
  // schedule rarely has more than a few messages outstanding per ordered pair.
  struct alignas(64) Mailbox {
    SpinLock mutex;
    PostedQueue<PostedSend> sends;
    PostedQueue<PostedRecv> recvs;
    std::size_t eager_bytes = 0;     // held in the copies of eager sends
    std::size_t eager_messages = 0;  // eager sends waiting in `sends`
    // Copies of eager sends the receiver is done with, kept for the pair's next ones (as
    // many as the pair ever had in flight, at most kEagerMailboxMessages): back-to-back calls
    // of the same collective allocate nothing once the pair's peak was reached.
    struct SpareCopy {
      std::unique_ptr<std::byte[]> bytes;
      std::size_t capacity = 0;
    };
    std::vector<SpareCopy> spare_copies;
  };
  // Requests of one rank completed by other ranks, and the failed ones with their message.
  struct alignas(64) Inbox {
    std::mutex mutex;
    std::condition_variable wake;
    std::vector<RequestId> completed;
    std::vector<std::string> failures;
    std::vector<HandOver> handed;
    std::atomic<bool> idle{false};       // waiting in wait_some (read without the lock: a hint)
    std::atomic<std::uint32_t> news{0};  // bumped after each change (what a spinner watches)
    // Asleep on `wake` (set under the mutex): a ring sender then takes the mutex to notify.
    // On a line of its own, which ring senders read after every message.
    alignas(64) std::atomic<bool> sleeping{false};
    // Bumped when a sender makes a ring to this rank (what the receiver's list of its
    // incoming rings is refreshed from).
    std::atomic<std::uint32_t> rings_made{0};
  };

  // A large copy or receive-reduce that the rank making it offers to share with the peer
  // that waits for it (file comment, "Shared copies"). It lives on the copying rank's stack
  // until both are done; chunks are claimed from `next`, so no byte is copied or combined
  // twice. The peer that takes the offer sets `helper_done` after its last chunk: its last
  // touch of this object. A combine step that throws stops the claiming; its message is kept
  // in `error` by the first to fail.
  struct SharedCopy {
    const std::byte* from = nullptr;
    std::byte* to = nullptr;             // a copy's destination
    const ReduceInto* reduce = nullptr;  // or a receive-reduce's combine step (by parts)
    std::size_t bytes = 0;
    std::size_t chunk = 0;             // bytes per chunk (whole elements of a reduction)
    std::atomic<std::size_t> next{0};  // the next chunk to claim
    std::atomic<bool> helper_done{false};
    std::atomic<bool> failed{false};
    std::string error;            // written by whoever set `failed`
    void copy_chunks() noexcept;  // claims and does chunks until none is left (or one failed)
    void fail(std::string message) noexcept;
  };
  // Where a copy is offered to a rank: set by the copier (only from null), taken by the rank
  // (exchange) or withdrawn by the copier (only if still its own). On a line of its own,
  // which its rank reads in every spin.
  struct alignas(64) HelpSlot {
    std::atomic<SharedCopy*> offered{nullptr};
    std::atomic<std::uint64_t> taken{0};  // offers this rank took (written by it alone)
  };

  // Who runs a rank's attached execution (file comment, "Cooperative progress").
  struct alignas(64) Seat {
    std::mutex mutex;                         // held by whoever advances the execution
    Progress* progress = nullptr;             // the attached execution (under mutex)
    std::atomic<bool> attached{false};        // a hint for helpers (read without the lock)
    std::atomic<std::uint32_t> news_seen{0};  // the inbox's news when it was last advanced
    std::atomic<std::uint32_t> helped{0};     // bumped by a helper that advanced it, while
                                              // it holds the seat and the inbox lock
  };

  Mailbox& mailbox(Rank from, Rank to) { return mailboxes_[pair_index(from, to)]; }
  Inbox& inbox(Rank r) { return inboxes_[static_cast<std::size_t>(r)]; }
  std::size_t pair_index(Rank from, Rank to) const {
    return static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) +
           static_cast<std::size_t>(to);
  }
  // The pair's ring, or null if the sender has not made it yet.
  EagerRing* ring(Rank from, Rank to) {
    return rings_[pair_index(from, to)].load(std::memory_order_acquire);
  }
  // The pair's ring, made if needed. Only the pair's sender calls it.
  EagerRing& sender_ring(Rank from, Rank to);
  // Ring messages from `from` that `to` took out and has not received yet. Only whoever
  // advances `to` (its thread, or a helper holding its seat) touches it.
  PostedQueue<Arrived>& arrived(Rank from, Rank to) { return arrived_[pair_index(from, to)]; }
  // After a ring message to `receiver` was published: wakes the receiver if it sleeps.
  void wake_ring_receiver(Rank receiver);
  Seat& seat(Rank r) { return seats_[static_cast<std::size_t>(r)]; }
  HelpSlot& help_slot(Rank r) { return help_slots_[static_cast<std::size_t>(r)]; }
  // Advances the attached executions of other ranks than `me` that have news and a free
  // seat; returns whether any changed.
  bool help_others(Rank me);
  void complete(Rank owner, RequestId id);
  void hand_over(Rank receiver, HandOver note);
  void fail(Rank owner, std::string message);

  const Rank nranks_;
  const std::chrono::milliseconds timeout_;
  bool spin_;
  FiberPool* fibers_ = nullptr;
  std::unique_ptr<Mailbox[]> mailboxes_;  // [from * nranks + to]
  std::unique_ptr<Inbox[]> inboxes_;
  std::unique_ptr<Seat[]> seats_;
  std::unique_ptr<HelpSlot[]> help_slots_;
  std::unique_ptr<std::atomic<EagerRing*>[]> rings_;  // [from * nranks + to], owned
  std::unique_ptr<PostedQueue<Arrived>[]> arrived_;   // [from * nranks + to]
  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mutex_;
  Rank abort_rank_ = kNoRank;
  std::string abort_reason_;
};

// One rank's endpoint on a Fabric. Used by that rank's thread only (the Fabric's mailboxes
// and inboxes are what other threads touch).
class ThreadTransport final : public Transport {
 public:
  // Messages at least this large are handed over to an idle receiver (below it, waking the
  // receiver to copy costs more than the copy).
  static constexpr std::size_t kHandOverBytes = std::size_t{64} << 10;
  // A plain copy of at least kShareBytes is shared with the peer when the peer waits
  // spinning (file comment, "Shared copies"), in chunks of kShareChunk bytes.
  static constexpr std::size_t kShareChunk = std::size_t{64} << 10;
  static constexpr std::size_t kShareBytes = std::size_t{256} << 10;
  // Sends of at most this many bytes are eager (file comment), while their mailbox holds
  // less than kEagerMailboxBytes of eager copies.
  static constexpr std::size_t kEagerBytes = std::size_t{4} << 10;
  static constexpr std::size_t kEagerMailboxBytes = std::size_t{64} << 10;
  static constexpr std::size_t kEagerMailboxMessages = 64;
  // Completions a rank's lists hold without growing (more make them grow once, and they
  // keep that size: a prepared call allocates nothing).
  static constexpr std::size_t kCompletionsReserved = 64;
  // Sends of at most kRingMessageBytes go through the pair's ring while it has room for
  // them (file comment): kRingPayload bytes per slot; a sender runs ahead of its receiver by
  // at most kRingSlots of them, and then by kEagerMailboxMessages more through the mailbox.
  static constexpr std::size_t kRingPayload = Fabric::kRingPayload;
  static constexpr std::size_t kRingSlots = Fabric::kRingSlots;
  static constexpr std::size_t kRingMessageBytes = Fabric::kRingMessageBytes;

  ThreadTransport(Fabric& fabric, Rank rank);

  Rank rank() const override { return rank_; }
  Rank size() const override { return fabric_.size(); }
  std::string_view backend() const override { return "threads"; }
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override;
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override;
  // Combines straight from the sender's memory: no temporary buffer, no extra copy.
  RequestId irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) override;
  // Vectored messages move straight between the parts and the peer's memory: the match
  // copies piece by piece, with no staging buffer (a small send is copied into the ring or
  // mailbox as isend copies it, gathered from its parts).
  RequestId isendv(Rank to, MsgKey key, std::span<const std::span<const std::byte>> parts) override;
  RequestId irecvv(Rank from, MsgKey key, std::span<const std::span<std::byte>> parts) override;
  // Aborts the whole world with `reason`.
  void abort(const std::string& reason) override;
  // Takes this rank's seat (held until detach(), except while waiting) and offers the
  // execution to helpers when the world has more ranks than CPUs.
  void attach(Progress& progress) override;
  void detach() override;
  // Not while the ranks run as fibers (a wait parks the rank's own fiber).
  std::string why_no_progress_thread() const override;

  // Starts a new run: forgets completions of the previous one, restarts the no-progress
  // count. Called by the rank's own thread before it runs its function.
  void begin_run();

 protected:
  // Waits at most `timeout`, and stops the rank once it has waited the world's timeout in
  // total since it last made progress (posted, or saw a completion): then it aborts the
  // world and throws.
  void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) override;
  void do_cancel(std::span<const RequestId> ids) override;

 private:
  // The outcome of moving one message into its receive: an error for both sides (size
  // mismatch), for the receiver only (its combine step threw), or none.
  struct TransferResult {
    std::string error;
    bool receiver_only = false;
  };
  // Moves `data` (or, when `parts` is not empty, the concatenation of `parts`) into `recv`:
  // memcpys into its data or parts, or the combine step. Called with the pair's mailbox lock
  // held while either side may still be matched through the mailbox.
  TransferResult transfer(Rank from, Rank to, MsgKey key, std::span<const std::byte> data,
                          Fabric::PostedRecv& recv,
                          std::span<const std::span<const std::byte>> parts = {});
  // Does `job` (a copy or a combine, not offered yet), offering chunks of it to `peer` (file
  // comment, "Shared copies"). Returns once every chunk is done (or, after a failure, once no
  // chunk is in progress), with the first failure's message (none: no failure).
  std::optional<std::string> run_shared(Rank peer, Fabric::SharedCopy& job);
  // Combines `data` with `reduce`, sharing chunks with `peer` where it is worth it and the
  // combine step takes parts; returns the combine step's failure (none: no failure; a
  // failure's message may be empty).
  std::optional<std::string> combine(Rank peer, std::span<const std::byte> data,
                                     const ReduceInto& reduce);
  // Whether a transfer of `bytes` from one span is worth sharing with the peer.
  bool worth_sharing(std::size_t bytes, std::size_t spans) const {
    return spans == 1 && bytes >= kShareBytes && fabric_.spins();
  }
  // Copies chunks of a copy offered to this rank, if there is one; returns whether there was.
  bool help_copy();
  // isend and isendv: sends `data`, or the concatenation of `parts` (of `bytes` in all) when
  // `parts` is not empty.
  RequestId send_message(Rank to, MsgKey key, std::span<const std::byte> data,
                         std::span<const std::span<const std::byte>> parts, std::size_t bytes);
  // Completes both sides of a match this thread did: own side locally, the other through
  // its inbox.
  void finish_match(TransferResult result, bool i_am_sender, RequestId mine, Rank peer,
                    RequestId theirs);

  void check_peer(Rank peer, const char* verb) const;

  // The steps of do_wait_some(). Whether a wait parks (fibers), spins (a CPU per rank) or
  // yields (more ranks than CPUs) before it sleeps is the world's (Fabric), fixed when it
  // is built.
  // The fast path: this rank's own completed matches, when its inbox cannot hold more.
  bool take_own_matches(std::vector<RequestId>& done);
  // Moves this rank's own completed matches (local_done_) to the end of `done`.
  void take_local_done(std::vector<RequestId>& done);
  // Under the inbox lock: throws the first failure (or the world's abort); takes what
  // senders handed over; true when there are completions (moved into `done`) or a helper
  // advanced this rank's execution (its seat's count moved from `helped`).
  bool look_in_inbox(std::unique_lock<std::mutex>& lock, std::uint32_t helped,
                     std::vector<RequestId>& done);
  // As a fiber: parks until the inbox's news moves or `deadline`, the worker running others.
  void park_fiber(FiberPool& pool, std::unique_lock<std::mutex>& lock,
                  std::chrono::steady_clock::time_point deadline);
  // Spins or yields (helping others) without the locks until news or `spin_end`; true if
  // news came. Returns with the seat and the lock taken back and the rings drained.
  bool spin_or_yield(std::unique_lock<std::mutex>& lock, std::uint32_t helped,
                     std::chrono::steady_clock::time_point now,
                     std::chrono::steady_clock::time_point spin_end);
  // Sleeps on the inbox until woken or `deadline` (at once back if a ring sender published).
  void sleep_on_inbox(std::unique_lock<std::mutex>& lock,
                      std::chrono::steady_clock::time_point deadline);
  // Waiting, in do_wait_some(): leaves the seat to helpers (if attached) and takes it back.
  void leave_seat();
  void take_seat();
  void throw_if_aborted() const;
  RequestId post_recv(Rank from, MsgKey key, Fabric::PostedRecv recv);
  // Does the matches that senders handed over to this rank.
  void take_hand_overs(const std::vector<Fabric::HandOver>& notes);
  // Sends through the pair's ring; false if the ring is full.
  bool ring_send(Rank to, MsgKey key, std::span<const std::byte> data,
                 std::span<const std::span<const std::byte>> parts, std::size_t bytes);
  // Takes what arrived in the ring from `from`: into its posted receive if there is one,
  // else into the list of arrived messages.
  void drain_ring(Rank from);
  // drain_ring() for every incoming ring that has a message published.
  void drain_rings();
  // Whether a message is published and not yet taken on any incoming ring.
  bool rings_pending();
  // The rings that senders have made to this rank (refreshed when Inbox::rings_made moves).
  const std::vector<std::pair<Rank, Fabric::EagerRing*>>& incoming_rings();
  // Completes `recv` with an arrived message of the same key, if there is one.
  bool receive_arrived(Rank from, MsgKey key, Fabric::PostedRecv& recv);
  // Completes `recv` straight from the ring's next slot when that slot holds its message:
  // no mailbox lock (the slot matches no posted receive but this one, and this rank is the
  // ring's only reader) and no copy into the arrived list. False otherwise.
  bool receive_from_ring_head(Rank from, MsgKey key, Fabric::PostedRecv& recv);
  // Records the outcome of a match this rank completed for its own receive `id`.
  void finish_own_receive(TransferResult result, RequestId id);
  // A buffer for an arrived message of several slots: a spare one, else new ones.
  std::unique_ptr<std::array<std::byte, kRingMessageBytes>> take_spare_large();
  // The message published at `position` of `ring` in one piece: in its slot where it fits
  // one, else copied into ring_message_.
  std::span<const std::byte> ring_message(const Fabric::EagerRing& ring, std::uint32_t position);

  Fabric& fabric_;
  const Rank rank_;
  RequestId next_id_ = 1;              // never reset: ids stay unique across runs
  std::vector<RequestId> local_done_;  // completed by this rank's own matching
  std::vector<std::string> local_failures_;
  // Time spent in do_wait_some() since this rank last posted or saw a completion.
  std::chrono::steady_clock::duration idle_{};
  bool attached_ = false;  // between attach() and detach()
  bool seated_ = false;    // this thread holds the seat's mutex
  // The rings to this rank, as of Inbox::rings_made == incoming_made_. Belongs to whoever
  // advances this rank, as the arrived lists do.
  std::vector<std::pair<Rank, Fabric::EagerRing*>> incoming_;
  std::uint32_t incoming_made_ = 0;
  // The inbox's news when this rank last left it empty (under its lock), if it did: while
  // the news stays the same, a wait with completions of its own needs no lock.
  std::uint32_t inbox_emptied_news_ = 0;
  bool inbox_emptied_ = false;
  SpinBudget spin_{kSpinBudget};  // how long a wait spins before it sleeps
  // A ring message of several slots, put together for its receive (ring_message()).
  std::array<std::byte, kRingMessageBytes> ring_message_{};
  // Buffers of arrived messages of several slots that their receives are done with, kept for
  // the next ones (as many as were ever waiting at once): back-to-back calls allocate nothing.
  std::vector<std::unique_ptr<std::array<std::byte, kRingMessageBytes>>> spare_large_;
  std::size_t large_owned_ = 0;  // such buffers made, spare or held by an arrived message
};

}  // namespace optcoll::threads
