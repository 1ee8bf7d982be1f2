// SPDX-License-Identifier: Apache-2.0
// File: the table of library_algorithms.h. Open MPI's ids are coll/tuned's in Open MPI 4.1
// (`ompi_info --param coll tuned --level 9` lists them as "Valid values"); the
// correspondence with the registry was read from Open MPI's coll/base sources and is
// tested for real in tests/export (the file this table writes makes Open MPI run the
// algorithm it names).
#include "optcoll/plan/library_algorithms.h"

#include <array>
#include <bit>

#include <fmt/format.h>

namespace optcoll {
namespace {

using enum CollectiveKind;
constexpr auto kOmpi = MpiLibrary::kOpenMpi;
constexpr auto kMpich = MpiLibrary::kMpich;
constexpr auto kNearest = Fidelity::kNearest;
constexpr auto kSeg = LibraryParam::kSegmentAsBytes;
constexpr auto kNone = LibraryParam::kNone;
constexpr auto kSame = Fidelity::kSame;

constexpr LibraryAlgorithm entry(MpiLibrary library, CollectiveKind kind, int id,
                                 std::string_view name, std::string_view registry,
                                 std::string_view params = {}, LibraryParam param = kNone,
                                 std::uint8_t restrictions = kNoRestriction,
                                 Fidelity fidelity = kSame, std::string_view note = {}) {
  return {library, kind, id, name, registry, params, param, restrictions, fidelity, note};
}

// clang-format off
constexpr std::array kTable = {
  // Open MPI 4.1, coll/tuned.
  entry(kOmpi, kAllgather, 1, "linear", "allgather/gather_then_bcast", "", kNone, kNoRestriction, kNearest,
                   "Open MPI gathers to rank 0 linearly and broadcasts with its own bcast choice; the registry's relative uses binomial trees"),
  entry(kOmpi, kAllgather, 2, "bruck", "allgather/bruck"),
  entry(kOmpi, kAllgather, 3, "recursive_doubling", "allgather/recursive_doubling", "", kNone, kPowerOfTwoRanks),
  entry(kOmpi, kAllgather, 4, "ring", "allgather/ring"),
  entry(kOmpi, kAllgatherv, 1, "default", "allgatherv/gather_then_bcast", "", kNone, kNoRestriction, kNearest,
                   "Open MPI gathers with its gatherv and broadcasts with its bcast choice"),
  entry(kOmpi, kAllgatherv, 2, "bruck", "allgatherv/bruck"),
  entry(kOmpi, kAllgatherv, 3, "ring", "allgatherv/ring"),
  entry(kOmpi, kAllreduce, 1, "basic_linear", "allreduce/linear", "", kNone, kNoRestriction, kNearest,
                   "Open MPI reduces linearly to rank 0 and broadcasts with its own bcast choice"),
  entry(kOmpi, kAllreduce, 2, "nonoverlapping", "allreduce/reduce_then_bcast", "", kNone, kNoRestriction, kNearest,
                   "Open MPI's reduce and bcast are its own choices; the registry's relative uses binomial trees"),
  entry(kOmpi, kAllreduce, 3, "recursive_doubling", "allreduce/recursive_doubling"),
  entry(kOmpi, kAllreduce, 4, "ring", "allreduce/ring", "", kNone, kAtLeastRanksElements),
  entry(kOmpi, kAllreduce, 5, "segmented_ring", "allreduce/ring_segmented", "", kSeg, kAtLeastRanksElements),
  entry(kOmpi, kAllreduce, 6, "rabenseifner", "allreduce/rabenseifner", "", kNone, kAtLeastRanksElements),
  entry(kOmpi, kAlltoall, 1, "linear", "alltoall/linear"),
  entry(kOmpi, kAlltoall, 2, "pairwise", "alltoall/pairwise"),
  entry(kOmpi, kAlltoall, 3, "modified_bruck", "alltoall/bruck"),
  entry(kOmpi, kAlltoallv, 1, "basic_linear", "alltoallv/linear"),
  entry(kOmpi, kAlltoallv, 2, "pairwise", "alltoallv/pairwise"),
  entry(kOmpi, kBarrier, 1, "linear", "barrier/linear"),
  entry(kOmpi, kBarrier, 4, "bruck", "barrier/dissemination", "", kNone, kNoRestriction, kSame,
                   "Open MPI calls the dissemination barrier 'bruck'"),
  entry(kOmpi, kBcast, 1, "basic_linear", "bcast/linear"),
  entry(kOmpi, kBcast, 3, "pipeline", "bcast/pipelined_chain", "", kSeg),
  entry(kOmpi, kBcast, 5, "binary_tree", "bcast/binary", "", kNone, kNoRestriction, kNearest,
                   "Open MPI's binary tree is built in its own rank order; same depth"),
  entry(kOmpi, kBcast, 5, "binary_tree", "bcast/pipelined_binary", "", kSeg, kNoRestriction, kNearest,
                   "Open MPI's binary tree is built in its own rank order; same depth"),
  entry(kOmpi, kBcast, 6, "binomial", "bcast/binomial"),
  entry(kOmpi, kBcast, 7, "knomial", "bcast/knomial", "radix=4", kNone, kNoRestriction, kSame,
                   "Open MPI takes the radix from --mca coll_tuned_bcast_knomial_radix (default 4), not from the rules file: priced at radix 4"),
  entry(kOmpi, kBcast, 8, "scatter_allgather", "bcast/scatter_doubling_allgather"),
  entry(kOmpi, kBcast, 9, "scatter_allgather_ring", "bcast/scatter_ring_allgather"),
  entry(kOmpi, kExscan, 1, "linear", "exscan/linear"),
  entry(kOmpi, kExscan, 2, "recursive_doubling", "exscan/recursive_doubling"),
  entry(kOmpi, kGather, 1, "basic_linear", "gather/linear"),
  entry(kOmpi, kGather, 2, "binomial", "gather/binomial"),
  entry(kOmpi, kReduce, 1, "linear", "reduce/linear"),
  entry(kOmpi, kReduce, 3, "pipeline", "reduce/pipelined_chain", "", kSeg),
  entry(kOmpi, kReduce, 4, "binary", "reduce/binary", "", kNone, kNoRestriction, kNearest,
                   "Open MPI's binary tree is built in its own rank order; same depth"),
  entry(kOmpi, kReduce, 4, "binary", "reduce/pipelined_binary", "", kSeg, kNoRestriction, kNearest,
                   "Open MPI's binary tree is built in its own rank order; same depth"),
  entry(kOmpi, kReduce, 5, "binomial", "reduce/binomial"),
  entry(kOmpi, kReduce, 7, "rabenseifner", "reduce/rabenseifner", "", kNone, kAtLeastRanksElements),
  entry(kOmpi, kReduceScatter, 1, "non-overlapping", "reduce_scatter/reduce_then_scatter", "", kNone, kNoRestriction, kNearest,
                   "Open MPI's reduce and scatterv are its own choices; the registry's relative uses binomial trees"),
  entry(kOmpi, kReduceScatter, 2, "recursive_halving", "reduce_scatter/recursive_halving"),
  entry(kOmpi, kReduceScatter, 3, "ring", "reduce_scatter/ring"),
  entry(kOmpi, kReduceScatterBlock, 1, "basic_linear", "reduce_scatter_block/reduce_then_scatter", "", kNone, kNoRestriction, kNearest,
                   "Open MPI reduces to rank 0 and scatters with its own choices; the registry's relative uses binomial trees"),
  entry(kOmpi, kReduceScatterBlock, 3, "recursive_halving", "reduce_scatter_block/recursive_halving"),
  entry(kOmpi, kScan, 1, "linear", "scan/linear"),
  entry(kOmpi, kScan, 2, "recursive_doubling", "scan/recursive_doubling"),
  entry(kOmpi, kScatter, 1, "basic_linear", "scatter/linear"),
  entry(kOmpi, kScatter, 2, "binomial", "scatter/binomial"),

  // MPICH 4.0, its CSEL selection file (blocking, intra-communicator; restrictions as MPICH
  // 4.0.2 enforces them, by an abort, when a file names the algorithm).
  entry(kMpich, kAllgather, 0, "MPIR_Allgather_intra_brucks", "allgather/bruck"),
  entry(kMpich, kAllgather, 0, "MPIR_Allgather_intra_recursive_doubling", "allgather/recursive_doubling", "", kNone, kPowerOfTwoRanks),
  entry(kMpich, kAllgather, 0, "MPIR_Allgather_intra_ring", "allgather/ring"),
  entry(kMpich, kAllgatherv, 0, "MPIR_Allgatherv_intra_brucks", "allgatherv/bruck"),
  entry(kMpich, kAllgatherv, 0, "MPIR_Allgatherv_intra_recursive_doubling", "allgatherv/recursive_doubling", "", kNone, kPowerOfTwoRanks),
  entry(kMpich, kAllgatherv, 0, "MPIR_Allgatherv_intra_ring", "allgatherv/ring"),
  entry(kMpich, kAllreduce, 0, "MPIR_Allreduce_intra_recursive_doubling", "allreduce/recursive_doubling"),
  entry(kMpich, kAllreduce, 0, "MPIR_Allreduce_intra_reduce_scatter_allgather", "allreduce/rabenseifner", "", kNone, kAtLeastRanksElements | kBuiltInOp),
  entry(kMpich, kAlltoall, 0, "MPIR_Alltoall_intra_brucks", "alltoall/bruck", "", kNone, kNotInPlace),
  entry(kMpich, kAlltoall, 0, "MPIR_Alltoall_intra_pairwise", "alltoall/pairwise", "", kNone, kNotInPlace),
  entry(kMpich, kAlltoall, 0, "MPIR_Alltoall_intra_scattered", "alltoall/linear", "", kNone, kNotInPlace, kNearest,
        "MPICH posts the sends and receives in batches (MPIR_CVAR_ALLTOALL_THROTTLE), optcoll's linear all at once"),
  entry(kMpich, kAlltoallv, 0, "MPIR_Alltoallv_intra_scattered", "alltoallv/linear", "", kNone, kNotInPlace, kNearest,
        "MPICH posts the sends and receives in batches (MPIR_CVAR_ALLTOALL_THROTTLE), optcoll's linear all at once"),
  entry(kMpich, kBarrier, 0, "MPIR_Barrier_intra_dissemination", "barrier/dissemination"),
  entry(kMpich, kBcast, 0, "MPIR_Bcast_intra_binomial", "bcast/binomial"),
  entry(kMpich, kBcast, 0, "MPIR_Bcast_intra_scatter_recursive_doubling_allgather", "bcast/scatter_doubling_allgather"),
  entry(kMpich, kBcast, 0, "MPIR_Bcast_intra_scatter_ring_allgather", "bcast/scatter_ring_allgather"),
  entry(kMpich, kExscan, 0, "MPIR_Exscan_intra_recursive_doubling", "exscan/recursive_doubling"),
  entry(kMpich, kGather, 0, "MPIR_Gather_intra_binomial", "gather/binomial"),
  entry(kMpich, kGatherv, 0, "MPIR_Gatherv_allcomm_linear", "gatherv/linear"),
  entry(kMpich, kReduce, 0, "MPIR_Reduce_intra_binomial", "reduce/binomial"),
  entry(kMpich, kReduce, 0, "MPIR_Reduce_intra_reduce_scatter_gather", "reduce/rabenseifner", "", kNone, kAtLeastRanksElements | kBuiltInOp),
  entry(kMpich, kReduceScatter, 0, "MPIR_Reduce_scatter_intra_pairwise", "reduce_scatter/pairwise", "", kNone, kCommutativeOp),
  entry(kMpich, kReduceScatter, 0, "MPIR_Reduce_scatter_intra_recursive_halving", "reduce_scatter/recursive_halving", "", kNone, kCommutativeOp),
  entry(kMpich, kReduceScatterBlock, 0, "MPIR_Reduce_scatter_block_intra_pairwise", "reduce_scatter_block/pairwise", "", kNone, kCommutativeOp),
  entry(kMpich, kReduceScatterBlock, 0, "MPIR_Reduce_scatter_block_intra_recursive_halving", "reduce_scatter_block/recursive_halving", "", kNone, kCommutativeOp),
  entry(kMpich, kScan, 0, "MPIR_Scan_intra_recursive_doubling", "scan/recursive_doubling"),
  entry(kMpich, kScatter, 0, "MPIR_Scatter_intra_binomial", "scatter/binomial"),
  entry(kMpich, kScatterv, 0, "MPIR_Scatterv_allcomm_linear", "scatterv/linear"),
};

// The leaves for every collective MPICH 4.0.2 selects for (its built-in file's collectives),
// each an algorithm MPICH runs for any call (tests/export runs them all).
constexpr std::array kMpichCollectives = {
  MpichCollective{"bcast", kBcast, "MPIR_Bcast_intra_binomial", "", "MPIR_Bcast_inter_remote_send_local_bcast"},
  MpichCollective{"allreduce", kAllreduce, "MPIR_Allreduce_intra_recursive_doubling", "", "MPIR_Allreduce_inter_reduce_exchange_bcast"},
  MpichCollective{"allgather", kAllgather, "MPIR_Allgather_intra_ring", "", "MPIR_Allgather_inter_local_gather_remote_bcast"},
  MpichCollective{"allgatherv", kAllgatherv, "MPIR_Allgatherv_intra_ring", "", "MPIR_Allgatherv_inter_remote_gather_local_bcast"},
  MpichCollective{"reduce", kReduce, "MPIR_Reduce_intra_binomial", "", "MPIR_Reduce_inter_local_reduce_remote_send"},
  MpichCollective{"reduce_scatter", kReduceScatter, "MPIR_Reduce_scatter_intra_recursive_doubling", "", "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter"},
  MpichCollective{"reduce_scatter_block", kReduceScatterBlock, "MPIR_Reduce_scatter_block_intra_recursive_doubling", "", "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter"},
  MpichCollective{"gather", kGather, "MPIR_Gather_intra_binomial", "", "MPIR_Gather_inter_linear"},
  MpichCollective{"scatter", kScatter, "MPIR_Scatter_intra_binomial", "", "MPIR_Scatter_inter_linear"},
  MpichCollective{"gatherv", kGatherv, "MPIR_Gatherv_allcomm_linear", "", "", true},
  MpichCollective{"scatterv", kScatterv, "MPIR_Scatterv_allcomm_linear", "", "", true},
  MpichCollective{"scan", kScan, "MPIR_Scan_intra_recursive_doubling", "", ""},
  MpichCollective{"exscan", kExscan, "MPIR_Exscan_intra_recursive_doubling", "", ""},
  MpichCollective{"barrier", kBarrier, "MPIR_Barrier_intra_dissemination", "", "MPIR_Barrier_inter_bcast"},
  MpichCollective{"alltoall", kAlltoall, "MPIR_Alltoall_intra_pairwise", "MPIR_Alltoall_intra_pairwise_sendrecv_replace", "MPIR_Alltoall_inter_pairwise_exchange"},
  MpichCollective{"alltoallv", kAlltoallv, "MPIR_Alltoallv_intra_scattered", "MPIR_Alltoallv_intra_pairwise_sendrecv_replace", "MPIR_Alltoallv_inter_pairwise_exchange"},
  MpichCollective{"alltoallw", std::nullopt, "MPIR_Alltoallw_intra_scattered", "MPIR_Alltoallw_intra_pairwise_sendrecv_replace", "MPIR_Alltoallw_inter_pairwise_exchange"},
  MpichCollective{"neighbor_allgather", std::nullopt, "MPIR_Neighbor_allgather_allcomm_nb", "", "", true},
  MpichCollective{"neighbor_allgatherv", std::nullopt, "MPIR_Neighbor_allgatherv_allcomm_nb", "", "", true},
  MpichCollective{"neighbor_alltoall", std::nullopt, "MPIR_Neighbor_alltoall_allcomm_nb", "", "", true},
  MpichCollective{"neighbor_alltoallv", std::nullopt, "MPIR_Neighbor_alltoallv_allcomm_nb", "", "", true},
  MpichCollective{"neighbor_alltoallw", std::nullopt, "MPIR_Neighbor_alltoallw_allcomm_nb", "", "", true},
  MpichCollective{"ibarrier", std::nullopt, "MPIR_Ibarrier_intra_sched_recursive_doubling", "", "MPIR_Ibarrier_inter_sched_bcast"},
  MpichCollective{"iallreduce", std::nullopt, "MPIR_Iallreduce_intra_sched_recursive_doubling", "", "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast"},
  MpichCollective{"iallgather", std::nullopt, "MPIR_Iallgather_intra_sched_ring", "", "MPIR_Iallgather_inter_sched_local_gather_remote_bcast"},
  MpichCollective{"iallgatherv", std::nullopt, "MPIR_Iallgatherv_intra_sched_ring", "", "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast"},
  MpichCollective{"ibcast", std::nullopt, "MPIR_Ibcast_intra_sched_binomial", "", "MPIR_Ibcast_inter_sched_flat"},
  MpichCollective{"ireduce", std::nullopt, "MPIR_Ireduce_intra_sched_binomial", "", "MPIR_Ireduce_inter_sched_local_reduce_remote_send"},
  MpichCollective{"ireduce_scatter", std::nullopt, "MPIR_Ireduce_scatter_intra_sched_recursive_doubling", "", "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv"},
  MpichCollective{"ireduce_scatter_block", std::nullopt, "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling", "", "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv"},
  MpichCollective{"igather", std::nullopt, "MPIR_Igather_intra_sched_binomial", "", "MPIR_Igather_inter_sched_long"},
  MpichCollective{"iscatter", std::nullopt, "MPIR_Iscatter_intra_sched_binomial", "", "MPIR_Iscatter_inter_sched_linear"},
  MpichCollective{"igatherv", std::nullopt, "MPIR_Igatherv_allcomm_sched_linear", "", "", true},
  MpichCollective{"iscatterv", std::nullopt, "MPIR_Iscatterv_allcomm_sched_linear", "", "", true},
  MpichCollective{"iexscan", std::nullopt, "MPIR_Iexscan_intra_sched_recursive_doubling", "", ""},
  MpichCollective{"iscan", std::nullopt, "MPIR_Iscan_intra_sched_recursive_doubling", "", ""},
  MpichCollective{"ialltoall", std::nullopt, "MPIR_Ialltoall_intra_sched_pairwise", "MPIR_Ialltoall_intra_sched_inplace", "MPIR_Ialltoall_inter_sched_pairwise_exchange"},
  MpichCollective{"ialltoallv", std::nullopt, "MPIR_Ialltoallv_intra_sched_blocked", "MPIR_Ialltoallv_intra_sched_inplace", "MPIR_Ialltoallv_inter_sched_pairwise_exchange"},
  MpichCollective{"ialltoallw", std::nullopt, "MPIR_Ialltoallw_intra_sched_blocked", "MPIR_Ialltoallw_intra_sched_inplace", "MPIR_Ialltoallw_inter_sched_pairwise_exchange"},
  MpichCollective{"ineighbor_allgather", std::nullopt, "MPIR_Ineighbor_allgather_allcomm_sched_linear", "", "", true},
  MpichCollective{"ineighbor_allgatherv", std::nullopt, "MPIR_Ineighbor_allgatherv_allcomm_sched_linear", "", "", true},
  MpichCollective{"ineighbor_alltoall", std::nullopt, "MPIR_Ineighbor_alltoall_allcomm_sched_linear", "", "", true},
  MpichCollective{"ineighbor_alltoallv", std::nullopt, "MPIR_Ineighbor_alltoallv_allcomm_sched_linear", "", "", true},
  MpichCollective{"ineighbor_alltoallw", std::nullopt, "MPIR_Ineighbor_alltoallw_allcomm_sched_linear", "", "", true},
};
// clang-format on

struct OmpiCollective {
  CollectiveKind kind;
  int id;
};
constexpr std::array kOmpiCollectives = {
    OmpiCollective{kAllgather, 0},      OmpiCollective{kAllgatherv, 1},
    OmpiCollective{kAllreduce, 2},      OmpiCollective{kAlltoall, 3},
    OmpiCollective{kAlltoallv, 4},      OmpiCollective{kBarrier, 6},
    OmpiCollective{kBcast, 7},          OmpiCollective{kExscan, 8},
    OmpiCollective{kGather, 9},         OmpiCollective{kReduce, 11},
    OmpiCollective{kReduceScatter, 12}, OmpiCollective{kReduceScatterBlock, 13},
    OmpiCollective{kScan, 14},          OmpiCollective{kScatter, 15},
};

}  // namespace

std::string_view library_name(MpiLibrary library) {
  return library == MpiLibrary::kOpenMpi ? "Open MPI 4.1" : "MPICH 4.0";
}

std::span<const LibraryAlgorithm> library_algorithms() { return kTable; }

std::span<const MpichCollective> mpich_collectives() { return kMpichCollectives; }

bool library_runs_as_named(const LibraryAlgorithm& algorithm, const CollectiveSpec& spec) {
  if ((algorithm.restrictions & kPowerOfTwoRanks) &&
      !std::has_single_bit(static_cast<unsigned>(spec.nranks))) {
    return false;
  }
  if ((algorithm.restrictions & kAtLeastRanksElements) && spec.count < spec.nranks) return false;
  return true;
}

namespace {

std::string restrictions_text(std::uint8_t r) {
  struct Name {
    std::uint8_t bit;
    std::string_view text;
  };
  constexpr Name kNames[] = {{kPowerOfTwoRanks, "p a power of two"},
                             {kAtLeastRanksElements, "at least p elements"},
                             {kBuiltInOp, "predefined operator"},
                             {kCommutativeOp, "commutative operator"},
                             {kNotInPlace, "not in place"}};
  std::string out;
  for (const auto& n : kNames) {
    if (r & n.bit) out += fmt::format("{}{}", out.empty() ? "" : "; ", n.text);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string library_algorithms_markdown() {
  std::string out =
      "# The MPI libraries' algorithms and their registry relatives\n\n"
      "Generated by `optcoll export --list` from optcoll/plan/library_algorithms.cc; do not "
      "edit by hand. `optcoll export` (docs/export.md) prices each library algorithm through "
      "its relative and writes the fastest into the library's selection file. *same*: the two "
      "exchange the same messages; *nearest*: the registry's closest relative, with the "
      "difference in the note. Restrictions: where the library runs the algorithm (Open MPI "
      "falls back to another of its own elsewhere; MPICH aborts, so its file guards each "
      "choice by them).\n";
  for (const auto library : {MpiLibrary::kOpenMpi, MpiLibrary::kMpich}) {
    out += fmt::format("\n## {}\n\n", library_name(library));
    out += library == MpiLibrary::kOpenMpi
               ? "| collective (coll/tuned id) | algorithm (id) | optcoll relative | segment size "
                 "from | restrictions | fidelity | note |\n|---|---|---|---|---|---|---|\n"
               : "| collective | algorithm (CSEL name) | optcoll relative | segment size from | "
                 "restrictions | fidelity | note |\n|---|---|---|---|---|---|---|\n";
    for (const auto& a : kTable) {
      if (a.library != library) continue;
      const std::string collective =
          library == MpiLibrary::kOpenMpi
              ? fmt::format("{} ({})", collective_name(a.kind), ompi_collective_id(a.kind))
              : std::string(collective_name(a.kind));
      const std::string name = library == MpiLibrary::kOpenMpi
                                   ? fmt::format("{} ({})", a.name, a.id)
                                   : std::string(a.name);
      out += fmt::format("| {} | {} | {}{} | {} | {} | {} | {} |\n", collective, name, a.registry,
                         a.params.empty() ? "" : fmt::format(" ({})", a.params),
                         a.param == LibraryParam::kSegmentAsBytes ? "its segment" : "-",
                         restrictions_text(a.restrictions),
                         a.fidelity == Fidelity::kSame ? "same" : "nearest",
                         a.note.empty() ? "-" : a.note);
    }
  }
  out +=
      "\n## MPICH: the leaves where optcoll exports no choice\n\n"
      "An MPICH selection file replaces MPICH's own for every collective, so the file "
      "names an algorithm for each; where optcoll has no choice to export (nonblocking, "
      "neighbourhood, alltoallw, intercommunicators) it writes one that applies to every "
      "call.\n\n| collective | intracommunicator | in place | intercommunicator |\n"
      "|---|---|---|---|\n";
  for (const auto& c : kMpichCollectives) {
    out += fmt::format("| {} | {}{} | {} | {} |\n", c.name, c.intra,
                       c.all_communicators ? " (every communicator)" : "",
                       c.intra_in_place.empty() ? "-" : c.intra_in_place,
                       c.inter.empty() ? "-" : c.inter);
  }
  return out;
}

int ompi_collective_id(CollectiveKind kind) {
  for (const auto& c : kOmpiCollectives) {
    if (c.kind == kind) return c.id;
  }
  return -1;
}

std::string_view mpich_message_key_name(CollectiveKind kind) {
  switch (kind) {
    case kBcast:
    case kReduce:
    case kAllreduce:
    case kAlltoall:
      return "avg_msg_size";
    case kAllgather:
    case kAllgatherv:
    case kReduceScatter:
    case kReduceScatterBlock:
    case kAlltoallv:
      return "total_msg_size";
    default:
      return {};
  }
}

std::optional<std::uint64_t> library_message_key(MpiLibrary library, CollectiveKind kind,
                                                 Rank nranks, std::uint64_t bytes) {
  const auto p = static_cast<std::uint64_t>(nranks);
  if (library == MpiLibrary::kMpich) {
    const auto name = mpich_message_key_name(kind);
    if (name.empty()) return std::nullopt;
    return name == "avg_msg_size" ? bytes : p * bytes;
  }
  switch (kind) {
    case kBcast:
    case kReduce:
    case kAllreduce:
      return bytes;
    case kAllgather:
    case kAllgatherv:
    case kAlltoall:
    case kReduceScatter:
    case kReduceScatterBlock:
      return p * bytes;
    default:
      return std::nullopt;
  }
}

}  // namespace optcoll
