// SPDX-License-Identifier: Apache-2.0
// File: the thread transport on a Fabric made to spin (thread_transport.h), so that rings and
// shared copies are on whatever the machine's CPU count. The eager rings: every pair at once
// with sizes on both sides of the ring's payload limit, receives posted before and after
// their sends and in reverse order, full rings spilling into the mailbox, flow control in both
// modes, receive-reduce, cancel, a sleeping receiver woken by a ring send, and nothing kept
// from one run to the next. Shared copies: every byte arrives whichever side copies and
// whichever helps, and a fabric that does not spin shares nothing.
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/model/error.h"
#include "tests/testing/reference.h"

namespace optcoll {
namespace {

using std::chrono::milliseconds;
using threads::Fabric;
using threads::ThreadTransport;
using Bytes = std::vector<std::byte>;

constexpr std::size_t kRingPayload = ThreadTransport::kRingPayload;

// p ranks over one Fabric, each run on p fresh threads, as ThreadWorld runs them: a rank that
// throws aborts the fabric, and run() rethrows the first failure.
class FabricWorld {
 public:
  FabricWorld(Rank p, bool spin, milliseconds timeout = milliseconds(20000))
      : fabric_(p, timeout, spin) {
    for (Rank r = 0; r < p; ++r)
      transports_.push_back(std::make_unique<ThreadTransport>(fabric_, r));
  }
  const Fabric& fabric() const { return fabric_; }

