// SPDX-License-Identifier: Apache-2.0
// File: checked, timed runs (threads_check.h).
#include "optcoll/api/threads_check.h"

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "optcoll/api/rank_sync.h"
#include "optcoll/api/reference.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"

namespace optcoll {
namespace {

void check_arguments(const Schedule& schedule, const Datatype& type, const ReduceOp& op,
                     const CheckedRunOptions& options) {
  if (options.calls < 1) throw_invalid("iterations must be at least 1, got {}", options.calls);
  if (options.rounds < 1) throw_invalid("rounds must be at least 1, got {}", options.rounds);
  if (type.bytes != schedule.spec.elem_bytes) {
    throw_invalid("the schedule was planned for {}-byte elements but {} elements have {} bytes",
                  schedule.spec.elem_bytes, type.name, type.bytes);
  }
  // A commutative operator satisfies a non-commutative schedule; the reverse is an error.
  if (schedule.spec.commutative && !op.commutative && is_reduction(schedule.spec.kind)) {
    throw_invalid("operator {} is not commutative but the schedule assumes it is", op.name);
  }
}

// What every rank's run is checked with: each rank's input (bcast: the message lives in the
// root's output buffer, MPI_Bcast's one buffer, so the inputs are empty but the root's, which
// is the message) and the reference's output for each rank.
struct CheckedData {
  std::vector<Bytes> inputs;
  std::vector<Bytes> expected;
};

CheckedData checked_data(const Schedule& schedule, const Datatype& scalar,
                         std::string_view op_name) {
  const Layout layout = Layout::borrowing(schedule.spec);
  const bool bcast = layout.kind() == CollectiveKind::kBcast;
  CheckedData data;
  for (Rank r = 0; r < layout.nranks(); ++r) {
    const Count n = bcast ? (r == layout.root() ? layout.total() : 0) : layout.input_count(r);
    data.inputs.push_back(make_input(scalar, op_name, r, n));
  }
  data.expected = reference_outputs(schedule.spec, data.inputs, element_type(scalar, op_name),
                                    reduce_op(scalar, op_name));
  return data;
}

// The first element where `output` differs from `expected`, as a message, or "".
std::string first_mismatch(Rank r, const Bytes& output, const Bytes& expected,
                           std::size_t elem_bytes) {
  if (output.size() != expected.size()) {
    return fmt::format("rank {} output has {} bytes, expected {}", r, output.size(),
                       expected.size());
  }
  const auto diff = std::mismatch(output.begin(), output.end(), expected.begin());
  if (diff.first == output.end()) return "";
  const auto at = static_cast<std::size_t>(diff.first - output.begin());
  return fmt::format("rank {} element {} differs from the reference", r, at / elem_bytes);
}

// One rank's checked run against `data`, made before any rank starts: a rank that made its
// own (every rank's inputs and reference outputs, as the reference needs them) held up the
// ranks that waited for it, p times the work in all, and on a thread world of many ranks
// on few cores that reached the progress timeout (p = 82, 1.3 MB per rank: 30 s and 9 GB).
// `known_well_formed`: the caller has checked the schedule (once for a whole thread world;
// each rank checking all of it was p times the work, as with the data).
CheckedRun run_checked_with(Transport& transport, const Schedule& schedule, const CheckedData& data,
                            const Datatype& type, const ReduceOp& op,
                            const CheckedRunOptions& options, bool known_well_formed) {
  const Layout layout = Layout::borrowing(schedule.spec);
  if (layout.nranks() != transport.size()) {
    throw_invalid("the schedule has {} ranks but the transport {}", layout.nranks(),
                  transport.size());
  }
  const Rank me = transport.rank();
  const bool bcast = schedule.spec.kind == CollectiveKind::kBcast;
  const Bytes mine = data.inputs[static_cast<std::size_t>(me)];  // first touched by its rank
  Bytes output(static_cast<std::size_t>(layout.output_count(me)) * type.bytes, std::byte{0xAB});
  if (bcast && me == layout.root()) output = mine;
  const BufferBinding buffers{bcast ? std::span<const std::byte>{} : mine, output};

  RankSync sync(transport, options.timeout);
  Execution run(schedule, me, known_well_formed);         // checks the schedule once
  run.run(transport, buffers, type, op, sync.options());  // untimed: first touch, scratch
  CheckedRun result;
  for (int round = 0; round < options.rounds; ++round) {
    result.seconds.push_back(slowest_per_call(sync, run, buffers, type, op, options.calls));
  }
  const std::string mismatch =
      first_mismatch(me, output, data.expected[static_cast<std::size_t>(me)], type.bytes);
  if (!mismatch.empty()) result.mismatches.push_back(mismatch);
  result.correct = sync.max(mismatch.empty() ? 0.0 : 1.0) == 0;
  std::vector<double> sorted = result.seconds;
  std::sort(sorted.begin(), sorted.end());
  result.median_seconds = sorted[sorted.size() / 2];
  return result;
}

}  // namespace

CheckedRun run_checked(Transport& transport, const Schedule& schedule, const Datatype& scalar,
                       std::string_view op_name, const CheckedRunOptions& options) {
  const Datatype type = element_type(scalar, op_name);
  const ReduceOp op = reduce_op(scalar, op_name);
  check_arguments(schedule, type, op, options);
  return run_checked_with(transport, schedule, checked_data(schedule, scalar, op_name), type, op,
                          options, /*known_well_formed=*/false);
}

CheckedRun run_checked_on_threads(const Schedule& schedule, const Datatype& scalar,
                                  std::string_view op_name, const CheckedRunOptions& options) {
  const Datatype type = element_type(scalar, op_name);
  const ReduceOp op = reduce_op(scalar, op_name);
  check_arguments(schedule, type, op, options);
  require_well_formed(schedule);                                     // once, for every rank
  const CheckedData data = checked_data(schedule, scalar, op_name);  // likewise
  ThreadWorld world(schedule.spec.nranks, WorldOptions{options.timeout});
  CheckedRun result;
  std::vector<std::string> mismatches;
  std::mutex mutex;
  world.run([&](Transport& transport) {
    CheckedRun mine = run_checked_with(transport, schedule, data, type, op, options,
                                       /*known_well_formed=*/true);
    std::lock_guard lock(mutex);
    mismatches.insert(mismatches.end(), mine.mismatches.begin(), mine.mismatches.end());
    if (transport.rank() == 0) result = std::move(mine);
  });
  std::sort(mismatches.begin(), mismatches.end());
  result.mismatches = std::move(mismatches);
  result.ran_on = world.describe();
  return result;
}

}  // namespace optcoll
