// SPDX-License-Identifier: Apache-2.0
// File: the narrow interface every backend implements (threads, MPI, ...). The executor
// (executor.h) is written once against it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

// Identifies one message: the collective call it belongs to (epoch, so back-to-back calls
// never match each other's messages) and its seq on the ordered pair (from, to).
struct MsgKey {
  std::uint32_t epoch = 0;
  std::int32_t seq = 0;
  bool operator==(const MsgKey&) const = default;
};

using RequestId = std::uint64_t;

// Combines `bytes` incoming bytes into the receive buffer (the executor supplies it for a
// RecvReduce: it knows the datatype, the operator and the operand order).
using ReduceInto = std::function<void(std::span<const std::byte> incoming)>;

// Spans must stay valid until the request completes. Implementations throw
// TransportError for a failure they detect (size mismatch, peer failed, ...).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Rank rank() const = 0;
  virtual Rank size() const = 0;
  virtual RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) = 0;
  virtual RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) = 0;
  // Receives `bytes` bytes and hands them to `reduce`. The default receives into a
  // temporary buffer and then calls `reduce`; a backend that can read the sender's memory
  // (threads) overrides it to combine in place with no extra copy.
  virtual RequestId irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce);
  // Blocks until at least one request completes or `timeout` expires (then returns empty).
  // Returns the ids of the requests completed since the last call.
  virtual std::vector<RequestId> wait_some(std::chrono::milliseconds timeout) = 0;
  // Called by the executor with the description of what it is waiting for when it gives up,
  // so that a backend can tell the other ranks (the thread world aborts them).
  virtual void abort(const std::string& reason) { (void)reason; }
};

}  // namespace optcoll
