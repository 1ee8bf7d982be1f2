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
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "optcoll/exec/transport.h"

namespace optcoll::threads {

// Before a rank goes to sleep waiting for another, it spins this long, if the world has no
// more ranks than CPUs (so the peer it waits for has a CPU of its own). A thread woken on
// another, idle CPU took 20-40 us to run in our measurements (a VM); a short wait spent
// spinning avoids that, and a long one costs at most this much CPU.
inline constexpr std::chrono::microseconds kSpinBudget{20};

// With more ranks than CPUs the peer may be waiting for this CPU: a waiting rank yields it
// (sched_yield) for this long before it sleeps, so that a runnable peer runs at once rather
// than after a sleep and a wake-up (tens of us on a busy 2-core VM; design.md 26).
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

// Calls `ready()` until it returns true or `budget` has passed; returns whether it did.
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::microseconds budget) {
  const auto end = std::chrono::steady_clock::now() + budget;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= end) return ready();
  }
}

// The shared state of one ThreadWorld: mailboxes, inboxes and the abort flag. Reset between
// runs, so that nothing left over from a failed run can match in the next one.
class Fabric {
 public:
  // `spin`: waiting ranks spin for kSpinBudget before they sleep.
  Fabric(Rank nranks, std::chrono::milliseconds timeout, bool spin);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  Rank size() const { return nranks_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  bool spins() const { return spin_; }

  // Empties every mailbox and inbox and clears the abort flag. Only while no rank runs.
  void reset();

  // Records the first failure (`rank` and its `reason`, which should name the rank) and
  // wakes every rank; later calls change nothing. Thread-safe.
  void abort(Rank rank, const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Rank abort_rank() const;           // kNoRank if not aborted
  std::string abort_reason() const;  // empty if not aborted

 private:
  friend class ThreadTransport;

  struct PostedSend {
    MsgKey key;
    RequestId id = 0;
    std::span<const std::byte> data;
  };
  struct PostedRecv {
    MsgKey key;
    RequestId id = 0;
    std::span<std::byte> data;  // a plain receive
    std::size_t bytes = 0;      // the expected size (== data.size() for a plain receive)
    ReduceInto reduce;          // set for a receive-reduce
    // Set when a sender handed the match over to the receiver (see the file comment).
    RequestId handed_send = 0;  // 0: none
    std::span<const std::byte> handed_data;
  };
  // Tells a receiver that a sender handed it the match of (from, key).
  struct HandOver {
    Rank from = kNoRank;
    MsgKey key;
  };
  // Messages from one rank to another that are posted on one side only. Small vectors: a
  // schedule rarely has more than a few messages outstanding per ordered pair.
  struct alignas(64) Mailbox {
    std::mutex mutex;
    std::vector<PostedSend> sends;
    std::vector<PostedRecv> recvs;
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
  };

  Mailbox& mailbox(Rank from, Rank to) {
    return mailboxes_[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) +
                      static_cast<std::size_t>(to)];
  }
  Inbox& inbox(Rank r) { return inboxes_[static_cast<std::size_t>(r)]; }
  void complete(Rank owner, RequestId id);
  void hand_over(Rank receiver, HandOver note);
  void fail(Rank owner, std::string message);

  const Rank nranks_;
  const std::chrono::milliseconds timeout_;
  const bool spin_;
  std::unique_ptr<Mailbox[]> mailboxes_;  // [from * nranks + to]
  std::unique_ptr<Inbox[]> inboxes_;
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

  ThreadTransport(Fabric& fabric, Rank rank);

  Rank rank() const override { return rank_; }
  Rank size() const override { return fabric_.size(); }
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override;
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override;
  // Combines straight from the sender's memory: no temporary buffer, no extra copy.
  RequestId irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) override;
  // Aborts the whole world with `reason`.
  void abort(const std::string& reason) override;

  // Starts a new run: forgets completions of the previous one, restarts the no-progress
  // count. Called by the rank's own thread before it runs its function.
  void begin_run();

 protected:
  // Waits at most `timeout`, and stops the rank once it has waited the world's timeout in
  // total since it last made progress (posted, or saw a completion): then it aborts the
  // world and throws.
  std::vector<RequestId> do_wait_some(std::chrono::milliseconds timeout) override;
  void do_cancel(std::span<const RequestId> ids) override;

 private:
  // The outcome of moving one message into its receive: an error for both sides (size
  // mismatch), for the receiver only (its combine step threw), or none.
  struct TransferResult {
    std::string error;
    bool receiver_only = false;
  };
  // Moves `data` into `recv` (a memcpy or the combine step). Called with the pair's mailbox
  // lock held.
  static TransferResult transfer(Rank from, Rank to, MsgKey key, std::span<const std::byte> data,
                                 Fabric::PostedRecv& recv);
  // Completes both sides of a match this thread did: own side locally, the other through
  // its inbox.
  void finish_match(TransferResult result, bool i_am_sender, RequestId mine, Rank peer,
                    RequestId theirs);

  void check_peer(Rank peer, const char* verb) const;
  void throw_if_aborted() const;
  RequestId post_recv(Rank from, MsgKey key, Fabric::PostedRecv recv);
  // Does the matches that senders handed over to this rank.
  void take_hand_overs(const std::vector<Fabric::HandOver>& notes);

  Fabric& fabric_;
  const Rank rank_;
  RequestId next_id_ = 1;              // never reset: ids stay unique across runs
  std::vector<RequestId> local_done_;  // completed by this rank's own matching
  std::vector<std::string> local_failures_;
  // Time spent in do_wait_some() since this rank last posted or saw a completion.
  std::chrono::steady_clock::duration idle_{};
};

}  // namespace optcoll::threads
