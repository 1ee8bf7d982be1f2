// SPDX-License-Identifier: Apache-2.0
// File: the transport conformance test, parameterized over backends: matching by (epoch,
// seq) whatever the posting order, zero-byte messages, many pairs at once, receive-reduce
// with either side first, size mismatches, timeouts and cancellation. Adding a backend
// (MPI, ...) is one entry in backends().
#include "optcoll/exec/transport.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"

namespace optcoll {
namespace {

using std::chrono::milliseconds;
using testing::load;
using testing::store;

// Runs fn on every rank of a p-rank world of the backend; throws like ThreadWorld::run.
using RunFn =
    std::function<void(Rank p, milliseconds timeout, const std::function<void(Transport&)>& fn)>;

struct Backend {
  std::string name;
  RunFn run;
};
void PrintTo(const Backend& backend, std::ostream* os) { *os << backend.name; }

void run_threads(Rank p, milliseconds timeout, const std::function<void(Transport&)>& fn) {
  ThreadWorld world(p, WorldOptions{timeout, RankExecution::kThreads});
  world.run(fn);
}

// The thread transport seen through a wrapper that does not override irecv_reduce(), so
// that the conformance tests also cover Transport's default (staged) receive-reduce.
using DefaultReduceTransport = testing::ForwardingTransport;

void run_threads_default_reduce(Rank p, milliseconds timeout,
                                const std::function<void(Transport&)>& fn) {
  ThreadWorld world(p, WorldOptions{timeout, RankExecution::kThreads});
  world.run([&](Transport& inner) {
    DefaultReduceTransport wrapped(inner);
    fn(wrapped);
  });
}

// The ranks as fibers on two workers (a test whose ranks spin on a flag for each other
// needs the second worker; fibers.h).
void run_fibers(Rank p, milliseconds timeout, const std::function<void(Transport&)>& fn) {
  ThreadWorld world(p, WorldOptions{timeout, RankExecution::kFibers, 2});
  world.run(fn);
}

std::vector<Backend> backends() {
  return {{"threads", run_threads},
          {"threads_default_reduce", run_threads_default_reduce},
          {"fibers", run_fibers}};
}

// Collects one rank's completions: wait_some() reports every request that completed, not
// only the ones a particular wait is about, so nothing it returns may be dropped.
class Waiter {
 public:
  explicit Waiter(Transport& t) : t_(t) {}
  // Returns once every id in `ids` has completed; throws on a timeout.
  void wait(const std::vector<RequestId>& ids, milliseconds timeout = milliseconds(20000)) {
    for (const RequestId id : ids) {
      while (done_.count(id) == 0) {
        const auto done = t_.wait_some(timeout);
        if (done.empty()) throw std::runtime_error("Waiter::wait timed out");
        done_.insert(done.begin(), done.end());
      }
    }
  }

 private:
  Transport& t_;
  std::set<RequestId> done_;
};

using Bytes = std::vector<std::byte>;

// `n` bytes that depend on (from, to, seq).
Bytes payload(Rank from, Rank to, std::int32_t seq, std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = static_cast<std::byte>(
        testing::mix(from * 1000 + to, seq * 100000 + static_cast<Count>(i)));
  }
  return b;
}

class TransportConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void run(Rank p, const std::function<void(Transport&)>& fn,
           milliseconds timeout = milliseconds(20000)) {
    GetParam().run(p, timeout, fn);
  }
};

TEST_P(TransportConformance, RankAndSize) {
  std::vector<int> seen(5, 0);
  run(5, [&](Transport& t) {
    EXPECT_EQ(t.size(), 5);
    seen[static_cast<std::size_t>(t.rank())] += 1;  // distinct slots: no race
  });
  EXPECT_EQ(seen, (std::vector<int>{1, 1, 1, 1, 1}));
}

