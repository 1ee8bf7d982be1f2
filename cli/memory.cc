// SPDX-License-Identifier: Apache-2.0
// File: memory estimates and the limit (memory.h).
#include "cli/memory.h"

#include <unistd.h>

#include <exception>

#include <fmt/format.h>

#include "cli/options.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/footprint.h"

namespace optcoll::cli {

const char* const kLimitsHelp =
    "Limits: memory grows with the schedule, about 300 B per op and 1 KB per rank; with an "
    "explicit --algorithm it is estimated first and a schedule beyond --max-memory (default "
    "3/4 of this machine's memory) is refused. In practice (docs/performance.md): algorithms of "
    "O(p) ops (trees, linear bcast/gather) plan up to p = 10^6 in seconds, O(p log p) ones "
    "(dissemination, recursive doubling, Bruck) up to p = 10^5, O(p^2) ones (ring, pairwise, "
    "linear alltoall) up to p = 2000; auto builds several candidates, so it is slower. run on "
    "threads also holds p^2 rank pairs (about 200 B each: p = 4096 takes 3.4 GB) and runs up "
    "to p = 2000 in seconds; run --backend mpi plans the whole schedule in every process.";

namespace {

// Measured peak memory of plan and simulate with an explicit algorithm (bcast/binomial,
// barrier/dissemination, allreduce/ring, alltoall/pairwise at p = 1024..262144: 180-300 B per
// op, plus per-rank state): the estimate errs upwards.
constexpr double kBytesPerOp = 300;
constexpr double kBytesPerRank = 1000;

std::string human(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.{}f} {}", bytes, unit == 0 ? 0 : 1, kUnits[unit]);
}

std::size_t machine_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

// Σ over ranks of 2 x (input + output) elements: every rank's input and reference output,
// made once for the whole world, and each rank's own copy of its input and its output.
double data_bytes(const CollectiveSpec& spec) {
  const Layout layout(spec);
  double elements = 0;
  for (Rank r = 0; r < spec.nranks; ++r) {
    elements += 2.0 * static_cast<double>(layout.input_count(r) + layout.output_count(r));
  }
  return elements * static_cast<double>(spec.elem_bytes);
}

struct Need {
  double bytes = 0;
  std::string parts;

  void add(double more, std::string_view what, const std::string& detail) {
    bytes += more;
    parts += fmt::format("{}{} {} ({})", parts.empty() ? "" : ", ", what, human(more), detail);
  }
};

std::string& activity() {
  static std::string current;
  return current;
}

}  // namespace

void MemoryOptions::add_to(CLI::App& app) {
  add_bytes_option(app, "--max-memory", max_memory,
                   "refuse, before building it, a schedule (and run) estimated to need more "
                   "memory than this (K, M, G suffixes; 0: no limit; default 3/4 of this "
                   "machine's memory)");
}

std::size_t MemoryOptions::limit() const {
  return max_memory ? *max_memory : machine_memory() / 4 * 3;
}

void check_memory(const MemoryOptions& options, const CollectiveSpec& spec,
                  std::string_view algorithm, const algorithms::Params& params,
                  const CostModel& model, bool threads_run) {
  const std::size_t limit = options.limit();
  if (limit == 0) return;
  Need need;
  if (!algorithm.empty() && algorithm != "auto") {
    const auto& info = algorithms::lookup(algorithm, spec.kind);
    if (const auto ops = estimate_ops(info, spec, params, model)) {
      need.add(kBytesPerOp * ops->ops + kBytesPerRank * spec.nranks, "schedule",
               fmt::format("{:.3g} ops, growing as {}", ops->ops, ops->growth));
    }
  }
  if (threads_run) {
    need.add(static_cast<double>(ThreadWorld::bytes_for(spec.nranks)), "thread world",
             fmt::format("{:.3g} rank pairs", static_cast<double>(spec.nranks) * spec.nranks));
    need.add(data_bytes(spec), "data", "inputs, outputs and the reference outputs");
  }
  if (need.bytes <= static_cast<double>(limit)) return;
  throw_invalid("{} with {} needs about {} of memory: {}; more than the limit of {} ({})",
                describe(spec), algorithm, human(need.bytes), need.parts,
                human(static_cast<double>(limit)),
                options.max_memory ? "--max-memory"
                                   : "3/4 of this machine's memory; --max-memory BYTES sets "
                                     "another, 0 none");
}

Activity::Activity(std::string what)
    : previous_(std::move(activity())), exceptions_(std::uncaught_exceptions()) {
  activity() = std::move(what);
}

// Unwinding from an exception keeps the activity, for main's message.
Activity::~Activity() {
  if (std::uncaught_exceptions() == exceptions_) activity() = std::move(previous_);
}

const std::string& Activity::current() { return activity(); }

}  // namespace optcoll::cli
