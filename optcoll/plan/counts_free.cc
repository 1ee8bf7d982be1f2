// SPDX-License-Identifier: Apache-2.0
// File: gatherv, scatterv and alltoallv without a count exchange (counts_free.h).
#include "optcoll/plan/counts_free.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"

namespace optcoll {
namespace {

void check_kind(CollectiveKind kind) {
  if (kind != CollectiveKind::kGatherv && kind != CollectiveKind::kScatterv &&
      kind != CollectiveKind::kAlltoallv) {
    throw_invalid("a count exchange is for gatherv, scatterv and alltoallv, not {}",
                  collective_name(kind));
  }
}

// The algorithms of runs_from_own_counts (counts_free.h).
constexpr std::array<std::string_view, 6> kFromOwnCounts = {
    "gatherv/linear",    "gatherv/lpt_star", "scatterv/linear",
    "scatterv/lpt_star", "alltoallv/linear", "alltoallv/pairwise"};

}  // namespace

Time count_exchange_time(CollectiveKind kind, Rank p, const CostModel& model) {
  check_kind(kind);
  CollectiveSpec exchange;
  switch (kind) {
    case CollectiveKind::kGatherv:  // each rank's own count, to every rank
      exchange = make_spec(CollectiveKind::kAllgather, p, 1);
      break;
    case CollectiveKind::kAlltoallv:  // each rank's row, to every rank
      exchange = make_spec(CollectiveKind::kAllgather, p, p);
      break;
    default:  // kScatterv: the root's counts, to every rank
      exchange = make_spec(CollectiveKind::kBcast, p, p, /*root=*/0);
      break;
  }
  exchange.elem_bytes = sizeof(std::int64_t);
  return plan(exchange, model).predicted_time;
}

bool linear_wins_without_exchange(CollectiveKind kind, Rank p, const CostModel& model) {
  check_kind(kind);
  if (p < 1) throw_invalid("nranks must be at least 1, got {}", p);
  validate(model);
  if (p <= 2) return true;  // one message at most, whatever the algorithm
  if (kind == CollectiveKind::kAlltoallv) return false;  // no bound free of the counts
  if (model.ports != 1 || model.overlap || !model.homogeneous() || model.topology) return false;
  if (p > kMaxCountsFreeRanks) return false;
  // With a send gap a scatterv root's sends overlap their latencies, with a receive gap a
  // gatherv root's receives: each costs it only min(gap, alpha) beyond its bytes (the file
  // comment).
  const std::optional<Time>& gap =
      kind == CollectiveKind::kScatterv ? model.send_gap : model.receive_gap;
  const Time per_block = gap ? std::min(*gap, model.alpha) : model.alpha;
  // The argument is on a processor and memory per rank; shared cores and memory
  // (CostModel::cores, node_beta) stretch the clock of both sides, so the rule compares them
  // without it (the file comment).
  CostModel own_processors = model;
  own_processors.cores.reset();
  own_processors.node_beta.reset();
  return static_cast<double>(p - 2) * per_block <= count_exchange_time(kind, p, own_processors);
}

bool runs_from_own_counts(std::string_view algorithm) {
  return std::find(kFromOwnCounts.begin(), kFromOwnCounts.end(), algorithm) != kFromOwnCounts.end();
}

CollectiveSpec counts_free_spec(CollectiveKind kind, Rank p, Rank root, Rank rank,
                                std::span<const Count> counts) {
  CollectiveSpec spec;
  assign_counts_free_spec(spec, kind, p, root, rank, counts);
  return spec;
}

void assign_counts_free_spec(CollectiveSpec& spec, CollectiveKind kind, Rank p, Rank root,
                             Rank rank, std::span<const Count> counts) {
  check_kind(kind);
  if (kind == CollectiveKind::kAlltoallv) {
    throw_invalid(
        "an alltoallv's spec without the exchange needs its row and column "
        "(assign_alltoallv_counts_free_spec)");
  }
  if (p < 1) throw_invalid("nranks must be at least 1, got {}", p);
  if (rank < 0 || rank >= p) throw_invalid("rank {} is not in 0..{}", rank, p - 1);
  const auto n = static_cast<std::size_t>(p);
  std::vector<Count> known = std::move(spec.counts);  // its storage, for the new counts
  if (rank == root) {
    if (counts.size() != n) throw_invalid("the root needs {} counts, got {}", p, counts.size());
    known.assign(counts.begin(), counts.end());
  } else {
    if (counts.size() != 1 && counts.size() != n) {
      throw_invalid("rank {} needs its own count or all {}, got {}", rank, p, counts.size());
    }
    const Count own = counts.size() == 1 ? counts[0] : counts[static_cast<std::size_t>(rank)];
    known.assign(n, 0);
    known[static_cast<std::size_t>(rank)] = own;
  }
  spec = CollectiveSpec{};
  spec.kind = kind;
  spec.nranks = p;
  spec.root = root;
  spec.counts = std::move(known);
  validate(spec);
}

void assign_alltoallv_counts_free_spec(CollectiveSpec& spec, Rank rank, std::span<const Count> sent,
                                       std::span<const Count> received) {
  const std::size_t n = sent.size();
  if (received.size() != n) {
    throw_invalid("rank {} sends to {} ranks but receives from {}", rank, n, received.size());
  }
  if (n == 0) throw_invalid("nranks must be at least 1, got 0");
  const auto p = static_cast<Rank>(n);
  if (rank < 0 || rank >= p) throw_invalid("rank {} is not in 0..{}", rank, p - 1);
  const auto me = static_cast<std::size_t>(rank);
  if (sent[me] != received[me]) {
    throw_invalid("rank {} sends itself {} elements but receives {} from itself", rank, sent[me],
                  received[me]);
  }
  std::vector<Count> row_and_column = std::move(spec.counts);  // its storage, for the new counts
  row_and_column.assign(sent.begin(), sent.end());
  row_and_column.insert(row_and_column.end(), received.begin(), received.end());
  spec = CollectiveSpec{};
  spec.kind = CollectiveKind::kAlltoallv;
  spec.nranks = p;
  spec.counts = std::move(row_and_column);
  spec.counts_of = rank;
  validate(spec);
}

}  // namespace optcoll