  void run(const std::function<void(ThreadTransport&)>& fn) {
    fabric_.reset();
    std::vector<std::exception_ptr> failures(transports_.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < transports_.size(); ++r) {
      threads.emplace_back([&, r] {
        ThreadTransport& t = *transports_[r];
        t.begin_run();
        try {
          fn(t);
        } catch (const std::exception& e) {
          failures[r] = std::current_exception();
          fabric_.abort(static_cast<Rank>(r), e.what());
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& failure : failures) {
      if (failure) std::rethrow_exception(failure);
    }
  }

 private:
  Fabric fabric_;
  std::vector<std::unique_ptr<ThreadTransport>> transports_;
};

// Waits until every id in `ids` has completed (keeping what else completed meanwhile).
void wait_all(Transport& t, const std::vector<RequestId>& ids, std::set<RequestId>& done) {
  for (const RequestId id : ids) {
    while (done.count(id) == 0) {
      const auto got = t.wait_some(milliseconds(20000));
      if (got.empty()) throw std::runtime_error("wait_all timed out");
      done.insert(got.begin(), got.end());
    }
  }
}

Bytes payload(Rank from, Rank to, std::int32_t seq, std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] =
        static_cast<std::byte>(testing::mix(from * 100 + to, seq * 1000 + static_cast<Count>(i)));
  }
  return b;
}

constexpr std::size_t kRingMessageBytes = ThreadTransport::kRingMessageBytes;

// Waits until nothing more completes (the peer has not started): into `done`, returning
// how many completed.
int complete_without_peer(Transport& t, std::set<RequestId>& done) {
  while (true) {
    const auto more = t.wait_some(milliseconds(50));
    if (more.empty()) break;
    done.insert(more.begin(), more.end());
  }
  return static_cast<int>(done.size());
}

// Sizes on both sides of a slot's payload, of two slots and of the ring's limit (and the
// mailbox's eager path above it).
std::size_t size_of(std::int32_t seq) {
  constexpr std::size_t kSizes[] = {0,
                                    1,
                                    8,
                                    kRingPayload - 1,
                                    kRingPayload,
                                    kRingPayload + 1,
                                    600,
                                    2 * kRingPayload,
                                    2 * kRingPayload + 1,
                                    kRingMessageBytes - 1,
                                    kRingMessageBytes,
                                    kRingMessageBytes + 1};
  return kSizes[static_cast<std::size_t>(seq) % std::size(kSizes)];
}

TEST(ThreadRings, OnlyWhenRanksSpin) {
  EXPECT_TRUE(FabricWorld(3, true).fabric().rings());
  EXPECT_FALSE(FabricWorld(3, false).fabric().rings());
}

// Every rank sends more messages to every other rank than a ring holds. Even ranks post
// their receives first, in order; odd ranks post their sends first and receive in reverse
// order, so messages wait in the rings, in the receivers' arrived lists and in the mailboxes.
TEST(ThreadRings, EveryPairAnyOrderAnySize) {
  constexpr Rank kRanks = 5;
  constexpr std::int32_t kMessages = static_cast<std::int32_t>(ThreadTransport::kRingSlots) + 20;
  for (const bool spin : {true, false}) {
    FabricWorld world(kRanks, spin);
    std::vector<std::vector<Bytes>> got(kRanks * kRanks, std::vector<Bytes>(kMessages));
    world.run([&](ThreadTransport& t) {
      const Rank me = t.rank();
      std::vector<Bytes> outgoing;
      std::vector<RequestId> ids;
      auto post_sends = [&] {
        for (Rank to = 0; to < kRanks; ++to) {
          if (to == me) continue;
          for (std::int32_t s = 0; s < kMessages; ++s) {
            outgoing.push_back(payload(me, to, s, size_of(s)));
          }
        }
        std::size_t k = 0;
        for (Rank to = 0; to < kRanks; ++to) {
          if (to == me) continue;
          for (std::int32_t s = 0; s < kMessages; ++s)
            ids.push_back(t.isend(to, {7, s}, outgoing[k++]));
        }
      };
      auto post_recvs = [&] {
        for (Rank from = 0; from < kRanks; ++from) {
          if (from == me) continue;
          auto& mine = got[static_cast<std::size_t>(from * kRanks + me)];
          for (std::int32_t i = 0; i < kMessages; ++i) {
            const std::int32_t s = me % 2 == 0 ? i : kMessages - 1 - i;
            mine[static_cast<std::size_t>(s)].assign(size_of(s), std::byte{0xEE});
            ids.push_back(t.irecv(from, {7, s}, mine[static_cast<std::size_t>(s)]));
          }
        }
      };
      if (me % 2 == 0) {
        post_recvs();
        post_sends();
      } else {
        post_sends();
        post_recvs();
      }
      std::set<RequestId> done;
      wait_all(t, ids, done);
    });
    for (Rank from = 0; from < kRanks; ++from) {
      for (Rank to = 0; to < kRanks; ++to) {
        if (from == to) continue;
        for (std::int32_t s = 0; s < kMessages; ++s) {
          EXPECT_EQ(got[static_cast<std::size_t>(from * kRanks + to)][static_cast<std::size_t>(s)],
                    payload(from, to, s, size_of(s)))
              << "spin " << spin << ", " << from << " -> " << to << " seq " << s;
        }
      }
    }
  }
}

// Messages of several slots sent in pieces (isendv) whose boundaries fall anywhere in a
// slot, received whole (irecv) and in other pieces (irecvv), enough of them for the ring to
// wrap inside a message: each arrives intact.
TEST(ThreadRings, MessagesOfSeveralSlotsInPieces) {
  constexpr std::int32_t kMessages = 3 * static_cast<std::int32_t>(ThreadTransport::kRingSlots);
  FabricWorld world(2, true);
  std::vector<Bytes> got(kMessages);
  auto bytes_of = [](std::int32_t s) {
    return std::size_t{1} + static_cast<std::size_t>(s * 37) % kRingMessageBytes;
  };
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    std::vector<RequestId> ids;
    if (t.rank() == 0) {
      std::vector<Bytes> outgoing;
      std::vector<std::vector<std::span<const std::byte>>> pieces(kMessages);
      for (std::int32_t s = 0; s < kMessages; ++s)
        outgoing.push_back(payload(0, 1, s, bytes_of(s)));
      for (std::int32_t s = 0; s < kMessages; ++s) {
        const std::span<const std::byte> whole(outgoing[static_cast<std::size_t>(s)]);
        const std::size_t cut =
            std::min(whole.size(), std::size_t{50} + static_cast<std::size_t>(s));
        auto& mine = pieces[static_cast<std::size_t>(s)];
        mine = {whole.first(cut / 2), whole.subspan(cut / 2, cut - cut / 2), whole.subspan(cut)};
        ids.push_back(t.isendv(1, {3, s}, mine));
        if (s % 8 == 7) wait_all(t, ids, done);  // the receiver drains as it goes
      }
      wait_all(t, ids, done);
    } else {
      std::vector<std::vector<std::span<std::byte>>> pieces(kMessages);
      for (std::int32_t s = 0; s < kMessages; ++s) {
        Bytes& mine = got[static_cast<std::size_t>(s)];
        mine.assign(bytes_of(s), std::byte{0xEE});
        if (s % 2 == 0) {
          ids.push_back(t.irecv(0, {3, s}, mine));
          continue;
        }
        const std::span<std::byte> whole(mine);
        const std::size_t cut = whole.size() / 3;
        auto& parts = pieces[static_cast<std::size_t>(s)];
        parts = {whole.first(cut), whole.subspan(cut)};
        ids.push_back(t.irecvv(0, {3, s}, parts));
      }
      wait_all(t, ids, done);
    }
  });
  for (std::int32_t s = 0; s < kMessages; ++s) {
    EXPECT_EQ(got[static_cast<std::size_t>(s)], payload(0, 1, s, bytes_of(s))) << "message " << s;
  }
}

// A sender of small messages runs ahead of a receiver that has not started by the ring's
// slots and the mailbox's eager messages (no ring without spinning), then waits.
TEST(ThreadRings, SendsRunAheadByTheRingAndTheMailbox) {
  for (const bool spin : {true, false}) {
    const int ahead = static_cast<int>(ThreadTransport::kEagerMailboxMessages) +
                      (spin ? static_cast<int>(ThreadTransport::kRingSlots) : 0);
    const int messages = ahead + 8;
    FabricWorld world(2, spin);
    std::atomic<bool> receiver_go{false};
    int completed_first = 0;
    std::vector<std::int64_t> got(static_cast<std::size_t>(messages), -1);
    world.run([&](ThreadTransport& t) {
      std::set<RequestId> done;
      if (t.rank() == 0) {
        std::vector<std::int64_t> values(static_cast<std::size_t>(messages));
        std::vector<RequestId> ids;
        for (int i = 0; i < messages; ++i) {
          values[static_cast<std::size_t>(i)] = 11 * i;
          ids.push_back(t.isend(1, {0, i},
                                std::as_bytes(std::span(&values[static_cast<std::size_t>(i)], 1))));
        }
        completed_first = complete_without_peer(t, done);
        receiver_go.store(true);
        wait_all(t, ids, done);
      } else {
        while (!receiver_go.load()) std::this_thread::yield();
        std::vector<RequestId> ids;
        for (int i = 0; i < messages; ++i) {
          ids.push_back(t.irecv(
              0, {0, i}, std::as_writable_bytes(std::span(&got[static_cast<std::size_t>(i)], 1))));
        }
        wait_all(t, ids, done);
      }
    });
    EXPECT_EQ(completed_first, ahead) << "spin " << spin;
    for (int i = 0; i < messages; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], 11 * i) << i;
  }
}

