// SPDX-License-Identifier: Apache-2.0
// File: the intra-node shared-memory arenas (shm_arena.h).
#include "optcoll/exec/mpi/shm_arena.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "optcoll/model/error.h"

namespace optcoll::mpi {
namespace {

constexpr std::uint64_t kGranule = 64;

std::uint64_t round_up(std::uint64_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

}  // namespace

struct ShmArena::Header {
  std::atomic<std::uint64_t> written;   // payload bytes the owner has published
  std::atomic<std::uint64_t> consumed;  // readers done with the block
};
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 &&
                  std::atomic<std::uint64_t>::is_always_lock_free,
              "the shared counters must be plain lock-free 64-bit words");
static_assert(2 * sizeof(std::atomic<std::uint64_t>) <= kGranule);

std::unique_ptr<ShmArena> ShmArena::create(MPI_Comm comm, std::size_t bytes) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    return nullptr;  // an error on one rank is an error on all (collective)
  }
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  // Whether some node has more than one rank: otherwise no rank shares anything.
  int shared_here = node_size > 1 ? 1 : 0;
  int shared_anywhere = 0;
  // PMPI_: the PMPI library (pmpi/) interposes MPI_Allreduce and runs it through optcoll.
  PMPI_Allreduce(&shared_here, &shared_anywhere, 1, MPI_INT, MPI_MAX, comm);
  if (shared_anywhere == 0 || bytes < kGranule * 4) {
    MPI_Comm_free(&node);
    return nullptr;
  }
  auto arena = std::unique_ptr<ShmArena>(new ShmArena());
  arena->node_ = node;
  // At most kNodeBytes for the whole node (the same on every rank of a node).
  constexpr std::size_t kNodeBytes = std::size_t{1} << 30;
  bytes = std::min(
      bytes, std::max(kNodeBytes / static_cast<std::size_t>(node_size), std::size_t{1} << 20));
  arena->bytes_ = static_cast<std::size_t>(bytes / kGranule * kGranule);
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const int code = MPI_Win_allocate_shared(static_cast<MPI_Aint>(arena->bytes_), 1, info, node,
                                           &base, &arena->window_);
  MPI_Info_free(&info);
  int ok_here = code == MPI_SUCCESS && base != nullptr ? 1 : 0;
  int ok_everywhere = 0;
  PMPI_Allreduce(&ok_here, &ok_everywhere, 1, MPI_INT, MPI_MIN, comm);
  if (ok_everywhere == 0) {
    if (arena->window_ != MPI_WIN_NULL) MPI_Win_free(&arena->window_);
    return nullptr;  // the destructor frees the node communicator
  }
  arena->mine_ = static_cast<std::byte*>(base);
  // The arenas of the node's ranks, indexed by rank of `comm`.
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group node_group = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(node, &node_group);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::vector<int> node_ranks(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  MPI_Group_translate_ranks(group, size, ranks.data(), node_group, node_ranks.data());
  MPI_Group_free(&group);
  MPI_Group_free(&node_group);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  arena->arena_of_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) {
    const int q = node_ranks[static_cast<std::size_t>(r)];
    if (q == MPI_UNDEFINED || r == me) continue;
    MPI_Aint peer_bytes = 0;
    int unit = 0;
    void* peer_base = nullptr;
    if (MPI_Win_shared_query(arena->window_, q, &peer_bytes, &unit, &peer_base) == MPI_SUCCESS) {
      arena->arena_of_[static_cast<std::size_t>(r)] = static_cast<std::byte*>(peer_base);
    }
  }
  arena->free_.push_back({0, arena->bytes_});
  return arena;
}

