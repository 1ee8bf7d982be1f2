// SPDX-License-Identifier: Apache-2.0
// File: `optcoll export`: selection files for the MPI libraries users already run, written
// from what optcoll knows about their machine: for each collective, communicator size and
// message size, the library algorithm (library_algorithms.h) whose registry relative is
// fastest, under a cost model (its predicted time) or a measured tuning table (its measured
// time, at the table's p only).
//
// Choosing (choose_library_rules): at every size of the grid (min_bytes, x factor, ...,
// max_bytes per rank, as optcoll tune counts bytes: tuning.h's tuning_bytes) each library
// algorithm of the collective that the library runs as named there (library_runs_as_named)
// is priced through its registry relative: decide() with the relative's parameters (its
// defaults, and where the library takes a segment size from the file, the segment the
// builder chooses, halved and doubled: the variants optcoll tune measures). The least time wins
// (ties: the earlier table entry). Consecutive sizes with the same choice merge into one rule; a
// new rule starts at the geometric mean of the two grid sizes around the change. Where the
// library's rule key ignores the message size (library_message_key: Open MPI 4.1's gather,
// scatter, scan, exscan, alltoallv, barrier; MPICH's gather, scatter, gatherv, scatterv,
// scan, exscan, barrier), one rule holds for every size: the algorithm whose time is least
// in geometric mean over the grid of its ratio to the best.
//
// Writing: to_ompi_rules() gives Open MPI's coll/tuned dynamic rules file (the classic
// format every 4.x and 5.x reads; `--mca coll_tuned_use_dynamic_rules 1 --mca
// coll_tuned_dynamic_rules_filename FILE`); to_mpich_json() MPICH's collective selection
// file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE). docs/export.md says how to use them and
// what each key means.
//
// Example:
//   ExportOptions o;
//   o.library = MpiLibrary::kOpenMpi;
//   o.nranks = {4, 8};
//   const auto rules = choose_library_rules(o, model, nullptr);
//   write("rules.conf", to_ompi_rules(rules, "model.json"));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/plan/library_algorithms.h"
#include "optcoll/plan/tuning.h"

namespace optcoll {

struct ExportOptions {
  MpiLibrary library = MpiLibrary::kOpenMpi;
  std::vector<Rank> nranks;           // communicator sizes, ascending, each >= 2
  std::vector<CollectiveKind> kinds;  // empty: every collective the library has rules for
  std::uint64_t min_bytes = 8;        // per rank
  std::uint64_t max_bytes = std::uint64_t{8} << 20;
  std::uint64_t factor = 2;
  std::size_t elem_bytes = 8;  // the element the sizes are counted in (doubles, summed)
  // Library timings only: where Open MPI's own decision was timed, another algorithm is
  // written only if its time is below the default's / (1 + default_margin) (measurements are
  // noisy: a near tie keeps what the library does anyway).
  double default_margin = 0.1;
};

// One rule: from `from_bytes` per rank (0 for the first) up to the next rule, the library
// runs `algorithm` with these parameters.
struct LibraryRule {
  CollectiveKind kind = CollectiveKind::kBcast;
  Rank nranks = 0;
  std::uint64_t from_bytes = 0;  // per rank, as the grid counts
  std::uint64_t from_key = 0;    // the same point as the library's rule key
  const LibraryAlgorithm* algorithm = nullptr;
  std::string registry_params;      // the registry relative's resolved parameters
  std::uint64_t segment_bytes = 0;  // the library's segment size (0: none)
  double seconds = 0;               // predicted or measured at the first grid size of the rule
  double runner_up = 0;             // the next library algorithm's time there (0: none)
  std::string decided_by;           // "model", "tuning table" or "library timings"
};

struct LibraryRules {
  ExportOptions options;
  std::vector<LibraryRule> rules;  // by collective (library order), p, size
  // Collectives or sizes left out, with the reason (no library algorithm applies, the table
  // has no point there, ...).
  std::vector<std::string> notes;
};

// The library's own algorithms timed on the machine (bench/export/measure_library.py: each
// algorithm forced in turn, e.g. Open MPI's --mca coll_tuned_<collective>_algorithm ID, on
// the OSU-style grid), at one p. A JSON file:
//   {"format": "optcoll-library-timings-1", "library": "openmpi", "nranks": 16,
//    "source": "...", "points": [{"collective": "allreduce", "bytes": 8, "runs":
//    [{"algorithm": "recursive_doubling", "id": 3, "seconds": 2.1e-06}, ...]}, ...]}
// (bytes per rank as optcoll tune counts them; algorithm and id as library_algorithms()
// names them; segment sizes are the library's defaults, and rules chosen from these times
// name none).
struct LibraryTiming {
  const LibraryAlgorithm* algorithm = nullptr;
  double seconds = 0;
};
struct LibraryTimingPoint {
  CollectiveKind kind = CollectiveKind::kBcast;
  std::uint64_t bytes = 0;
  std::vector<LibraryTiming> runs;
};
struct LibraryTimings {
  MpiLibrary library = MpiLibrary::kOpenMpi;
  Rank nranks = 0;
  std::string source;
  std::vector<LibraryTimingPoint> points;
};
// Throws Error(kParse) naming the entry for malformed JSON, a missing field, an unknown
// format, library, collective or algorithm (a name and id the library table lacks), p < 2, or
// a time that is not a positive finite number.
LibraryTimings parse_library_timings_json(std::string_view text);

// Open MPI's own decision for `kind` (coll/tuned's fixed rules, what runs without a file), as
// a library algorithm: "default", id 0. Library timings may hold its time ({"algorithm":
// "default", "id": 0}); a rule naming it writes algorithm 0, with which coll/tuned falls back
// to its fixed rules. Where it was timed, an algorithm replaces it only if faster by more
// than ExportOptions::default_margin.
inline constexpr std::string_view kLibraryDefaultName = "default";
const LibraryAlgorithm& open_mpi_default(CollectiveKind kind);

// Throws Error(kInvalidArgument) for bad options (no p, p < 2, min > max, factor < 2, a
// collective the library has no rules for, a table or timings measured at another p than
// the one asked for, or timings of another library). With `timings` the library's measured
// times decide (the fastest measured algorithm where it runs as named), with `table` the
// measured times of the relatives, otherwise the model's predictions.
LibraryRules choose_library_rules(const ExportOptions& options, const CostModel& model,
                                  const TuningTable* table,
                                  const LibraryTimings* timings = nullptr);

// The files. `source`: one line on where the choices came from, written as a comment.
std::string to_ompi_rules(const LibraryRules& rules, std::string_view source);
std::string to_mpich_json(const LibraryRules& rules, std::string_view source);

// A Markdown table of the rules (collective, p, sizes, algorithm, registry relative, time,
// margin over the runner-up) for the command's report.
std::string rules_report(const LibraryRules& rules);

}  // namespace optcoll
