// SPDX-License-Identifier: Apache-2.0
// File: the backend-independent parts of Transport: the default receive-and-reduce (stage
// the message in a temporary buffer, combine when it is reported complete) and the
// non-virtual wait_some()/cancel() that finish or drop those staged reductions.
#include "optcoll/exec/transport.h"

#include <utility>

namespace optcoll {

RequestId Transport::irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) {
  StagedReduce staged;
  staged.buffer = std::make_unique_for_overwrite<std::byte[]>(bytes);
  staged.bytes = bytes;
  staged.reduce = std::move(reduce);
  const RequestId id = irecv(from, key, std::span<std::byte>(staged.buffer.get(), bytes));
  staged_.emplace(id, std::move(staged));
  return id;
}

void Transport::wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) {
  const std::size_t before = done.size();
  do_wait_some(timeout, done);
  if (!staged_.empty()) {
    for (std::size_t i = before; i < done.size(); ++i) {
      auto it = staged_.find(done[i]);
      if (it == staged_.end()) continue;
      // Erased before combining, so a throwing operator leaves no dangling entry.
      StagedReduce staged = std::move(it->second);
      staged_.erase(it);
      staged.reduce(std::span<const std::byte>(staged.buffer.get(), staged.bytes));
    }
  }
}

std::vector<RequestId> Transport::wait_some(std::chrono::milliseconds timeout) {
  std::vector<RequestId> done;
  wait_some(timeout, done);
  return done;
}

void Transport::cancel(std::span<const RequestId> ids) {
  do_cancel(ids);
  // The backend no longer touches the staged buffers of these requests.
  for (const RequestId id : ids) staged_.erase(id);
}

}  // namespace optcoll
