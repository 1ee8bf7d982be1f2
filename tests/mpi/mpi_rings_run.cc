// SPDX-License-Identifier: Apache-2.0
// File: the MPI transport's eager rings for small same-node messages (shm_rings.h), driven
// through MpiTransport's own calls under mpirun (ctest mpi_rings_*):
//
//   order      every ordered pair exchanges 200 messages of 0-1008 bytes (seq i, i * 5 %
//              1009 bytes, content from sender, receiver and i); each receiver posts its receives
//              one at a time in reverse seq order, so that its rings fill up with messages no
//              receive wants yet (set aside; the senders wait for room meanwhile) and the
//              later receives find them there. Every byte is checked, and every send completes.
//   same-key   rank 0 sends 150 messages with one key (seq 0) to every other rank, which
//              posts one receive before they are sent, 49 once they have come, then 100 one
//              after the other: they must get the messages in the order sent (as MPI matches
//              equal keys: the first receive posted gets the first message).
//   calls      counted calls (begin_call, as the C API numbers them): a message left behind
//              in call 1 never matches call 2's receive with the same seq.
//   mismatch-ring, mismatch-plain, mismatch-to-plain, mismatch-arena, mismatch-to-arena
//              rank 0 sends one message, rank 1 expects another size: both in a ring (16 B
//              against 8 B), a ring message where plain MPI was expected (100 B against
//              2000 B) and the reverse, and the same against the arena (100 B against 20000
//              B, both ways). Rank 1 must fail naming both sizes, well within the timeout.
//
// Prints "rings <mode> p=<p>: ok" (rank 0) when every rank saw what it should.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/model/error.h"

