// SPDX-License-Identifier: Apache-2.0
// File: checked, timed execution on the thread backend.
#include "optcoll/api/threads_check.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/reference.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

namespace optcoll {

CheckedRun run_checked_on_threads(const Schedule& schedule, const Datatype& scalar,
                                  std::string_view op_name, int iterations,
                                  std::chrono::milliseconds timeout) {
  if (iterations < 1) throw_invalid("iterations must be at least 1, got {}", iterations);
  const Layout layout(schedule.spec);
  const Rank p = layout.nranks();
  const auto np = static_cast<std::size_t>(p);
  const Datatype type = element_type(scalar, op_name);
  const ReduceOp op = reduce_op(scalar, op_name);
  if (type.bytes != schedule.spec.elem_bytes) {
    throw_invalid("the schedule was planned for {}-byte elements but {} elements have {} bytes",
                  schedule.spec.elem_bytes, type.name, type.bytes);
  }
  // A commutative operator satisfies a non-commutative schedule; the reverse is an error.
  if (schedule.spec.commutative && !op.commutative && is_reduction(schedule.spec.kind)) {
    throw_invalid("operator {} is not commutative but the schedule assumes it is", op.name);
  }
  // Inputs: the bcast message lives in the root's output buffer (MPI_Bcast's one buffer).
  std::vector<Bytes> inputs(np);
  std::vector<Bytes> outputs(np);
  const bool bcast = schedule.spec.kind == CollectiveKind::kBcast;
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const Count data = bcast ? (r == layout.root() ? layout.total() : 0) : layout.input_count(r);
    inputs[i] = make_input(scalar, op_name, r, data);
    outputs[i].assign(static_cast<std::size_t>(layout.output_count(r)) * type.bytes,
                      std::byte{0xAB});
  }
  if (bcast)
    outputs[static_cast<std::size_t>(layout.root())] =
        inputs[static_cast<std::size_t>(layout.root())];

  CheckedRun result;
  result.seconds.assign(static_cast<std::size_t>(iterations), 0.0);
  ThreadWorld world(p, WorldOptions{timeout});
  result.ran_on = world.describe();
  // The iterations are timed between barriers over the transport (not a std::barrier: as
  // fibers a rank may wait for another only through the transport, and a failed rank then
  // fails the others rather than leaving them in the barrier). Epochs: 3it before, 3it + 1
  // the collective, 3it + 2 after.
  const Schedule barrier =
      algorithms::build("barrier/dissemination", make_spec(CollectiveKind::kBarrier, p, 0));
  world.run([&](Transport& transport) {
    const auto me = static_cast<std::size_t>(transport.rank());
    const std::span<const std::byte> in =
        bcast ? std::span<const std::byte>{} : std::span<const std::byte>(inputs[me]);
    ExecOptions sync;
    sync.timeout = timeout;
    for (int it = 0; it < iterations; ++it) {
      const auto epoch = 3 * static_cast<std::uint32_t>(it);
      sync.epoch = epoch;
      execute(barrier, transport, {}, type, op, sync);
      const auto start = std::chrono::steady_clock::now();
      ExecOptions options;
      options.timeout = timeout;
      options.epoch = epoch + 1;
      options.known_well_formed = it > 0;  // checked by the first iteration
      execute(schedule, transport, {in, outputs[me]}, type, op, options);
      sync.epoch = epoch + 2;
      execute(barrier, transport, {}, type, op, sync);
      if (me == 0) {
        result.seconds[static_cast<std::size_t>(it)] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
  });

  const auto expected = reference_outputs(schedule.spec, inputs, type, op);
  result.correct = true;
  for (std::size_t r = 0; r < np; ++r) {
    if (expected[r].size() != outputs[r].size()) {
      result.correct = false;
      result.mismatches.push_back(fmt::format("rank {} output has {} bytes, expected {}", r,
                                              outputs[r].size(), expected[r].size()));
      continue;
    }
    for (std::size_t b = 0; b < outputs[r].size(); ++b) {
      if (outputs[r][b] != expected[r][b]) {
        result.correct = false;
        if (result.mismatches.size() < 8) {
          result.mismatches.push_back(
              fmt::format("rank {} element {} differs from the reference", r, b / type.bytes));
        }
        break;
      }
    }
  }
  std::vector<double> sorted = result.seconds;
  std::sort(sorted.begin(), sorted.end());
  result.median_seconds = sorted[sorted.size() / 2];
  return result;
}

}  // namespace optcoll
