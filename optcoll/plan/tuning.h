// SPDX-License-Identifier: Apache-2.0
// File: measured tuning tables (docs/tuning.md): what `optcoll tune` measured on a machine,
// per collective and size, for every algorithm variant it ran; and how `auto` uses one.
//
// A table holds grid points. A point is (collective, counts, bytes per rank) at the table's
// p and backend, with every candidate run there: (algorithm, variant, measured seconds per
// call, predicted seconds under the model of the run). A variant names parameters relative
// to the algorithm's own choice, so that it means the same at every size: "" (the declared
// defaults; "auto" values resolved by the builder from the model), "radix=K", "segment=half"
// and "segment=double" (the segment the builder chose, halved or doubled).
//
// tuned_choice(table, spec) answers for a call:
//   - only at the table's p (never outside the measured p) and, when the caller names its
//     backend, only for that backend;
//   - regular kinds: among the points of that collective, from the smallest measured size
//     to the largest; at a grid size the fastest applicable candidate measured there; between
//     two grid sizes, each candidate measured at both has its time interpolated linearly in
//     log(time) over log(size), and the least interpolated time wins;
//   - v-kinds (gatherv, scatterv, allgatherv, reduce_scatter, alltoallv): only points
//     measured with exactly these counts (their fingerprint), since a choice for one
//     distribution says nothing about another;
//   - otherwise nothing, with the reason (the model decides then).
//
// Example:
//   const TuningTable table = parse_tuning_json(read("tuned.json"));
//   Plan p = plan_tuned(spec, model, table, "threads");  // p.decided_by says which decided
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/params.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/plan/select.h"

namespace optcoll {

inline constexpr std::string_view kTuningFormat = "optcoll-tuning-1";

struct TunedRun {
  std::string algorithm;  // registry name
  std::string variant;    // "", "radix=4", "segment=half", "segment=double"
  std::string params;     // the parameters it ran with (informative: they depend on the size)
  double seconds = 0;     // measured per call: the median over rounds of the slowest rank
  double predicted = -1;  // the model's prediction (seconds), < 0 if none
};

struct TuningPoint {
  CollectiveKind kind = CollectiveKind::kBcast;
  std::string counts = "regular";        // "regular", or the distribution the counts came from
  std::uint64_t counts_fingerprint = 0;  // v-kinds: counts_fingerprint(spec); 0 otherwise
  std::uint64_t bytes = 0;               // per rank: tuning_bytes(spec)
  std::vector<TunedRun> runs;
};

struct TuningTable {
  std::string backend;  // "threads" or "mpi"
  Rank nranks = 0;
  std::string registry;  // registry_fingerprint() of the optcoll that measured it
  std::string source;    // provenance: machine, command, date (free text)
  std::vector<TuningPoint> points;
  // What reading the file found and set aside (an algorithm this registry lacks, another
  // registry): one line each, naming the entry. The rest of the table is used.
  std::vector<std::string> warnings;
};

// Bytes per rank of a call, as tune's grid counts them: the message for bcast, reduce,
// allreduce, scan and exscan; the block per rank for scatter, gather, allgather and
// reduce_scatter_block; the block per pair for alltoall; the mean block for the v-kinds
// (alltoallv: per pair).
std::uint64_t tuning_bytes(const CollectiveSpec& spec);
// FNV-1a over a v-kind's counts (0 for regular kinds).
std::uint64_t counts_fingerprint(const CollectiveSpec& spec);
// A short fingerprint of the registry's algorithm names (a table made by another registry
// may name algorithms that changed meaning).
std::string registry_fingerprint();

// Throws Error(kParse) naming the entry for malformed JSON, a missing or mistyped field, a
// non-finite or non-positive time, an unknown collective or variant; an unknown algorithm
// or another registry fingerprint is a warning (TuningTable::warnings) and its runs are
// dropped.
TuningTable parse_tuning_json(std::string_view text);
std::string tuning_to_json(const TuningTable& table);

// Parameters for `variant` of `info` for this spec and model (Error(kInvalidArgument) for a
// variant the algorithm does not have).
algorithms::Params variant_params(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                                  const CostModel& model, std::string_view variant);
// The variants tune runs for `info`: "" and, where the algorithm has the parameter, the
// radix and segment variants (the same set auto tries).
std::vector<std::string> tuning_variants(const algorithms::AlgorithmInfo& info);

struct TunedChoice {
  std::string algorithm;
  std::string variant;
  std::uint64_t grid_bytes = 0;  // the grid point nearest in log size
  double seconds = 0;            // measured (or interpolated) seconds per call
  bool interpolated = false;
};
struct TuningLookup {
  std::optional<TunedChoice> choice;
  std::string reason;  // why there is none, or how it was found
};
// `backend`: the caller's ("threads", "mpi"), or empty to accept the table's.
TuningLookup tuned_choice(const TuningTable& table, const CollectiveSpec& spec,
                          std::string_view backend = {});

// The plan `auto` makes with a table: the tuned choice where tuned_choice has one, built
// with its variant's parameters and simulated under `model`; the model's choice (plan())
// elsewhere. Plan::decided_by says which decided, and why.
Plan plan_tuned(const CollectiveSpec& spec, const CostModel& model, const TuningTable& table,
                std::string_view backend = {}, const PlanOptions& options = {});

}  // namespace optcoll