// Receives posted in the opposite order of the sends still match by seq, whichever side
// posts first.
TEST_P(TransportConformance, OutOfOrderPostingMatchesBySeq) {
  constexpr int kMessages = 8;
  for (const bool receiver_first : {false, true}) {
    std::vector<Bytes> received(kMessages);
    run(2, [&](Transport& t) {
      Waiter w(t);
      const MsgKey ready{0, 1000};
      if (t.rank() == 1) {
        std::vector<RequestId> ids;
        for (int k = kMessages - 1; k >= 0; --k) {  // reverse order
          received[static_cast<std::size_t>(k)].assign(16 + static_cast<std::size_t>(k),
                                                       std::byte{0});
          ids.push_back(t.irecv(0, MsgKey{0, k}, received[static_cast<std::size_t>(k)]));
        }
        if (receiver_first) w.wait({t.isend(0, ready, {})});
        w.wait(ids);
      } else {
        if (receiver_first) {
          Bytes none;
          w.wait({t.irecv(1, ready, none)});
        }
        std::vector<Bytes> data;
        for (int k = 0; k < kMessages; ++k)
          data.push_back(payload(0, 1, k, 16 + static_cast<std::size_t>(k)));
        std::vector<RequestId> ids;
        for (int k = 0; k < kMessages; ++k)
          ids.push_back(t.isend(1, MsgKey{0, k}, data[static_cast<std::size_t>(k)]));
        w.wait(ids);
      }
    });
    for (int k = 0; k < kMessages; ++k) {
      EXPECT_EQ(received[static_cast<std::size_t>(k)],
                payload(0, 1, k, 16 + static_cast<std::size_t>(k)))
          << "seq " << k << " receiver_first " << receiver_first;
    }
  }
}

// The epoch is part of the key: the same seq in two epochs are two different messages.
TEST_P(TransportConformance, EpochIsPartOfTheKey) {
  Bytes first(8);
  Bytes second(8);
  run(2, [&](Transport& t) {
    Waiter w(t);
    if (t.rank() == 0) {
      const Bytes a = payload(0, 1, 1, 8);
      const Bytes b = payload(0, 1, 2, 8);
      w.wait({t.isend(1, MsgKey{1, 0}, a), t.isend(1, MsgKey{2, 0}, b)});
    } else {
      const RequestId later = t.irecv(0, MsgKey{2, 0}, second);
      const RequestId earlier = t.irecv(0, MsgKey{1, 0}, first);
      w.wait({later, earlier});
    }
  });
  EXPECT_EQ(first, payload(0, 1, 1, 8));
  EXPECT_EQ(second, payload(0, 1, 2, 8));
}

TEST_P(TransportConformance, ZeroByteMessagesComplete) {
  constexpr Rank kRanks = 4;
  std::vector<Bytes> after(kRanks);
  run(kRanks, [&](Transport& t) {
    Waiter w(t);
    const Rank me = t.rank();
    std::vector<RequestId> ids;
    Bytes sink;  // empty
    std::vector<Bytes> tails(kRanks);
    for (Rank peer = 0; peer < kRanks; ++peer) {
      if (peer == me) continue;
      // A zero-byte message, then a real one on the same pair.
      ids.push_back(t.isend(peer, MsgKey{0, 0}, {}));
      ids.push_back(t.irecv(peer, MsgKey{0, 0}, sink));
      tails[static_cast<std::size_t>(peer)].resize(3);
      ids.push_back(t.irecv(peer, MsgKey{0, 1}, tails[static_cast<std::size_t>(peer)]));
    }
    std::vector<Bytes> out(kRanks);
    for (Rank peer = 0; peer < kRanks; ++peer) {
      if (peer == me) continue;
      out[static_cast<std::size_t>(peer)] = payload(me, peer, 1, 3);
      ids.push_back(t.isend(peer, MsgKey{0, 1}, out[static_cast<std::size_t>(peer)]));
    }
    w.wait(ids);
    for (Rank peer = 0; peer < kRanks; ++peer) {
      if (peer == me) continue;
      EXPECT_EQ(tails[static_cast<std::size_t>(peer)], payload(peer, me, 1, 3));
    }
  });
}

