// SPDX-License-Identifier: Apache-2.0
// File: the PMPI library's decision (route.h).
#include "pmpi/route.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "optcoll/capi/mpi_context.h"
#include "optcoll/capi/mpi_types.h"
#include "optcoll/capi/settings.h"
#include "optcoll/plan/counts_free.h"
#include "optcoll/plan/select.h"

namespace optcoll::pmpi {
namespace {

using capi::PmpiMode;

// The settings, read and checked once (optcoll/capi/settings.h; reported at MPI_Init).
const capi::SettingValues& settings() { return capi::process_settings().values; }
PmpiMode policy() { return settings().pmpi_mode; }
double margin() { return settings().pmpi_margin; }

// The algorithms the MPI library (Open MPI's tuned and basic components; MPICH has the same
// families) chooses among, by optcoll's registry names. The MPI library is credited with
// the best of them under the model, which is generous: its fixed thresholds do not always
// pick the best, and its segment sizes are fixed where optcoll's are optimized.
const std::vector<std::string>& mpi_algorithms(CollectiveKind kind) {
  static const std::map<CollectiveKind, std::vector<std::string>> table = {
      {CollectiveKind::kBcast,
       {"linear", "binomial", "pipelined_chain", "pipelined_binary", "knomial",
        "scatter_ring_allgather", "scatter_doubling_allgather"}},
      {CollectiveKind::kReduce,
       {"linear", "binomial", "pipelined_chain", "pipelined_binary", "rabenseifner"}},
      {CollectiveKind::kAllreduce,
       {"reduce_then_bcast", "recursive_doubling", "ring", "ring_segmented", "rabenseifner"}},
      {CollectiveKind::kGather, {"linear", "binomial"}},
      {CollectiveKind::kScatter, {"linear", "binomial"}},
      {CollectiveKind::kGatherv, {"linear"}},
      {CollectiveKind::kScatterv, {"linear"}},
      {CollectiveKind::kAllgather, {"linear", "bruck", "recursive_doubling", "ring"}},
      {CollectiveKind::kAllgatherv, {"linear", "bruck", "recursive_doubling", "ring"}},
      {CollectiveKind::kReduceScatterBlock,
       {"reduce_then_scatter", "recursive_halving", "ring", "pairwise"}},
      {CollectiveKind::kReduceScatter,
       {"reduce_then_scatter", "recursive_halving", "ring", "pairwise"}},
      {CollectiveKind::kAlltoall, {"linear", "pairwise", "bruck"}},
      {CollectiveKind::kAlltoallv, {"linear", "pairwise"}},
      {CollectiveKind::kScan, {"linear", "recursive_doubling"}},
      {CollectiveKind::kExscan, {"linear", "recursive_doubling"}},
      {CollectiveKind::kBarrier, {"linear", "dissemination"}},
  };
  static const std::vector<std::string> none;
  const auto it = table.find(kind);
  return it == table.end() ? none : it->second;
}

// The model of the MPI library's own transport: `model` without optcoll's same-node channel,
// which only optcoll's messages take (cost_model_fields.def: rendezvous_max_bytes, the
// channel's threshold, from which no message waits for a handshake, and shared sends, the
// channel's one copy of a buffer for all its receivers). The library's messages above its
// eager limit all wait for the handshake and then move at its rate past it (rendezvous_beta,
// where the model has one: its single copy through the kernel), each copied on its own. A
// model that describes no channel is its own.
CostModel mpi_library_transport(CostModel model) {
  if (!model.rendezvous_max_bytes) return model;
  model.rendezvous_max_bytes.reset();
  if (model.send_mode == SendMode::kShared) model.send_mode = SendMode::kPort;
  return model;
}

std::string key_of(const CollectiveSpec& spec) {
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|", collective_name(spec.kind), spec.nranks,
                                spec.root, spec.count, spec.elem_bytes, spec.commutative);
  for (const Count c : spec.counts) key += fmt::format("{},", c);
  return key;
}

Route decide(MPI_Comm comm, const CollectiveSpec& spec) {
  capi::CommContext& context = capi::context_for(comm);
  const Time ours = context.communicator().plan_for(spec)->predicted_time;
  const CostModel model = mpi_library_transport(context.communicator().model());
  Time theirs = -1;
  for (const std::string& name : mpi_algorithms(spec.kind)) {
    try {
      // Priced without building where the algorithm's formula is exact or its schedule too
      // large to simulate (decide(); a ring at p = 1024 would take seconds on every rank).
      const Time t = optcoll::decide(spec, model, name).predicted_time;
      if (theirs < 0 || t < theirs) theirs = t;
    } catch (const Error&) {  // errors.md: not applicable here; the MPI library would not pick it
    }
  }
  if (theirs < 0) return Route::kMpi;
  return ours * (1 + margin()) < theirs ? Route::kOptcoll : Route::kMpi;
}

// Call counts by function (its name's address: every caller passes a string literal), kept
// only when $OPTCOLL_PMPI_LOG is set.
struct CallCount {
  const char* function = nullptr;
  long optcoll = 0;
  long mpi = 0;
};

std::vector<CallCount>& counts() {
  static std::vector<CallCount> c;
  return c;
}

bool logging() { return !settings().pmpi_log.empty(); }

// The routes of the last few distinct calls, checked before the keyed cache: an
// application repeats a handful of calls, and building the key cost a small call as much as
// the call itself (bench_mpi_call under LD_PRELOAD).
struct RecentRoute {
  CollectiveSpec spec;
  Route route = Route::kMpi;
};
constexpr std::size_t kRecentRoutes = 8;

}  // namespace