ShmArena::~ShmArena() {
  if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

bool ShmArena::on_node(Rank rank) const {
  return rank >= 0 && static_cast<std::size_t>(rank) < arena_of_.size() &&
         arena_of_[static_cast<std::size_t>(rank)] != nullptr;
}

ShmArena::Header* ShmArena::header_in(std::byte* arena, std::uint64_t block) const {
  return std::launder(reinterpret_cast<Header*>(arena + block));
}

ShmArena::Live& ShmArena::live(std::uint64_t block) {
  const auto it = std::find_if(live_.begin(), live_.end(),
                               [block](const Live& l) { return l.range.offset == block; });
  if (it == live_.end()) {
    throw InternalError("same-node channel: a block that is not allocated");  // errors.md: internal
  }
  return *it;
}

void ShmArena::share(std::uint64_t block) {
  Live& l = live(block);
  if (l.holds == 0) {
    throw InternalError("same-node channel: sharing a block no send holds");  // errors.md: internal
  }
  ++l.readers;
  ++l.holds;
}

void ShmArena::release(std::uint64_t block) {
  Live& l = live(block);
  if (l.holds == 0) {
    throw InternalError("same-node channel: releasing a block twice");  // errors.md: internal
  }
  --l.holds;
}

void ShmArena::reclaim() {
  for (std::size_t i = 0; i < live_.size();) {
    const Live& l = live_[i];
    if (l.holds > 0 ||
        header_in(mine_, l.range.offset)->consumed.load(std::memory_order_acquire) < l.readers) {
      ++i;
      continue;
    }
    const Range block = l.range;
    live_[i] = live_.back();
    live_.pop_back();
    // Back into the sorted free list, merged with its neighbours.
    auto it = std::lower_bound(free_.begin(), free_.end(), block.offset,
                               [](const Range& r, std::uint64_t o) { return r.offset < o; });
    it = free_.insert(it, block);
    if (it + 1 != free_.end() && it->offset + it->bytes == (it + 1)->offset) {
      it->bytes += (it + 1)->bytes;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->offset + (it - 1)->bytes == it->offset) {
      (it - 1)->bytes += it->bytes;
      free_.erase(it);
    }
  }
}

std::optional<std::uint64_t> ShmArena::allocate(std::size_t payload_bytes) {
  const std::uint64_t need = kGranule + round_up(payload_bytes);
  if (need > bytes_) return std::nullopt;
  // Consumed blocks first, then the lowest free range that fits: the blocks in use stay
  // packed at the start of the arena, whose pages are then mapped already (a first touch
  // costs a page fault per 4 KiB on both sides, which measured as 1-2 us each).
  reclaim();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->bytes < need) continue;
    const std::uint64_t block = it->offset;
    it->offset += need;
    it->bytes -= need;
    if (it->bytes == 0) free_.erase(it);
    live_.push_back({{block, need}, 1, 1});
    Header* header = new (mine_ + block) Header;
    header->written.store(0, std::memory_order_relaxed);
    header->consumed.store(0, std::memory_order_release);
    return block;
  }
  return std::nullopt;
}

std::byte* ShmArena::payload(std::uint64_t block) { return mine_ + block + kGranule; }

void ShmArena::publish(std::uint64_t block, std::uint64_t bytes) {
  header_in(mine_, block)->written.store(bytes, std::memory_order_release);
}

std::uint64_t ShmArena::published(std::uint64_t block) const {
  return header_in(mine_, block)->written.load(std::memory_order_relaxed);
}

const std::byte* ShmArena::peer_payload(Rank peer, std::uint64_t block) const {
  return arena_of_[static_cast<std::size_t>(peer)] + block + kGranule;
}

std::uint64_t ShmArena::written(Rank peer, std::uint64_t block) const {
  return header_in(arena_of_[static_cast<std::size_t>(peer)], block)
      ->written.load(std::memory_order_acquire);
}

void ShmArena::consume(Rank peer, std::uint64_t block) {
  header_in(arena_of_[static_cast<std::size_t>(peer)], block)
      ->consumed.fetch_add(1, std::memory_order_release);
}

}  // namespace optcoll::mpi