// Every rank exchanges several messages of different sizes with every other rank, all
// posted before any wait.
TEST_P(TransportConformance, ManyPairsAtOnce) {
  constexpr Rank kRanks = 8;
  constexpr int kPerPair = 4;
  std::vector<int> wrong(kRanks, 0);
  run(kRanks, [&](Transport& t) {
    Waiter w(t);
    const Rank me = t.rank();
    auto size_of = [](Rank from, Rank to, int k) {
      return static_cast<std::size_t>(1 + (from * 7 + to * 3 + k * 11) % 40) * 64;
    };
    std::vector<Bytes> out;
    std::vector<Bytes> in;
    std::vector<std::tuple<Rank, int>> in_from;
    out.reserve(kRanks * kPerPair);
    in.reserve(kRanks * kPerPair);
    std::vector<RequestId> ids;
    for (int k = 0; k < kPerPair; ++k) {
      for (Rank d = 1; d < kRanks; ++d) {
        const Rank to = (me + d) % kRanks;
        const Rank from = (me + kRanks - d) % kRanks;
        out.push_back(payload(me, to, k, size_of(me, to, k)));
        ids.push_back(t.isend(to, MsgKey{3, k}, out.back()));
        in.emplace_back(size_of(from, me, k));
        in_from.emplace_back(from, k);
        ids.push_back(t.irecv(from, MsgKey{3, k}, in.back()));
      }
    }
    w.wait(ids);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto [from, k] = in_from[i];
      if (in[i] != payload(from, me, k, size_of(from, me, k)))
        ++wrong[static_cast<std::size_t>(me)];
    }
  });
  EXPECT_EQ(wrong, std::vector<int>(kRanks, 0));
}

// irecv_reduce combines incoming data into the destination, whether the send was posted
// before the receive or after.
constexpr std::size_t kElems = 100;

TEST_P(TransportConformance, ReceiveReduceEitherSideFirst) {
  for (const bool receiver_first : {false, true}) {
    std::vector<std::int32_t> dst(kElems);
    run(2, [&](Transport& t) {
      Waiter w(t);
      const MsgKey ready{0, 99};
      if (t.rank() == 1) {
        for (std::size_t i = 0; i < kElems; ++i) dst[i] = static_cast<std::int32_t>(i);
        const RequestId id =
            t.irecv_reduce(0, MsgKey{0, 0}, kElems * sizeof(std::int32_t),
                           [&dst](std::span<const std::byte> incoming) {
                             for (std::size_t i = 0; i < kElems; ++i) {
                               // dst = 10 * incoming + dst: an order-revealing combine
                               dst[i] = 10 * load<std::int32_t>(incoming.data() + i * 4) + dst[i];
                             }
                           });
        if (receiver_first) w.wait({t.isend(0, ready, {})});
        w.wait({id});
      } else {
        std::vector<std::byte> data(kElems * sizeof(std::int32_t));
        for (std::size_t i = 0; i < kElems; ++i) {
          store<std::int32_t>(data.data() + i * 4, static_cast<std::int32_t>(1000 + i));
        }
        if (receiver_first) {
          Bytes none;
          w.wait({t.irecv(1, ready, none)});
        }
        w.wait({t.isend(1, MsgKey{0, 0}, data)});
      }
    });
    for (std::size_t i = 0; i < kElems; ++i) {
      ASSERT_EQ(dst[i], static_cast<std::int32_t>(10 * (1000 + i) + i))
          << "element " << i << " receiver_first " << receiver_first;
    }
  }
}