namespace {

using optcoll::MsgKey;
using optcoll::Rank;
using optcoll::RequestId;
using optcoll::mpi::MpiTransport;
using Clock = std::chrono::steady_clock;

constexpr auto kTimeout = std::chrono::milliseconds(5000);

// Message i of the order case: 0 to ShmRings::kPayloadBytes bytes.
std::size_t message_bytes(int i) {
  return static_cast<std::size_t>(i) * 5 % (optcoll::mpi::ShmRings::kPayloadBytes + 1);
}

std::byte content(Rank from, Rank to, int i, std::size_t k) {
  return static_cast<std::byte>((from * 31 + to * 17 + i * 7 + static_cast<int>(k) * 3) & 0xff);
}

// Waits until every id of `ids` has been reported by the transport; false on a timeout.
bool wait_for(MpiTransport& t, const std::vector<RequestId>& ids, std::vector<RequestId>& seen) {
  const auto deadline = Clock::now() + kTimeout;
  while (true) {
    bool all = true;
    for (const RequestId id : ids) {
      if (std::find(seen.begin(), seen.end(), id) == seen.end()) all = false;
    }
    if (all) return true;
    if (Clock::now() > deadline) return false;
    t.wait_some(std::chrono::milliseconds(100), seen);
  }
}

bool run_order(MpiTransport& t) {
  constexpr int kMessages = 200;
  const Rank me = t.rank();
  const Rank p = t.size();
  std::vector<std::vector<std::byte>> out;
  std::vector<RequestId> sends;
  std::vector<RequestId> seen;
  for (Rank to = 0; to < p; ++to) {
    if (to == me) continue;
    for (int i = 0; i < kMessages; ++i) {
      std::vector<std::byte> data(message_bytes(i));
      for (std::size_t k = 0; k < data.size(); ++k) data[k] = content(me, to, i, k);
      out.push_back(std::move(data));
      sends.push_back(t.isend(to, MsgKey{0, i}, out.back()));
    }
  }
  bool ok = true;
  for (Rank from = 0; from < p; ++from) {
    if (from == me) continue;
    for (int i = kMessages - 1; i >= 0; --i) {
      std::vector<std::byte> in(message_bytes(i), std::byte{0xee});
      const RequestId id = t.irecv(from, MsgKey{0, i}, in);
      if (!wait_for(t, {id}, seen)) {
        std::fprintf(stderr, "rank %d: message %d from rank %d never came\n", me, i, from);
        return false;
      }
      for (std::size_t k = 0; k < in.size(); ++k) ok = ok && in[k] == content(from, me, i, k);
    }
  }
  if (!wait_for(t, sends, seen)) {
    std::fprintf(stderr, "rank %d: not every send completed\n", me);
    return false;
  }
  if (!ok) std::fprintf(stderr, "rank %d: wrong bytes received\n", me);
  return ok;
}

bool run_same_key(MpiTransport& t) {
  constexpr int kMessages = 150;
  constexpr int kAtOnce = 50;
  const Rank me = t.rank();
  std::vector<RequestId> seen;
  std::vector<std::uint32_t> rounds(kMessages);
  std::vector<RequestId> sends;
  std::vector<std::uint32_t> got(kMessages, 999999);
  std::vector<RequestId> first;
  const auto receive = [&](int i) {
    return t.irecv(0, MsgKey{0, 0},
                   std::as_writable_bytes(std::span(&got[static_cast<std::size_t>(i)], 1)));
  };
  // The first receive is posted before any message is sent, the next 49 once they have come:
  // those must not take the message the first one is owed.
  if (me != 0) first.push_back(receive(0));
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    for (Rank to = 1; to < t.size(); ++to) {
      for (int i = 0; i < kMessages; ++i) {
        rounds[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i);
        sends.push_back(t.isend(to, MsgKey{0, 0},
                                std::as_bytes(std::span(&rounds[static_cast<std::size_t>(i)], 1))));
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) return wait_for(t, sends, seen);
  for (int i = 1; i < kAtOnce; ++i) first.push_back(receive(i));
  if (!wait_for(t, first, seen)) return false;
  for (int i = kAtOnce; i < kMessages; ++i) {
    if (!wait_for(t, {receive(i)}, seen)) return false;
  }
  for (int i = 0; i < kMessages; ++i) {
    if (got[static_cast<std::size_t>(i)] != static_cast<std::uint32_t>(i)) {
      std::fprintf(stderr, "rank %d: receive %d got message %u\n", me, i,
                   got[static_cast<std::size_t>(i)]);
      return false;
    }
  }
  return true;
}

bool run_calls(MpiTransport& t) {
  const Rank me = t.rank();
  std::vector<RequestId> seen;
  std::uint64_t left = 111;
  std::uint64_t second = 222;
  std::uint64_t got = 0;
  t.begin_call(1);
  if (me == 0) {
    // Call 1 leaves its message to rank 1 behind (rank 1 never receives it).
    if (!wait_for(t, {t.isend(1, MsgKey{0, 0}, std::as_bytes(std::span(&left, 1)))}, seen))
      return false;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t.begin_call(2);
  if (me == 0) {
    return wait_for(t, {t.isend(1, MsgKey{0, 0}, std::as_bytes(std::span(&second, 1)))}, seen);
  }
  if (me != 1) return true;
  if (!wait_for(t, {t.irecv(0, MsgKey{0, 0}, std::as_writable_bytes(std::span(&got, 1)))}, seen)) {
    return false;
  }
  if (got != second)
    std::fprintf(stderr, "rank 1: call 2 got %llu\n", static_cast<unsigned long long>(got));
  return got == second;
}

// Rank 0 sends `sent` bytes, rank 1 expects `expected`: rank 1 must fail naming both.
bool run_mismatch(MpiTransport& t, std::size_t sent, std::size_t expected) {
  const Rank me = t.rank();
  std::vector<RequestId> seen;
  if (me == 0) {
    std::vector<std::byte> data(sent, std::byte{1});
    const bool ok = wait_for(t, {t.isend(1, MsgKey{0, 3}, data)}, seen);
    MPI_Barrier(MPI_COMM_WORLD);  // keeps `data` until rank 1 is done with it
    return ok;
  }
  bool ok = me != 1;
  if (me == 1) {
    std::vector<std::byte> in(expected);
    const auto start = Clock::now();
    try {
      wait_for(t, {t.irecv(0, MsgKey{0, 3}, in)}, seen);
      std::fprintf(stderr, "rank 1: no error for %zu bytes sent, %zu expected\n", sent, expected);
    } catch (const optcoll::TransportError& e) {
      const std::string text = e.what();
      const std::string want =
          "has " + std::to_string(sent) + " bytes, expected " + std::to_string(expected);
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      ok = text.find(want) != std::string::npos && took < std::chrono::milliseconds(2000);
      std::fprintf(stderr, "rank 1: %s (after %lld ms)%s\n", text.c_str(),
                   static_cast<long long>(took.count()), ok ? "" : " -> WRONG");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return ok;
}

bool run(const std::string& mode, MpiTransport& t) {
  if (mode == "order") return run_order(t);
  if (mode == "same-key") return run_same_key(t);
  if (mode == "calls") return run_calls(t);
  if (mode == "mismatch-ring") return run_mismatch(t, 16, 8);
  if (mode == "mismatch-plain") return run_mismatch(t, 100, 2000);
  if (mode == "mismatch-to-plain") return run_mismatch(t, 2000, 100);
  if (mode == "mismatch-arena") return run_mismatch(t, 100, 20000);
  if (mode == "mismatch-to-arena") return run_mismatch(t, 20000, 100);
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "order";
  int ok = 0;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    try {
      // Rings also where the ranks outnumber the CPUs (4 ranks on a 2-core machine).
      MpiTransport::Options options;
      options.rings = MpiTransport::Options::Rings::kAlways;
      MpiTransport transport(MPI_COMM_WORLD, options);
      ok = run(mode, transport) ? 1 : 0;
      MPI_Barrier(MPI_COMM_WORLD);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
    }
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("rings %s p=%d: %s\n", mode.c_str(), size, all == 1 ? "ok" : "FAILED");
  MPI_Finalize();
  return all == 1 ? 0 : 1;
}
