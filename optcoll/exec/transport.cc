// SPDX-License-Identifier: Apache-2.0
// File: the backend-independent parts of Transport: the default receive-and-reduce (stage
// the message in a temporary buffer, combine when it is reported complete), the default
// vectored send and receive (staged the same way: gathered before, scattered after), and the
// non-virtual wait_some()/cancel() that finish or drop those staged reductions.
#include "optcoll/exec/transport.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace optcoll {

namespace {

// Spare staging buffers kept for reuse, and the largest one kept: enough for the small
// reductions whose allocations mattered, without holding on to large ones.
constexpr std::size_t kSpareBuffers = 16;
constexpr std::size_t kSpareBufferBytes = std::size_t{64} << 10;

// Copies `incoming` over `parts` in order (their total is its size: the transports check
// the message's size against the receive's before they hand it over).
void scatter(std::span<const std::byte> incoming, std::span<const std::span<std::byte>> parts) {
  std::size_t at = 0;
  for (const auto& part : parts) {
    if (!part.empty()) std::memcpy(part.data(), incoming.data() + at, part.size());
    at += part.size();
  }
}

}  // namespace

Transport::StagingBuffer Transport::take_staging_buffer(std::size_t bytes) {
  StagingBuffer buffer;
  if (!spare_buffers_.empty()) {
    buffer = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  if (buffer.capacity < bytes) {
    buffer.data = std::make_unique_for_overwrite<std::byte[]>(bytes);
    buffer.capacity = bytes;
  }
  return buffer;
}

RequestId Transport::add_staged(StagedReduce staged) {
  if (!staged_.empty() && staged.id <= staged_.back().id) staged_sorted_ = false;
  staged_.push_back(std::move(staged));
  ++staged_live_;
  return staged_.back().id;
}

RequestId Transport::irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) {
  StagedReduce staged;
  staged.buffer = take_staging_buffer(bytes);
  staged.bytes = bytes;
  staged.reduce = std::move(reduce);
  staged.id = irecv(from, key, std::span<std::byte>(staged.buffer.data.get(), bytes));
  return add_staged(std::move(staged));
}

RequestId Transport::isendv(Rank to, MsgKey key,
                            std::span<const std::span<const std::byte>> parts) {
  std::size_t bytes = 0;
  for (const auto& part : parts) bytes += part.size();
  StagedReduce staged;
  staged.buffer = take_staging_buffer(bytes);
  staged.bytes = bytes;
  std::byte* at = staged.buffer.data.get();
  for (const auto& part : parts) {
    if (!part.empty()) std::memcpy(at, part.data(), part.size());
    at += part.size();
  }
  // No combine step: the entry only keeps the gathered copy alive until the send completes.
  staged.id = isend(to, key, std::span<const std::byte>(staged.buffer.data.get(), bytes));
  return add_staged(std::move(staged));
}

RequestId Transport::irecvv(Rank from, MsgKey key, std::span<const std::span<std::byte>> parts) {
  std::size_t bytes = 0;
  for (const auto& part : parts) bytes += part.size();
  // Received whole, then split over the parts (the list is copied: it need not outlive the
  // call).
  return irecv_reduce(from, key, bytes,
                      [list = std::vector<std::span<std::byte>>(parts.begin(), parts.end())](
                          std::span<const std::byte> incoming) { scatter(incoming, list); });
}

Transport::StagedReduce* Transport::find_staged(RequestId id) {
  auto it = staged_.end();
  if (staged_sorted_) {
    it = std::lower_bound(staged_.begin(), staged_.end(), id,
                          [](const StagedReduce& s, RequestId key) { return s.id < key; });
  } else {
    it = std::find_if(staged_.begin(), staged_.end(),
                      [id](const StagedReduce& s) { return s.id == id; });
  }
  return it != staged_.end() && it->id == id && it->live ? &*it : nullptr;
}

// Removes finished entries once they are half of the list (all of them when none is live),
// keeping their buffers for reuse.
void Transport::drop_finished_staged() {
  if (staged_live_ > 0 && staged_live_ >= staged_.size() / 2) return;
  std::size_t kept = 0;
  for (auto& s : staged_) {
    if (!s.live) {
      if (spare_buffers_.size() < kSpareBuffers && s.buffer.capacity <= kSpareBufferBytes) {
        spare_buffers_.push_back(std::move(s.buffer));
      }
      continue;
    }
    if (&staged_[kept] != &s) staged_[kept] = std::move(s);
    ++kept;
  }
  staged_.resize(kept);
  if (staged_.empty()) staged_sorted_ = true;
}

void Transport::wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) {
  const std::size_t before = done.size();
  do_wait_some(timeout, done);
  if (staged_live_ == 0) return;
  for (std::size_t i = before; i < done.size(); ++i) {
    StagedReduce* staged = find_staged(done[i]);
    if (staged == nullptr) continue;
    // Finished before combining, so a throwing operator leaves no live entry behind.
    staged->live = false;
    --staged_live_;
    const ReduceInto reduce = std::move(staged->reduce);
    if (reduce) reduce(std::span<const std::byte>(staged->buffer.data.get(), staged->bytes));
  }
  drop_finished_staged();
}

std::vector<RequestId> Transport::wait_some(std::chrono::milliseconds timeout) {
  std::vector<RequestId> done;
  wait_some(timeout, done);
  return done;
}

void Transport::cancel(std::span<const RequestId> ids) {
  do_cancel(ids);
  // The backend no longer touches the staged buffers of these requests.
  for (const RequestId id : ids) {
    if (StagedReduce* staged = find_staged(id)) {
      staged->live = false;
      staged->reduce = ReduceInto();
      --staged_live_;
    }
  }
  drop_finished_staged();
}

}  // namespace optcoll