// Messages of the ring's largest size take kRingMessageSlots slots each: a sender runs
// ahead of a receiver that has not started by kRingSlots / kRingMessageSlots of them in the
// ring, then by the mailbox's eager messages (their bytes are under its limit).
TEST(ThreadRings, LargeRingMessagesTakeTheirSlots) {
  constexpr int kInRing =
      static_cast<int>(ThreadTransport::kRingSlots * kRingPayload / kRingMessageBytes);
  const int ahead =
      kInRing + static_cast<int>(std::min(ThreadTransport::kEagerMailboxMessages,
                                          ThreadTransport::kEagerMailboxBytes / kRingMessageBytes));
  const int messages = ahead + 4;
  FabricWorld world(2, true);
  std::atomic<bool> receiver_go{false};
  int completed_first = 0;
  std::vector<Bytes> got(static_cast<std::size_t>(messages));
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    std::vector<RequestId> ids;
    if (t.rank() == 0) {
      std::vector<Bytes> outgoing;
      for (int i = 0; i < messages; ++i) outgoing.push_back(payload(0, 1, i, kRingMessageBytes));
      for (int i = 0; i < messages; ++i)
        ids.push_back(t.isend(1, {0, i}, outgoing[static_cast<std::size_t>(i)]));
      completed_first = complete_without_peer(t, done);
      receiver_go.store(true);
      wait_all(t, ids, done);
    } else {
      while (!receiver_go.load()) std::this_thread::yield();
      for (int i = 0; i < messages; ++i) {
        Bytes& mine = got[static_cast<std::size_t>(i)];
        mine.assign(kRingMessageBytes, std::byte{0xEE});
        ids.push_back(t.irecv(0, {0, i}, mine));
      }
      wait_all(t, ids, done);
    }
  });
  EXPECT_EQ(completed_first, ahead);
  for (int i = 0; i < messages; ++i) {
    EXPECT_EQ(got[static_cast<std::size_t>(i)], payload(0, 1, i, kRingMessageBytes)) << i;
  }
}