// Large messages to a receiver that is asleep in wait_some: the data arrives intact, and a
// receive-reduce's combine step runs on the receiving rank (the thread backend hands such
// matches over so that receivers work in parallel). "On the receiving rank" is "on its
// stack": a rank that is a fiber may move between worker threads while it waits, so its
// thread id is no identity; stacks (threads' and fibers', 8 MiB each) lie megabytes apart,
// and a frame of the combine step on the rank's own stack lies within its wait's depth.
TEST_P(TransportConformance, LargeMessagesToAnIdleReceiver) {
  constexpr std::size_t kLarge = std::size_t{1} << 20;  // bytes
  Bytes plain(kLarge);
  std::vector<std::int64_t> sums(kLarge / 8);
  std::uintptr_t receiver_stack = 0;
  std::uintptr_t combine_stack = 0;
  run(2, [&](Transport& t) {
    Waiter w(t);
    const MsgKey ready{0, 7};
    if (t.rank() == 1) {
      const int marker = 0;
      receiver_stack = reinterpret_cast<std::uintptr_t>(&marker);
      for (std::size_t i = 0; i < sums.size(); ++i) sums[i] = static_cast<std::int64_t>(i);
      const RequestId a = t.irecv(0, MsgKey{0, 0}, plain);
      const RequestId b =
          t.irecv_reduce(0, MsgKey{0, 1}, kLarge, [&](std::span<const std::byte> incoming) {
            const int here = 0;
            combine_stack = reinterpret_cast<std::uintptr_t>(&here);
            for (std::size_t i = 0; i < sums.size(); ++i) {
              sums[i] += load<std::int64_t>(incoming.data() + i * 8);
            }
          });
      w.wait({t.isend(0, ready, {})});
      w.wait({b, a});  // asleep here when the data comes
    } else {
      Bytes none;
      w.wait({t.irecv(1, ready, none)});
      const Bytes data = payload(0, 1, 0, kLarge);
      std::vector<std::byte> addends(kLarge);
      for (std::size_t i = 0; i < kLarge / 8; ++i) {
        store<std::int64_t>(addends.data() + i * 8, static_cast<std::int64_t>(3 * i));
      }
      // One message at a time, each after the receiver has had ample time to fall asleep
      // (while it works on one message it is not idle).
      for (const MsgKey key : {MsgKey{0, 1}, MsgKey{0, 0}}) {
        std::this_thread::sleep_for(milliseconds(100));
        w.wait({t.isend(1, key,
                        key.seq == 1 ? std::span<const std::byte>(addends)
                                     : std::span<const std::byte>(data))});
      }
    }
  });
  EXPECT_EQ(plain, payload(0, 1, 0, kLarge));
  for (std::size_t i = 0; i < sums.size(); ++i) {
    ASSERT_EQ(sums[i], static_cast<std::int64_t>(4 * i)) << "element " << i;
  }
  ASSERT_NE(combine_stack, 0U);
  const std::uintptr_t distance = combine_stack > receiver_stack ? combine_stack - receiver_stack
                                                                 : receiver_stack - combine_stack;
  EXPECT_LT(distance, std::uintptr_t{1} << 20) << "the combine step ran on another stack";
}

// Above the eager limit a send waits for its receive, and a size mismatch fails both sides.
TEST_P(TransportConformance, SizeMismatchFailsBothRanksNamingBothSizes) {
  constexpr std::size_t kSent = threads::ThreadTransport::kEagerBytes + 24;
  constexpr std::size_t kExpected = threads::ThreadTransport::kEagerBytes + 40;
  std::vector<std::string> errors(2);
  try {
    run(2, [&](Transport& t) {
      Waiter w(t);
      try {
        if (t.rank() == 0) {
          const Bytes data(kSent);
          w.wait({t.isend(1, MsgKey{0, 5}, data)});
        } else {
          Bytes data(kExpected);
          w.wait({t.irecv(0, MsgKey{0, 5}, data)});
        }
      } catch (const TransportError& e) {
        errors[static_cast<std::size_t>(t.rank())] = e.what();
        throw;
      }
    });
    FAIL() << "a size mismatch must fail the run";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 2 ranks failed"), std::string::npos) << e.what();
  }
  for (const auto& error : errors) {
    EXPECT_NE(error.find(fmt::format("{} bytes", kSent)), std::string::npos) << error;
    EXPECT_NE(error.find(fmt::format("{} bytes", kExpected)), std::string::npos) << error;
    EXPECT_NE(error.find("seq 5"), std::string::npos) << error;
  }
}

