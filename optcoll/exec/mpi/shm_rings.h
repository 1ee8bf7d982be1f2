// SPDX-License-Identifier: Apache-2.0
// File: the eager rings of the MPI backend's same-node channel (mpi_transport.h, "Small
// same-node messages"): a message of at most kPayloadBytes between two ranks of one node goes
// through shared memory without any MPI call, where MPI's point-to-point costs as much as a
// whole MPI_Allreduce of Open MPI (callgrind, 8 B at p = 2: MPI_Isend, MPI_Irecv and the
// tests that complete them, about 1,750 instructions per call against Open MPI's 2,000 for
// its whole allreduce).
//
// Every ordered pair (sender, receiver) of a node has a ring of kSlots slots of kSlotBytes
// in the sender's arena (ShmArena), which only the sender writes; the receiver's count of
// the messages it has taken from the ring (its head) lies in the receiver's arena, which
// only the receiver writes. So each rank writes its own memory only. Message k of a pair
// (counted from the rings' creation) goes to slot k mod kSlots and is published by stamping
// the slot with k + 1 (release) after its tag, size and bytes: the stamp, the tag, the size
// and the first 48 bytes share one cache line. The receiver reads a message once its stamp
// is there (acquire) and may consume the messages in any order (its receives match by tag,
// not by arrival); the slots go back to the sender in order: the head counts the messages
// up to the first one not consumed, stored with release. A sender whose ring is full waits
// for room (try_send fails): as with MPI's own eager buffers, a sender runs ahead of its
// receiver by a bounded number of small messages. Positions keep counting for the rings'
// lifetime, so an old stamp never passes for a new one.
//
// What a message means (matching by tag, sizes, failures) is the transport's business; the
// rings only carry (tag, bytes) in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include "optcoll/exec/mpi/shm_arena.h"
#include "optcoll/model/placement.h"
#include "optcoll/model/types.h"

namespace optcoll::mpi {

class ShmRings {
 public:
  static constexpr std::size_t kSlots = 64;
  // Messages of up to 1008 bytes: a small one touches the first cache line of its slot only,
  // and up to 512 bytes (Open MPI sends up to 4 KiB eagerly) a ring message costs a fraction
  // of MPI's point-to-point (p = 2 allreduce of 512 B: 4,900 instructions per call through
  // MPI).
  static constexpr std::size_t kSlotBytes = 1024;
  static constexpr std::size_t kPayloadBytes = kSlotBytes - 16;  // after stamp, tag and size
  // A node with more ranks than this gets no rings (they would take kSlots * kSlotBytes *
  // ranks of every rank's arena: 4 MiB at this limit).
  static constexpr int kMaxNodeRanks = 64;

  // A message as it lies in its slot (read-only for the receiver).
  struct Message {
    int tag = 0;
    std::span<const std::byte> data;
  };

  // Collective over `comm` (the communicator `placement` and `rank` describe, `arena` was
  // made on). Unless `wanted` is false, allocates this rank's rings and heads in `arena`;
  // learns where its node peers' are. Returns nullptr when no pair of ranks can use rings
  // (every rank then gets nullptr, or none does); a pair can when both ranks have their
  // rings (`to` says which).
  static std::unique_ptr<ShmRings> create(ShmArena& arena, MPI_Comm comm,
                                          const Placement& placement, Rank rank, bool wanted);
  ShmRings(const ShmRings&) = delete;
  ShmRings& operator=(const ShmRings&) = delete;
  ~ShmRings() = default;  // the memory goes with the arena

  // Whether messages to and from `peer` can go through rings.
  bool to(Rank peer) const {
    return peer >= 0 && static_cast<std::size_t>(peer) < pair_of_.size() &&
           pair_of_[static_cast<std::size_t>(peer)] >= 0;
  }
  // The ranks this one has rings with, in rank order.
  const std::vector<Rank>& peers() const { return peers_; }

  // Publishes `data` (at most kPayloadBytes) with `tag` to `peer` (to(peer)); false when the
  // ring is full (nothing written).
  bool try_send(Rank peer, int tag, std::span<const std::byte> data);
  // Receiver side, messages from `peer` by position (counted from the rings' creation): the
  // first not consumed, and whether the one at `position` (first(peer) <= position <
  // first(peer) + kSlots) has arrived (its view is valid until it is consumed), or was
  // consumed (any position before first(peer) was).
  std::uint64_t first(Rank peer) const { return pair(peer).taken; }
  bool peek(Rank peer, std::uint64_t position, Message& message) const;
  bool consumed(Rank peer, std::uint64_t position) const {
    const Pair& p = pair(peer);
    return position < p.taken || ((p.consumed >> (position - p.taken)) & 1U) != 0;
  }
  // Marks the message at `position` consumed; the slots up to the first message not
  // consumed go back to the sender.
  void consume(Rank peer, std::uint64_t position);

 private:
  struct Slot;
  struct Head;
  // Per peer: where its rings and heads lie and how far each side has come.
  struct Pair {
    Slot* out = nullptr;             // this rank's ring to the peer (own arena)
    const Slot* in = nullptr;        // the peer's ring to this rank (the peer's arena)
    Head* in_head = nullptr;         // this rank's head of `in` (own arena)
    const Head* out_head = nullptr;  // the peer's head of `out` (the peer's arena)
    std::uint64_t sent = 0;          // messages published to `out`
    std::uint64_t free_until = 0;    // `sent` may grow to this without looking at out_head
    std::uint64_t taken = 0;         // messages of `in` up to the first not consumed
    std::uint64_t consumed = 0;      // bit k: message taken + k is consumed
  };
  static_assert(kSlots <= 64, "Pair::consumed has a bit per slot");
  ShmRings() = default;
  const Pair& pair(Rank peer) const {
    return pairs_[static_cast<std::size_t>(pair_of_[static_cast<std::size_t>(peer)])];
  }

  std::vector<int> pair_of_;  // per rank of the communicator: index into pairs_, or -1
  std::vector<Pair> pairs_;
  std::vector<Rank> peers_;
};

}  // namespace optcoll::mpi