// A receive-reduce combines a ring message whichever side comes first.
TEST(ThreadRings, ReceiveReduceEitherSideFirst) {
  for (const bool receiver_first : {false, true}) {
    FabricWorld world(2, true);
    std::int64_t sum = 5;
    std::atomic<bool> first_done{false};
    world.run([&](ThreadTransport& t) {
      std::set<RequestId> done;
      const bool go_first = (t.rank() == 1) == receiver_first;
      if (!go_first) {
        while (!first_done.load()) std::this_thread::yield();
      }
      if (t.rank() == 0) {
        const std::int64_t value = 37;
        const RequestId id = t.isend(1, {1, 2}, std::as_bytes(std::span(&value, 1)));
        first_done.store(true);
        wait_all(t, {id}, done);
      } else {
        const RequestId id =
            t.irecv_reduce(0, {1, 2}, sizeof(std::int64_t), [&](std::span<const std::byte> in) {
              std::int64_t v = 0;
              std::memcpy(&v, in.data(), sizeof v);
              sum += v;
            });
        first_done.store(true);
        wait_all(t, {id}, done);
      }
    });
    EXPECT_EQ(sum, 42) << "receiver first " << receiver_first;
  }
}

// A cancelled receive is never written, even when its message arrives afterwards; the
// message stays, as on a wire, for a later receive of the same key.
TEST(ThreadRings, CancelledReceiveIsNotWritten) {
  FabricWorld world(2, true);
  Bytes cancelled(8, std::byte{0x11});
  Bytes later(8, std::byte{0x22});
  std::atomic<int> step{0};
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    if (t.rank() == 1) {
      const RequestId id = t.irecv(0, {3, 1}, cancelled);
      t.cancel(std::vector<RequestId>{id});
      step.store(1);
      while (step.load() != 2) std::this_thread::yield();
      wait_all(t, {t.irecv(0, {3, 1}, later)}, done);
    } else {
      while (step.load() != 1) std::this_thread::yield();
      const Bytes data = payload(0, 1, 1, 8);
      wait_all(t, {t.isend(1, {3, 1}, data)}, done);
      step.store(2);
    }
  });
  EXPECT_EQ(cancelled, Bytes(8, std::byte{0x11}));
  EXPECT_EQ(later, payload(0, 1, 1, 8));
}

// A receiver asleep in wait_some (past its spin) is woken by a ring send, not by its timeout.
TEST(ThreadRings, SleepingReceiverIsWoken) {
  FabricWorld world(2, true);
  Bytes got(8);
  std::chrono::steady_clock::duration waited{};
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    if (t.rank() == 0) {
      std::this_thread::sleep_for(milliseconds(50));  // the receiver sleeps by now
      const Bytes data = payload(0, 1, 4, 8);
      wait_all(t, {t.isend(1, {0, 4}, data)}, done);
    } else {
      const auto start = std::chrono::steady_clock::now();
      const RequestId id = t.irecv(0, {0, 4}, got);
      const auto first = t.wait_some(milliseconds(10000));
      waited = std::chrono::steady_clock::now() - start;
      done.insert(first.begin(), first.end());
      wait_all(t, {id}, done);
    }
  });
  EXPECT_EQ(got, payload(0, 1, 4, 8));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