// A small send posted before its receive is eager: it completes at once, before the
// receiver has even posted (the receiver is held back until the send has completed), and
// the data arrive intact; the sender's buffer may be reused at once.
TEST_P(TransportConformance, SmallSendsCompleteBeforeTheirReceive) {
  Bytes got(100);
  std::atomic<bool> send_done{false};
  run(2, [&](Transport& t) {
    Waiter w(t);
    if (t.rank() == 0) {
      Bytes data = payload(0, 1, 3, 100);
      w.wait({t.isend(1, MsgKey{2, 3}, data)}, milliseconds(5000));
      send_done.store(true);
      std::fill(data.begin(), data.end(), std::byte{0});  // the message is the copy
    } else {
      while (!send_done.load()) std::this_thread::yield();
      w.wait({t.irecv(0, MsgKey{2, 3}, got)});
    }
  });
  EXPECT_EQ(got, payload(0, 1, 3, 100));
}

// An eager message of the wrong size fails its receiver, naming both sizes; the sender,
// whose send completed when it was posted, has moved on.
TEST_P(TransportConformance, EagerSizeMismatchFailsTheReceiverNamingBothSizes) {
  std::string error;
  std::atomic<bool> send_done{false};
  try {
    run(2, [&](Transport& t) {
      Waiter w(t);
      if (t.rank() == 0) {
        const Bytes data(24);
        w.wait({t.isend(1, MsgKey{0, 5}, data)}, milliseconds(5000));
        send_done.store(true);
      } else {
        while (!send_done.load()) std::this_thread::yield();
        Bytes data(40);
        try {
          w.wait({t.irecv(0, MsgKey{0, 5}, data)});
        } catch (const TransportError& e) {
          error = e.what();
          throw;
        }
      }
    });
    FAIL() << "a size mismatch must fail the run";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 first"), std::string::npos) << e.what();
  }
  EXPECT_NE(error.find("24 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("40 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("seq 5"), std::string::npos) << error;
}

// Eager copies are bounded per ordered pair: a rank that only sends small messages runs
// ahead of its receiver by at most kEagerMailboxMessages of them, plus kRingSlots when the
// world uses rings (ranks with CPUs of their own; thread_rings_test.cc checks each mode
// exactly), then waits.
TEST_P(TransportConformance, EagerSendsAreFlowControlled) {
  constexpr int kMailbox = static_cast<int>(threads::ThreadTransport::kEagerMailboxMessages);
  constexpr int kRing = static_cast<int>(threads::ThreadTransport::kRingSlots);
  constexpr int kMessages = kMailbox + kRing + 8;
  std::atomic<int> completed_before_receiver{0};
  std::atomic<bool> receiver_started{false};
  std::vector<std::int32_t> got(kMessages, -1);
  run(2, [&](Transport& t) {
    Waiter w(t);
    if (t.rank() == 0) {
      std::vector<std::int32_t> values(kMessages);
      std::vector<RequestId> ids;
      for (int i = 0; i < kMessages; ++i) {
        values[static_cast<std::size_t>(i)] = 7 * i;
        ids.push_back(t.isend(1, MsgKey{0, i},
                              std::as_bytes(std::span(&values[static_cast<std::size_t>(i)], 1))));
      }
      // Give the sends every chance to complete before the receiver starts.
      for (const RequestId id : ids) {
        try {
          w.wait({id}, milliseconds(50));
        } catch (const std::runtime_error&) {
          break;  // this one waits for its receive
        }
        if (!receiver_started.load()) completed_before_receiver.fetch_add(1);
      }
      receiver_started.store(true);
      w.wait(ids);
    } else {
      while (!receiver_started.load()) std::this_thread::yield();
      std::vector<RequestId> ids;
      for (int i = 0; i < kMessages; ++i) {
        ids.push_back(
            t.irecv(0, MsgKey{0, i},
                    std::as_writable_bytes(std::span(&got[static_cast<std::size_t>(i)], 1))));
      }
      w.wait(ids);
    }
  });
  const int ahead = completed_before_receiver.load();
  EXPECT_TRUE(ahead == kMailbox || ahead == kMailbox + kRing) << ahead;
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], 7 * i) << i;
}

