// SPDX-License-Identifier: Apache-2.0
// File: the MPI libraries' own collective algorithms and the registry algorithm each one
// corresponds to: one table (library_algorithms.cc), read by `optcoll export` to write the
// libraries' selection files (rules_export.h) and documented in docs/export.md.
//
// An entry names the algorithm as the library's selection file does (Open MPI coll/tuned:
// the collective's id and the algorithm's id, as `ompi_info --param coll tuned --level 9`
// lists them; MPICH: the CSEL name "MPIR_Allreduce_intra_ring"), the registry algorithm
// whose schedule optcoll prices in its place, and how the library's parameter (Open MPI's
// fan-in/out and segment size) follows from the registry algorithm's parameters. `fidelity`
// says how close the two are: kSame where they exchange the same messages, kNearest where
// the registry has only a relative (Open MPI's linear allgather gathers and broadcasts
// linearly; optcoll's gather_then_bcast uses binomial trees), with the difference in
// `note`. Library algorithms without a registry relative (Open MPI's split binary bcast,
// neighbour exchange, the two-process special cases) are absent: an exported file never
// names them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "optcoll/model/collective.h"

namespace optcoll {

enum class MpiLibrary : std::uint8_t { kOpenMpi, kMpich };
std::string_view library_name(MpiLibrary library);  // "Open MPI 4.1", "MPICH 4.0"

enum class Fidelity : std::uint8_t { kSame, kNearest };

// How a library parameter is set from the registry algorithm's resolved parameters.
enum class LibraryParam : std::uint8_t {
  kNone,            // the library algorithm takes none from the file (0 there)
  kSegmentAsBytes,  // Open MPI's segment size (bytes) = the registry's "segment" (elements)
                    //   times the element size
};

// Restrictions of the library's implementation that the registry's relative does not have;
// an entry is only exported where they hold (the library would silently run another
// algorithm otherwise).
// Open MPI falls back to another algorithm of its own where they fail; MPICH 4.0 aborts (or
// computes a wrong result) when its selection file names an algorithm whose restrictions
// fail, so the MPICH file guards each choice by them (rules_export.h).
enum LibraryRestriction : std::uint8_t {
  kNoRestriction = 0,
  kPowerOfTwoRanks = 1,       // p a power of two
  kAtLeastRanksElements = 2,  // at least p elements in the message (MPICH: the largest power
                              //   of two <= p; the export prices with p, the file guards pof2)
  kBuiltInOp = 4,             // a predefined operator (MPI_SUM, ...), not a user's
  kCommutativeOp = 8,         // a commutative operator
  kNotInPlace = 16,           // not MPI_IN_PLACE
};

struct LibraryAlgorithm {
  MpiLibrary library;
  CollectiveKind kind;
  int id;                     // Open MPI: the coll/tuned algorithm id (>= 1); MPICH: 0
  std::string_view name;      // Open MPI: the id's enumerator name; MPICH: the CSEL name,
                              //   "MPIR_Allreduce_intra_recursive_doubling"
  std::string_view registry;  // the registry algorithm optcoll prices in its place
  std::string_view params;    // fixed registry parameters ("" for the defaults)
  LibraryParam param = LibraryParam::kNone;
  std::uint8_t restrictions = kNoRestriction;
  Fidelity fidelity = Fidelity::kSame;
  std::string_view note = {};  // where the two differ
};

// Whether `algorithm`'s restrictions hold for `spec` (the library runs it as named there).
bool library_runs_as_named(const LibraryAlgorithm& algorithm, const CollectiveSpec& spec);

// Every entry, grouped by library and collective, in the libraries' id order.
std::span<const LibraryAlgorithm> library_algorithms();

// Open MPI's coll/tuned collective id (its COLLTYPE enumeration: allgather 0, allgatherv 1,
// allreduce 2, alltoall 3, alltoallv 4, barrier 6, bcast 7, exscan 8, gather 9, reduce 11,
// reduce_scatter 12, reduce_scatter_block 13, scan 14, scatter 15), or -1 where coll/tuned
// has no rules for the collective (gatherv, scatterv).
int ompi_collective_id(CollectiveKind kind);

// What a library's selection rule compares for a call of `kind` at `nranks` ranks with
// `bytes` per rank as optcoll's tuning grid counts them (tuning_bytes); nullopt where the
// library's key does not follow the message size (one rule then holds for every size).
//   Open MPI 4.1 coll/tuned: the message (bcast, reduce, allreduce); p times the block
//     (allgather, alltoall, reduce_scatter_block); the sum of the blocks (allgatherv,
//     reduce_scatter). Barrier and alltoallv compare 0; gather, scatter, scan and exscan
//     the element size times p (the count left out).
//   MPICH 4.0 CSEL: avg_msg_size, the message (bcast, reduce, allreduce) or the block per
//     pair (alltoall); total_msg_size, p times the block (allgather, allgatherv,
//     reduce_scatter, reduce_scatter_block, alltoallv). Gather and scatter compare count
//     times p in elements; gatherv, scatterv, scan, exscan and barrier nothing.
std::optional<std::uint64_t> library_message_key(MpiLibrary library, CollectiveKind kind,
                                                 Rank nranks, std::uint64_t bytes);
// MPICH's name of that key: "avg_msg_size" or "total_msg_size" (empty where none).
std::string_view mpich_message_key_name(CollectiveKind kind);

// MPICH 4.0's selection file replaces the library's own for every collective, so it must
// name an algorithm for each one MPICH selects for, blocking, nonblocking and neighbourhood,
// intra- and inter-communicator (a call the file has no leaf for aborts). These are the
// leaves written where optcoll exports no choice: an algorithm that applies to every call
// (any p, count, operator; in-place calls of the alltoalls get their in-place algorithm).
struct MpichCollective {
  std::string_view name;               // the CSEL collective name, "iallreduce"
  std::optional<CollectiveKind> kind;  // the optcoll collective it is, for blocking ones
  std::string_view intra;              // the intra-communicator algorithm (or the only one)
  std::string_view intra_in_place;     // alltoall(v,w) with MPI_IN_PLACE; empty otherwise
  std::string_view inter;              // the inter-communicator one; empty: `intra` serves
                                       //   both ("allcomm") or MPICH has none
  bool all_communicators = false;      // `intra` is written without a comm_type key
};
std::span<const MpichCollective> mpich_collectives();

// docs/library_algorithms.md: both tables as Markdown (`optcoll export --list`).
std::string library_algorithms_markdown();

}  // namespace optcoll