// Ring messages nobody received, in the ring or already taken out by the receiver, do not
// match in the next run.
TEST(ThreadRings, NothingCarriesOverToTheNextRun) {
  FabricWorld world(2, true);
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    const Bytes stale(8, std::byte{0x5A});
    if (t.rank() == 0) {
      wait_all(t, {t.isend(1, {9, 1}, stale), t.isend(1, {9, 2}, stale)}, done);
      const Bytes none;
      wait_all(t, {t.isend(1, {9, 3}, none)}, done);
    } else {
      Bytes none;
      // Taking {9, 3} drains the ring: {9, 1} and {9, 2} go to the arrived list.
      wait_all(t, {t.irecv(0, {9, 3}, none)}, done);
    }
  });
  world.run([&](ThreadTransport& t) {  // {9, 1} and {9, 2} were never received
    std::set<RequestId> done;
    if (t.rank() == 0) {
      const Bytes fresh = payload(0, 1, 2, 8);
      const RequestId id = t.isend(1, {9, 2}, fresh);
      wait_all(t, {id}, done);
    } else {
      Bytes got(8);
      wait_all(t, {t.irecv(0, {9, 2}, got)}, done);
      EXPECT_EQ(got, payload(0, 1, 2, 8));
      Bytes never(8, std::byte{0x33});
      const RequestId id = t.irecv(0, {9, 1}, never);
      EXPECT_TRUE(t.wait_some(milliseconds(30)).empty());
      t.cancel(std::vector<RequestId>{id});
      EXPECT_EQ(never, Bytes(8, std::byte{0x33}));
    }
  });
}

// A message left in the ring itself (never drained: its receiver posted nothing) is dropped
// with the run, as one taken out into the arrived list is.
TEST(ThreadRings, UndrainedMessagesDoNotReachTheNextRun) {
  FabricWorld world(2, true);
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    if (t.rank() == 0) wait_all(t, {t.isend(1, {9, 1}, Bytes(8, std::byte{0x5A}))}, done);
  });
  world.run([&](ThreadTransport& t) {
    if (t.rank() == 0) return;
    Bytes never(8, std::byte{0x33});
    const RequestId id = t.irecv(0, {9, 1}, never);
    EXPECT_TRUE(t.wait_some(milliseconds(30)).empty());
    t.cancel(std::vector<RequestId>{id});
    EXPECT_EQ(never, Bytes(8, std::byte{0x33}));
  });
}

constexpr std::size_t kShareBytes = ThreadTransport::kShareBytes;
constexpr std::size_t kShareChunk = ThreadTransport::kShareChunk;
constexpr std::size_t kGuard = 64;  // bytes checked on each side of a receive buffer

// `size` bytes that differ from run to run (cheap to make at tens of MiB).
Bytes pattern(std::size_t size, std::uint32_t epoch) {
  Bytes b(size);
  for (std::size_t i = 0; i < size; ++i) b[i] = static_cast<std::byte>(i * 131 + i / 251 + epoch);
  return b;
}

// How rank 1 receives the message of one_large_message().
enum class Receiver {
  kWaiting,  // it posts and waits: the sender hands it the copy and helps (from the wait)
  kBusy,     // it posts, tells the sender, and is busy for a while before it waits: the
             // sender copies, and the receiver helps once it waits
};

// One large message from rank 0 to rank 1, `size` bytes into the middle of a guarded buffer;
// returns whether every byte arrived and nothing around it changed.
bool one_large_message(FabricWorld& world, std::size_t size, std::uint32_t epoch,
                       Receiver receiver) {
  const Bytes data = pattern(size, epoch);
  Bytes got(size + 2 * kGuard, std::byte{0xEE});
  std::atomic<bool> posted{false};
  std::atomic<bool> sending{false};  // the sender is about to send: a busy receiver stays busy
  world.run([&](ThreadTransport& t) {
    std::set<RequestId> done;
    if (t.rank() == 0) {
      while (!posted.load(std::memory_order_acquire)) std::this_thread::yield();
      sending.store(true, std::memory_order_release);
      if (receiver == Receiver::kWaiting) {  // it waits by now, spinning on an idle machine
        const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (std::chrono::steady_clock::now() < end) {
        }
      }
      wait_all(t, {t.isend(1, {epoch, 1}, data)}, done);
      return;
    }
    const RequestId id = t.irecv(0, {epoch, 1}, std::span(got).subspan(kGuard, size));
    posted.store(true, std::memory_order_release);
    if (receiver == Receiver::kBusy) {
      // Busy from before the send until 300 us after it starts (however slowly the sender
      // got there: under TSan a fixed 300 us from the post ended before the send began).
      while (!sending.load(std::memory_order_acquire)) {
      }
      const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
      while (std::chrono::steady_clock::now() < end) {
      }
    }
    wait_all(t, {id}, done);
  });
  const auto untouched = [](std::byte b) { return b == std::byte{0xEE}; };
  return std::equal(data.begin(), data.end(), got.begin() + kGuard) &&
         std::all_of(got.begin(), got.begin() + kGuard, untouched) &&
         std::all_of(got.end() - kGuard, got.end(), untouched);
}

