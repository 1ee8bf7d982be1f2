// SPDX-License-Identifier: Apache-2.0
// File: the shared-memory arenas of the MPI backend's intra-node channel (mpi_transport.h,
// "Same-node messages"). Every rank of a node owns one arena, a segment of an MPI-3 shared
// window (MPI_Win_allocate_shared on the node's communicator) that its node peers map too.
// A sender places a large message in a block of its own arena; the receiver reads it from
// there. Each block starts with a header of two counters in shared memory: how many bytes
// the owner has written so far (so that the receiver copies while the sender is still
// writing) and whether the receiver is done with it (so that the owner may reuse it).
//
// Only the owner allocates and frees blocks in its arena (first fit over a free list,
// 64-byte granules; consumed blocks are taken back at the next allocation), so nothing but
// the two counters is shared. One block may go to several receivers (the same data sent to
// several ranks of the node is copied in once): the owner counts the readers it announced
// the block to, the readers count themselves done, and the block is free again once both
// counts agree and no send of the owner's still refers to it (a "hold"). The counters are
// C++ atomics (lock-free and address-free on the platforms MPI shared windows exist on),
// stored with release and loaded with acquire order, which orders the payload bytes
// between the processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <mpi.h>

#include "optcoll/model/types.h"

namespace optcoll::mpi {

class ShmArena {
 public:
  // Collective over `comm`. Splits it by node; if the node has other ranks of `comm`,
  // allocates an arena of `bytes` on every rank of the node and maps the peers'. Returns
  // nullptr when there is nothing to share (one rank per node) or the MPI library cannot
  // allocate shared memory; every rank of `comm` then gets nullptr, or none does.
  static std::unique_ptr<ShmArena> create(MPI_Comm comm, std::size_t bytes);
  ~ShmArena();  // collective over the node (MPI_Win_free)
  ShmArena(const ShmArena&) = delete;
  ShmArena& operator=(const ShmArena&) = delete;

  // Whether `rank` (of the communicator given to create()) shares this node, itself aside.
  bool on_node(Rank rank) const;
  std::size_t capacity() const { return bytes_; }

  // Owner side. A block for `payload_bytes` with one reader and one hold, or nothing if
  // the arena has no room (blocks the receivers have consumed are taken back first). Its
  // written count starts at 0.
  std::optional<std::uint64_t> allocate(std::size_t payload_bytes);
  // One more reader and one more hold on a block that is held.
  void share(std::uint64_t block);
  // Drops a hold (a send that refers to the block is complete or abandoned).
  void release(std::uint64_t block);
  std::byte* payload(std::uint64_t block);
  // Makes the first `bytes` of the payload visible to the readers (release).
  void publish(std::uint64_t block, std::uint64_t bytes);
  // What the owner has published of its block so far.
  std::uint64_t published(std::uint64_t block) const;
  // Blocks allocated and not yet taken back.
  std::size_t live_blocks() const { return live_.size(); }

  // Reader side: block `block` of `peer`'s arena (`peer` on this node).
  const std::byte* peer_payload(Rank peer, std::uint64_t block) const;
  std::uint64_t written(Rank peer, std::uint64_t block) const;  // acquire
  void consume(Rank peer, std::uint64_t block);                 // release: one reader done

 private:
  struct Header;  // the shared counters at the start of every block
  ShmArena() = default;
  Header* header_in(std::byte* arena, std::uint64_t block) const;
  void reclaim();

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::size_t bytes_ = 0;
  std::byte* mine_ = nullptr;
  std::vector<std::byte*> arena_of_;  // per rank of the communicator: its arena, or null
  struct Range {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
  };
  struct Live {
    Range range;                // header included
    std::uint64_t readers = 0;  // receivers told of the block
    int holds = 0;              // sends still referring to it
  };
  Live& live(std::uint64_t block);
  std::vector<Range> free_;  // sorted by offset, coalesced
  std::vector<Live> live_;   // allocated blocks
};

}  // namespace optcoll::mpi
