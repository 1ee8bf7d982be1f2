// SPDX-License-Identifier: Apache-2.0
// File: the same-node eager rings (shm_rings.h).
#include "optcoll/exec/mpi/shm_rings.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>

#include "optcoll/model/error.h"

namespace optcoll::mpi {

constexpr std::size_t kLine = 64;

struct ShmRings::Slot {
  std::atomic<std::uint64_t> stamp;  // position + 1 of the message in it (0: none yet)
  std::int32_t tag;
  std::uint32_t bytes;
  std::byte payload[kPayloadBytes];
};

struct alignas(kLine) ShmRings::Head {
  std::atomic<std::uint64_t> taken;  // messages the owner has taken from the ring
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the shared stamps and heads must be plain lock-free 64-bit words");

namespace {

constexpr std::size_t kRingBytes = ShmRings::kSlots * ShmRings::kSlotBytes;

}  // namespace

std::unique_ptr<ShmRings> ShmRings::create(ShmArena& arena, MPI_Comm comm,
                                           const Placement& placement, Rank rank, bool wanted) {
  static_assert(sizeof(Slot) == kSlotBytes && sizeof(Head) == kLine);
  const auto size = placement.node_of.size();
  const std::int32_t node = placement.node_of[static_cast<std::size_t>(rank)];
  // Each rank's index among the ranks of its node, and the node's size.
  std::vector<std::size_t> local(size, 0);
  std::size_t node_ranks = 0;
  for (std::size_t r = 0; r < size; ++r) {
    if (placement.node_of[r] == node) local[r] = node_ranks++;
  }
  // This rank's block: the heads of its incoming rings (one line each), then its rings to
  // the node's ranks (indexed by their local index; its own is unused).
  const std::size_t heads_bytes = node_ranks * kLine;
  // (block, offset of the first cache line in its payload; -1: no rings).
  std::int64_t mine[2] = {-1, 0};
  std::byte* base = nullptr;
  if (wanted && node_ranks > 1 && node_ranks <= static_cast<std::size_t>(kMaxNodeRanks)) {
    if (const auto block = arena.allocate(kLine + heads_bytes + node_ranks * kRingBytes)) {
      // The window's segments need not start on a cache line (Open MPI's did not).
      const auto at = reinterpret_cast<std::uintptr_t>(arena.payload(*block));
      const std::size_t offset = (kLine - at % kLine) % kLine;
      base = arena.payload(*block) + offset;
      for (std::size_t i = 0; i < node_ranks; ++i) {
        new (base + i * kLine) Head{};
        for (std::size_t s = 0; s < kSlots; ++s) {
          new (base + heads_bytes + i * kRingBytes + s * kSlotBytes) Slot{};
        }
      }
      mine[0] = static_cast<std::int64_t>(*block);
      mine[1] = static_cast<std::int64_t>(offset);
    }
  }
  // Everyone's block (its initialization happens before: the peers read it only after this).
  std::vector<std::int64_t> blocks(2 * size, -1);
  // PMPI_: the PMPI library (pmpi/) interposes the collectives and runs them through optcoll.
  if (PMPI_Allgather(mine, 2, MPI_INT64_T, blocks.data(), 2, MPI_INT64_T, comm) != MPI_SUCCESS) {
    throw TransportError("same-node channel: PMPI_Allgather of the eager rings failed");
  }
  bool any = false;
  for (std::size_t r = 0; r < size; ++r) any = any || blocks[2 * r] >= 0;
  if (!any) return nullptr;
  auto rings = std::unique_ptr<ShmRings>(new ShmRings());
  rings->pair_of_.assign(size, -1);
  if (mine[0] < 0) return rings;
  const std::size_t me = local[static_cast<std::size_t>(rank)];
  for (std::size_t r = 0; r < size; ++r) {
    if (static_cast<Rank>(r) == rank || placement.node_of[r] != node || blocks[2 * r] < 0 ||
        !arena.on_node(static_cast<Rank>(r))) {
      continue;
    }
    const std::byte* peer =
        arena.peer_payload(static_cast<Rank>(r), static_cast<std::uint64_t>(blocks[2 * r])) +
        blocks[2 * r + 1];
    Pair pair;
    pair.out = std::launder(reinterpret_cast<Slot*>(base + heads_bytes + local[r] * kRingBytes));
    pair.in = std::launder(reinterpret_cast<const Slot*>(peer + heads_bytes + me * kRingBytes));
    pair.in_head = std::launder(reinterpret_cast<Head*>(base + local[r] * kLine));
    pair.out_head = std::launder(reinterpret_cast<const Head*>(peer + me * kLine));
    pair.free_until = kSlots;
    rings->pair_of_[r] = static_cast<int>(rings->pairs_.size());
    rings->pairs_.push_back(pair);
    rings->peers_.push_back(static_cast<Rank>(r));
  }
  return rings;
}

bool ShmRings::try_send(Rank peer, int tag, std::span<const std::byte> data) {
  Pair& p = pairs_[static_cast<std::size_t>(pair_of_[static_cast<std::size_t>(peer)])];
  if (p.sent == p.free_until) {
    p.free_until = p.out_head->taken.load(std::memory_order_acquire) + kSlots;
    if (p.sent == p.free_until) return false;
  }
  Slot& slot = p.out[p.sent % kSlots];
  slot.tag = tag;
  slot.bytes = static_cast<std::uint32_t>(data.size());
  if (!data.empty()) std::memcpy(slot.payload, data.data(), data.size());
  ++p.sent;
  slot.stamp.store(p.sent, std::memory_order_release);
  return true;
}

bool ShmRings::peek(Rank peer, std::uint64_t position, Message& message) const {
  const Pair& p = pair(peer);
  const Slot& slot = p.in[position % kSlots];
  if (slot.stamp.load(std::memory_order_acquire) != position + 1) return false;
  if (slot.bytes > kPayloadBytes) {
    throw InternalError(  // errors.md: internal
        "same-node channel: an eager ring slot holds more than it can");
  }
  message.tag = slot.tag;
  message.data = std::span<const std::byte>(slot.payload, slot.bytes);
  return true;
}

void ShmRings::consume(Rank peer, std::uint64_t position) {
  Pair& p = pairs_[static_cast<std::size_t>(pair_of_[static_cast<std::size_t>(peer)])];
  p.consumed |= std::uint64_t{1} << (position - p.taken);
  if ((p.consumed & 1U) == 0) return;
  while ((p.consumed & 1U) != 0) {
    p.consumed >>= 1;
    ++p.taken;
  }
  p.in_head->taken.store(p.taken, std::memory_order_release);
}

}  // namespace optcoll::mpi