// Sizes below, at and above kShareBytes, with a last chunk shorter than the others, into a
// waiting receiver: every byte arrives once, in place, and the sender helped (on a loaded
// machine a waiting rank sleeps after a short spin and may miss the offer: up to 300 runs
// are tried for one it takes).
TEST(ThreadSharedCopies, TheSenderHelpsAWaitingReceiver) {
  FabricWorld world(2, true);
  const std::size_t sizes[] = {kShareBytes - 1, kShareBytes, 5 * kShareChunk + 123,
                               std::size_t{2} << 20};
  std::uint32_t epoch = 0;
  for (int round = 0; round < 300 && (round < 3 || world.fabric().copies_helped(0) == 0); ++round) {
    for (const std::size_t size : sizes) {
      ASSERT_TRUE(one_large_message(world, size, ++epoch, Receiver::kWaiting))
          << size << " bytes, run " << epoch;
    }
  }
  EXPECT_GT(world.fabric().copies_helped(0), 0U);
}

// A receiver busy when the send comes: the sender copies, and the receiver helps with the
// rest once it waits (a copy of 32 MiB lasts well past its 300 us of work; a run where the
// receiver's thread lost its CPU is tried again, up to 100 runs).
TEST(ThreadSharedCopies, ABusyReceiverHelpsOnceItWaits) {
  FabricWorld world(2, true);
  const std::size_t size = (std::size_t{32} << 20) + 77;
  for (std::uint32_t epoch = 1; epoch <= 100 && world.fabric().copies_helped(1) == 0; ++epoch) {
    ASSERT_TRUE(one_large_message(world, size, epoch, Receiver::kBusy)) << "run " << epoch;
  }
  EXPECT_GT(world.fabric().copies_helped(1), 0U);
}

// A receive-reduce whose combine step takes parts (ReduceInto::by_parts), of elements of
// `granule` bytes (12: chunks of whole elements only, not of 64 KiB), into a receiver that
// waits: each element is combined exactly once, at its own offset, by whichever rank
// claimed its chunk; over the runs the sender helps with a combine.
TEST(ThreadSharedCopies, AReceiveReduceIsSharedInWholeElements) {
  FabricWorld world(2, true);
  constexpr std::size_t kGranule = 12;
  const std::size_t size = kGranule * ((std::size_t{3} << 20) / kGranule);
  std::uint32_t epoch = 0;
  for (int run = 0; run < 300 && (run < 3 || world.fabric().copies_helped(0) == 0); ++run) {
    const Bytes data = pattern(size, ++epoch);
    Bytes got(size, std::byte{0});
    std::vector<std::atomic<int>> combined(size / kGranule);
    std::atomic<int> misaligned{0};
    std::atomic<bool> posted{false};
    world.run([&](ThreadTransport& t) {
      std::set<RequestId> done;
      if (t.rank() == 0) {
        while (!posted.load(std::memory_order_acquire)) std::this_thread::yield();
        const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (std::chrono::steady_clock::now() < end) {
        }
        wait_all(t, {t.isend(1, {epoch, 1}, data)}, done);
        return;
      }
      const auto add = [&](std::span<const std::byte> part, std::size_t offset) {
        if (offset % kGranule != 0 || part.size() % kGranule != 0) ++misaligned;
        for (std::size_t i = 0; i < part.size(); ++i) {
          got[offset + i] = static_cast<std::byte>(std::to_integer<int>(part[i]) + 1);
        }
        for (std::size_t e = offset / kGranule; e < (offset + part.size()) / kGranule; ++e) {
          combined[e].fetch_add(1, std::memory_order_relaxed);
        }
      };
      const RequestId id = t.irecv_reduce(0, {epoch, 1}, size, ReduceInto::by_parts(add, kGranule));
      posted.store(true, std::memory_order_release);
      wait_all(t, {id}, done);
    });
    ASSERT_EQ(misaligned.load(), 0) << "run " << epoch;
    ASSERT_TRUE(std::all_of(combined.begin(), combined.end(),
                            [](const std::atomic<int>& c) { return c.load() == 1; }))
        << "run " << epoch << ": an element combined twice or never";
    for (std::size_t i = 0; i < size; ++i) {
      ASSERT_EQ(got[i], static_cast<std::byte>(std::to_integer<int>(data[i]) + 1))
          << "byte " << i << ", run " << epoch;
    }
  }
  EXPECT_GT(world.fabric().copies_helped(0), 0U);
}