bool enabled(MPI_Comm comm) {
  if (policy() == PmpiMode::kNever) return false;
  // The thread level is fixed at MPI_Init (collectives come after it).
  static const bool multiple = [] {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return provided == MPI_THREAD_MULTIPLE;
  }();
  if (multiple) return false;  // optcoll's C API is not thread-safe
  int inter = 0;
  return comm != MPI_COMM_NULL && MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter == 0;
}

bool always() { return policy() == PmpiMode::kAlways; }

Route route(MPI_Comm comm, const CollectiveSpec& spec) {
  if (!enabled(comm)) return Route::kMpi;
  if (policy() == PmpiMode::kAlways) return Route::kOptcoll;
  static std::vector<RecentRoute> recent;  // most recent first
  for (std::size_t i = 0; i < recent.size(); ++i) {
    if (recent[i].spec != spec) continue;
    if (i > 0) std::swap(recent[i], recent[i - 1]);  // move up one place per hit
    return recent[i > 0 ? i - 1 : 0].route;
  }
  static std::map<std::string, Route> cache;
  const std::string key = key_of(spec);
  auto it = cache.find(key);
  if (it == cache.end()) {
    Route chosen = Route::kMpi;
    try {
      chosen = decide(comm, spec);
    } catch (...) {  // errors.md: any failure to decide leaves the call to the MPI library
      chosen = Route::kMpi;
    }
    it = cache.emplace(key, chosen).first;
  }
  if (recent.size() == kRecentRoutes) recent.pop_back();
  recent.insert(recent.begin(), RecentRoute{spec, it->second});
  return it->second;
}

bool skip_count_exchange(MPI_Comm comm, CollectiveKind kind) {
  if (!enabled(comm) || policy() != PmpiMode::kAuto) return false;
  try {
    int p = 0;
    MPI_Comm_size(comm, &p);
    static std::map<std::pair<CollectiveKind, int>, bool> cache;
    const auto key = std::make_pair(kind, p);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
    const CostModel& model = capi::context_for(comm).communicator().model();
    // The rule is about optcoll's linear; the library's runs on its own transport, which
    // is optcoll's only where the model describes no same-node channel. With the channel
    // the library's linear can lose by more than any bound free of the counts (a handshake
    // per message, and rendezvous_beta per byte): exchange, and route on the counts.
    const bool skip =
        mpi_library_transport(model) == model && linear_wins_without_exchange(kind, p, model);
    cache.emplace(key, skip);
    return skip;
  } catch (...) {  // errors.md: any failure to decide keeps the exchange (and the usual route)
    return false;
  }
}

std::size_t movable_bytes(MPI_Datatype type) {
  try {
    return capi::contiguous_bytes(type, "datatype");
  } catch (...) {  // errors.md: the call goes to the MPI library, which judges the datatype
    return 0;
  }
}

std::size_t reducible_bytes(MPI_Datatype type, MPI_Op op, bool* commutative) {
  try {
    if (op == MPI_SUM || op == MPI_PROD || op == MPI_MIN || op == MPI_MAX) {
      // Built-in and commutative; any contiguous type reduces (through optcoll's kernels or
      // MPI_Reduce_local), as capi::reduce_op would find without making the operator.
      const std::size_t bytes = capi::contiguous_bytes(type, "datatype");
      *commutative = true;
      return bytes;
    }
    const Datatype element = capi::element_type(type);
    *commutative = capi::reduce_op(op, type, element).commutative;
    return element.bytes;
  } catch (...) {  // errors.md: the call goes to the MPI library, which judges the arguments
    return 0;
  }
}

void count_call(const char* function, Route route) {
  if (!logging()) return;
  auto& all = counts();
  auto it = std::find_if(all.begin(), all.end(),
                         [function](const CallCount& c) { return c.function == function; });
  if (it == all.end()) it = all.insert(all.end(), CallCount{function});
  (route == Route::kOptcoll ? it->optcoll : it->mpi) += 1;
}

void write_log(int rank) {
  if (!logging()) return;
  // Sorted by name, as the log has always been.
  std::vector<CallCount> sorted = counts();
  std::sort(sorted.begin(), sorted.end(), [](const CallCount& a, const CallCount& b) {
    return std::strcmp(a.function, b.function) < 0;
  });
  std::ofstream out(fmt::format("{}.{}", settings().pmpi_log, rank));
  for (const CallCount& c : sorted) {
    out << fmt::format("{} optcoll={} mpi={}\n", c.function, c.optcoll, c.mpi);
  }
}

}  // namespace optcoll::pmpi