// wait_some returns empty after its timeout; cancelled requests are never written to, and
// the world runs normally afterwards.
TEST_P(TransportConformance, TimeoutAndCancel) {
  Bytes target(threads::ThreadTransport::kEagerBytes + 16, std::byte{0x11});
  run(2, [&](Transport& t) {
    Waiter w(t);
    const MsgKey cancelled{0, 1};
    const MsgKey handshake{0, 2};
    if (t.rank() == 1) {
      const RequestId id = t.irecv(0, cancelled, target);
      const auto start = std::chrono::steady_clock::now();
      EXPECT_TRUE(t.wait_some(milliseconds(30)).empty());
      EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(25));
      t.cancel(std::vector<RequestId>{id});
      w.wait({t.isend(0, handshake, {})});
    } else {
      Bytes none;
      w.wait({t.irecv(1, handshake, none)});
      // Above the eager limit, so that it waits for a receive (nobody receives it any more).
      const Bytes data(threads::ThreadTransport::kEagerBytes + 16, std::byte{0x77});
      const RequestId id = t.isend(1, cancelled, data);
      EXPECT_TRUE(t.wait_some(milliseconds(20)).empty());
      t.cancel(std::vector<RequestId>{id});
    }
  });
  EXPECT_EQ(target, Bytes(threads::ThreadTransport::kEagerBytes + 16, std::byte{0x11}));
  // A fresh run on a fresh world of the backend still works.
  Bytes got(4);
  run(2, [&](Transport& t) {
    Waiter w(t);
    if (t.rank() == 0) {
      const Bytes data = payload(0, 1, 1, 4);
      w.wait({t.isend(1, MsgKey{0, 1}, data)});
    } else {
      w.wait({t.irecv(0, MsgKey{0, 1}, got)});
    }
  });
  EXPECT_EQ(got, payload(0, 1, 1, 4));
}

// Transport's default receive-reduce (staged in a buffer it keeps for reuse) under a
// backend whose request ids decrease: the ids are mapped to kIdBase - id both ways.
class DecreasingIdTransport final : public testing::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  static constexpr RequestId kIdBase = RequestId{1} << 40;
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    return kIdBase - ForwardingTransport::isend(to, key, data);
  }
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override {
    return kIdBase - ForwardingTransport::irecv(from, key, data);
  }

 protected:
  void do_wait_some(milliseconds timeout, std::vector<RequestId>& done) override {
    const std::size_t before = done.size();
    ForwardingTransport::do_wait_some(timeout, done);
    for (std::size_t i = before; i < done.size(); ++i) done[i] = kIdBase - done[i];
  }
  void do_cancel(std::span<const RequestId> ids) override {
    std::vector<RequestId> inner(ids.begin(), ids.end());
    for (RequestId& id : inner) id = kIdBase - id;
    ForwardingTransport::do_cancel(inner);
  }
};