// A combine step that fails on one part, whichever rank runs it: the receiver fails with the
// combine step's message (the sender completes), and no rank waits for ever.
TEST(ThreadSharedCopies, AFailingPartFailsTheReceiverAlone) {
  FabricWorld world(2, true, milliseconds(5000));
  const std::size_t size = std::size_t{2} << 20;
  const Bytes data = pattern(size, 1);
  std::string receiver_error;
  std::atomic<bool> sender_done{false};
  std::atomic<bool> posted{false};
  try {
    world.run([&](ThreadTransport& t) {
      std::set<RequestId> done;
      if (t.rank() == 0) {
        while (!posted.load(std::memory_order_acquire)) std::this_thread::yield();
        wait_all(t, {t.isend(1, {1, 1}, data)}, done);
        sender_done.store(true);
        return;
      }
      const auto add = [&](std::span<const std::byte> /*part*/, std::size_t offset) {
        if (offset == size / 2) throw std::runtime_error("part at the middle refused");
      };
      const RequestId id = t.irecv_reduce(0, {1, 1}, size, ReduceInto::by_parts(add, 8));
      posted.store(true, std::memory_order_release);
      try {
        wait_all(t, {id}, done);
      } catch (const std::exception& e) {
        receiver_error = e.what();
      }
    });
  } catch (const std::exception&) {  // the world's own report of the receiver's failure
  }
  EXPECT_TRUE(sender_done.load());
  EXPECT_NE(receiver_error.find("part at the middle refused"), std::string::npos) << receiver_error;
}

// A combine step that throws an exception with an empty message, shared (2 MiB) or not
// (8 bytes), still fails the receiver: a failure is not told by its text.
TEST(ThreadSharedCopies, AFailureWithAnEmptyMessageStillFails) {
  for (const std::size_t size : {std::size_t{8}, std::size_t{2} << 20}) {
    FabricWorld world(2, true, milliseconds(5000));
    const Bytes data = pattern(size, 1);
    bool receiver_failed = false;
    try {
      world.run([&](ThreadTransport& t) {
        std::set<RequestId> done;
        if (t.rank() == 0) {
          wait_all(t, {t.isend(1, {1, 1}, data)}, done);
          return;
        }
        const auto refuse = [](std::span<const std::byte> /*part*/, std::size_t /*offset*/) {
          throw std::runtime_error("");
        };
        const RequestId id = t.irecv_reduce(0, {1, 1}, size, ReduceInto::by_parts(refuse, 8));
        try {
          wait_all(t, {id}, done);
        } catch (const std::exception&) {
          receiver_failed = true;
        }
      });
    } catch (const std::exception&) {  // the world's own report of the receiver's failure
    }
    EXPECT_TRUE(receiver_failed) << size << " bytes";
  }
}

// Where ranks do not spin (more ranks than CPUs: a waiting peer has no CPU to help with),
// nothing is offered.
TEST(ThreadSharedCopies, NotWhereRanksDoNotSpin) {
  FabricWorld world(2, false);
  for (std::uint32_t epoch = 1; epoch <= 10; ++epoch) {
    ASSERT_TRUE(one_large_message(world, std::size_t{1} << 20, epoch, Receiver::kWaiting));
    ASSERT_TRUE(one_large_message(world, std::size_t{1} << 20, epoch + 100, Receiver::kBusy));
  }
  EXPECT_EQ(world.fabric().copies_helped(0) + world.fabric().copies_helped(1), 0U);
}

}  // namespace
}  // namespace optcoll
