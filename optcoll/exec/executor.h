// SPDX-License-Identifier: Apache-2.0
// File: the generic schedule interpreter, shared by every backend. It binds the schedule's
// buffers to the caller's memory, allocates scratch, issues every op whose dependencies
// are complete (Copy/Reduce inline, messages through the Transport), and waits.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/transport.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

struct ExecOptions {
  // Give up (throw TransportError naming every pending op) when nothing completes for this
  // long. Also bounds how long a failed peer can leave this rank waiting.
  std::chrono::milliseconds timeout{30000};
  std::uint32_t epoch = 0;  // distinguishes consecutive collectives on one transport
  // The caller has already checked require_well_formed(schedule) (a cached plan, say): skip
  // that pass over every rank's ops, which at p = 64 costs as much as a small collective.
  // The per-rank checks (sizes, buffers, operator) always run.
  bool known_well_formed = false;
};

struct BufferBinding {
  std::span<const std::byte> input;
  std::span<std::byte> output;
};

// Runs `schedule.ranks[transport.rank()]`. Checks first that the schedule is well formed,
// that its rank count equals transport.size(), and that the buffers hold exactly
// input_count / output_count elements of `type` (Error(kInvalidArgument) otherwise).
// Transport failures and timeouts throw TransportError naming the pending ops.
void execute(const Schedule& schedule, Transport& transport, BufferBinding buffers,
             const Datatype& type, const ReduceOp& op, const ExecOptions& options = {});

}  // namespace optcoll