// Rounds of receive-reduces of growing and shrinking sizes on one transport, many in
// flight at once, each combined into its own destination exactly once with its own message
// (later rounds reuse the buffers of earlier ones); in the last round one is cancelled
// before its message is sent, and its destination stays untouched.
TEST(DefaultReceiveReduce, StagedBuffersAreReusedAndMatchedInAnyIdOrder) {
  constexpr int kRounds = 4;
  constexpr int kPerRound = 40;  // more than the spare buffers kept
  constexpr int kCancelled = 5;
  const auto size_of = [](int round, int k) {
    return static_cast<std::size_t>(4 * (1 + (k * 7 + round * 13) % 50));
  };
  const auto value = [](int round, int k, std::size_t i) {
    return static_cast<std::int32_t>(round * 100000 + k * 1000 + static_cast<int>(i));
  };
  for (const bool decreasing_ids : {false, true}) {
    std::vector<std::vector<std::int32_t>> dst(kRounds * kPerRound);
    std::vector<int> combined(kRounds * kPerRound, 0);
    ThreadWorld world(2, WorldOptions{milliseconds(20000)});
    world.run([&](Transport& inner) {
      testing::ForwardingTransport forwarding(inner);
      DecreasingIdTransport decreasing(inner);
      Transport& t = decreasing_ids ? static_cast<Transport&>(decreasing) : forwarding;
      Waiter w(t);
      for (int round = 0; round < kRounds; ++round) {
        const bool cancel_one = round == kRounds - 1;
        const MsgKey go{static_cast<std::uint32_t>(round), 999};
        if (t.rank() == 1) {
          std::vector<RequestId> ids;
          for (int k = 0; k < kPerRound; ++k) {
            const auto slot = static_cast<std::size_t>(round * kPerRound + k);
            dst[slot].assign(size_of(round, k) / 4, 1);
            ids.push_back(
                t.irecv_reduce(0, MsgKey{static_cast<std::uint32_t>(round), k}, size_of(round, k),
                               [&, slot](std::span<const std::byte> incoming) {
                                 ++combined[slot];
                                 for (std::size_t i = 0; i < dst[slot].size(); ++i) {
                                   dst[slot][i] += load<std::int32_t>(incoming.data() + 4 * i);
                                 }
                               }));
          }
          if (cancel_one) {
            t.cancel(std::vector<RequestId>{ids[kCancelled]});
            ids.erase(ids.begin() + kCancelled);
          }
          w.wait({t.isend(0, go, {})});
          w.wait(ids);
        } else {
          Bytes none;
          w.wait({t.irecv(1, go, none)});
          std::vector<Bytes> data(kPerRound);
          std::vector<RequestId> ids;
          for (int k = kPerRound - 1; k >= 0; --k) {  // the reverse of the posting order
            if (cancel_one && k == kCancelled) continue;
            auto& bytes = data[static_cast<std::size_t>(k)];
            bytes.resize(size_of(round, k));
            for (std::size_t i = 0; i < bytes.size() / 4; ++i) {
              store<std::int32_t>(bytes.data() + 4 * i, value(round, k, i));
            }
            ids.push_back(t.isend(1, MsgKey{static_cast<std::uint32_t>(round), k}, bytes));
          }
          w.wait(ids);
        }
      }
    });
    for (int round = 0; round < kRounds; ++round) {
      for (int k = 0; k < kPerRound; ++k) {
        const auto slot = static_cast<std::size_t>(round * kPerRound + k);
        const std::string where = fmt::format("round {} message {}{}", round, k,
                                              decreasing_ids ? " (decreasing ids)" : "");
        if (round == kRounds - 1 && k == kCancelled) {
          EXPECT_EQ(combined[slot], 0) << where;
          EXPECT_EQ(dst[slot], std::vector<std::int32_t>(size_of(round, k) / 4, 1)) << where;
          continue;
        }
        ASSERT_EQ(combined[slot], 1) << where;
        for (std::size_t i = 0; i < dst[slot].size(); ++i) {
          ASSERT_EQ(dst[slot][i], value(round, k, i) + 1) << where << " element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TransportConformance, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<Backend>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
}  // namespace optcoll
