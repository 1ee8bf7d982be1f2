// SPDX-License-Identifier: Apache-2.0
// File: what a collective call *means*, independent of algorithm and backend: its kind, its
// buffer layout per rank, and its postcondition in symbolic form (shared by the verifier and
// the tests).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

// One enumerator per MPI collective name. The v-variants are separate kinds (unlike MPI's
// implementations, which share code) because they are separate registry keys: an algorithm is
// registered as "gatherv/binomial" or "gather/binomial", and the CLI takes these names.
enum class CollectiveKind : std::uint8_t {
  kBcast,
  kReduce,
  kScatter,
  kScatterv,
  kGather,
  kGatherv,
  kAllgather,
  kAllgatherv,
  kReduceScatter,       // MPI_Reduce_scatter: per-rank recvcounts
  kReduceScatterBlock,  // MPI_Reduce_scatter_block: uniform block
  kAllreduce,
  kScan,    // MPI_Scan: inclusive prefix reduction in rank order
  kExscan,  // MPI_Exscan: exclusive prefix; rank 0's output is empty (MPI: undefined)
  kAlltoall,
  kAlltoallv,
  kBarrier,
};

// Every kind and its traits, one row each: the names the CLI and the registry use, and the
// properties that validation, layouts, selection and the tests ask about. Adding a kind is a
// row here, its layout and postcondition (collective.cc), and its algorithms.
struct KindTraits {
  CollectiveKind kind;
  std::string_view name;
  bool rooted;            // has a root: bcast, reduce, scatter(v), gather(v)
  bool takes_counts;      // per-rank counts: the v-variants and reduce_scatter
  bool reduction;         // combines contributions with an operator
  bool count_is_message;  // `count` is each rank's whole vector, not one of p blocks
};

inline constexpr KindTraits kCollectiveKinds[] = {
    // kind                              name                rooted counts reduce message
    {CollectiveKind::kBcast, "bcast", true, false, false, true},
    {CollectiveKind::kReduce, "reduce", true, false, true, true},
    {CollectiveKind::kScatter, "scatter", true, false, false, false},
    {CollectiveKind::kScatterv, "scatterv", true, true, false, false},
    {CollectiveKind::kGather, "gather", true, false, false, false},
    {CollectiveKind::kGatherv, "gatherv", true, true, false, false},
    {CollectiveKind::kAllgather, "allgather", false, false, false, false},
    {CollectiveKind::kAllgatherv, "allgatherv", false, true, false, false},
    {CollectiveKind::kReduceScatter, "reduce_scatter", false, true, true, false},
    {CollectiveKind::kReduceScatterBlock, "reduce_scatter_block", false, false, true, false},
    {CollectiveKind::kAllreduce, "allreduce", false, false, true, true},
    {CollectiveKind::kScan, "scan", false, false, true, true},
    {CollectiveKind::kExscan, "exscan", false, false, true, true},
    {CollectiveKind::kAlltoall, "alltoall", false, false, false, false},
    {CollectiveKind::kAlltoallv, "alltoallv", false, true, false, false},
    {CollectiveKind::kBarrier, "barrier", false, false, false, false},
};

// What a value outside the enumeration (a corrupt or hostile spec) reads as: no traits.
inline constexpr KindTraits kUnknownKind{
    CollectiveKind::kBarrier, "unknown", false, false, false, false};

// The row of `kind` (rows are in enumerator order; a static_assert in collective.cc checks).
constexpr const KindTraits& traits(CollectiveKind kind) {
  const auto row = static_cast<std::size_t>(kind);
  return row < std::size(kCollectiveKinds) ? kCollectiveKinds[row] : kUnknownKind;
}
// The kind named `name`, if any (constant-evaluable: algorithms.def's names are checked at
// compile time).
constexpr std::optional<CollectiveKind> parse_collective(std::string_view name) {
  for (const KindTraits& row : kCollectiveKinds) {
    if (row.name == name) return row.kind;
  }
  return std::nullopt;
}

// "bcast", "reduce", ..., "barrier"; "unknown" for a value outside the enumeration.
constexpr std::string_view collective_name(CollectiveKind kind) { return traits(kind).name; }
std::span<const CollectiveKind> all_collectives();

inline bool is_rooted(CollectiveKind kind) { return traits(kind).rooted; }
inline bool takes_counts(CollectiveKind kind) { return traits(kind).takes_counts; }
inline bool is_reduction(CollectiveKind kind) { return traits(kind).reduction; }
inline bool count_is_message(CollectiveKind kind) { return traits(kind).count_is_message; }

// Describes one collective call. Data sizes are element counts.
//
//   count   bcast/reduce/allreduce/scan/exscan: the message; scatter/gather/allgather/
//           reduce_scatter_block: the per-rank block; alltoall: the block per (sender,
//           receiver) pair.
//   counts  scatterv/gatherv/allgatherv/reduce_scatter: one block per rank (size p);
//           alltoallv: a p x p row-major matrix, counts[i*p + j] = elements i sends to j;
//           or, where counts_of names a rank R, R's row then R's column (2p entries).
//   counts_of  alltoallv only: unset for the whole matrix; a rank R when `counts` holds only
//           what R sends each rank (counts[j]) and what each rank sends R (counts[p + i]),
//           every other pair being 0. That is what MPI gives rank R of an alltoallv, in O(p)
//           rather than p^2 (134 MB at p = 4,096): the spec a rank runs without the count
//           exchange (optcoll/plan/counts_free.h). Read pairs through Layout or alltoallv_pair.
//
// Use validate() (or Layout, which validates) before trusting a spec from outside.
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kBcast;
  Rank nranks = 0;
  Rank root = 0;                                 // rooted kinds only; must be 0 otherwise
  Count count = 0;                               // regular kinds only; must be 0 for the v-variants
  std::vector<Count> counts;                     // v-variants only
  std::optional<Rank> counts_of = std::nullopt;  // alltoallv only: `counts` holds its row, column
  bool commutative = true;  // false: the operator is only associative (rank order matters)
  // Reductions only: every result element must be the left fold ((x0 ⊕ x1) ⊕ x2) ⊕ ... in
  // rank order, one fixed association whatever the algorithm, so floating-point results are
  // bit-identical across algorithms, runs and backends (docs/design.md, "Reproducible").
  bool reproducible = false;
  std::size_t elem_bytes = 4;  // used by sim/ (per-byte models) and as a default in exec/

  bool operator==(const CollectiveSpec&) const = default;
};

// Throws Error(kInvalidArgument) naming the first problem: nranks < 1, root out of range, a
// negative count, counts of the wrong length, a negative entry, a total above kMaxCount, ...
void validate(const CollectiveSpec& spec);

// alltoallv: the elements `from` sends to `to`, from either form of the counts (counts_of).
// No checks: the spec must be valid and both ranks in range.
inline Count alltoallv_pair(const CollectiveSpec& spec, Rank from, Rank to) {
  const auto p = static_cast<std::size_t>(spec.nranks);
  if (!spec.counts_of)
    return spec.counts[static_cast<std::size_t>(from) * p + static_cast<std::size_t>(to)];
  const Rank owner = *spec.counts_of;
  if (from == owner) return spec.counts[static_cast<std::size_t>(to)];
  if (to == owner) return spec.counts[p + static_cast<std::size_t>(from)];
  return 0;
}

// alltoallv: calls visit(from, to, count) for every pair that may carry data, row by row:
// all p^2 pairs of the whole matrix; with counts_of = R, R's row and then the rest of R's
// column (2p - 1 pairs; every pair not visited is 0). For the loops over pairs (estimates,
// sums) that would otherwise take p^2 steps on a spec of O(p) counts.
template <class Visit>
void for_each_alltoallv_pair(const CollectiveSpec& spec, Visit&& visit) {
  const Rank p = spec.nranks;
  if (!spec.counts_of) {
    const Count* count = spec.counts.data();
    for (Rank from = 0; from < p; ++from) {
      for (Rank to = 0; to < p; ++to) visit(from, to, *count++);
    }
    return;
  }
  const Rank owner = *spec.counts_of;
  const auto n = static_cast<std::size_t>(p);
  for (Rank to = 0; to < p; ++to) visit(owner, to, spec.counts[static_cast<std::size_t>(to)]);
  for (Rank from = 0; from < p; ++from) {
    if (from != owner) visit(from, owner, spec.counts[n + static_cast<std::size_t>(from)]);
  }
}

// Convenience constructors (validated).
CollectiveSpec make_spec(CollectiveKind kind, Rank nranks, Count count, Rank root = 0);
CollectiveSpec make_spec_v(CollectiveKind kind, Rank nranks, std::vector<Count> counts,
                           Rank root = 0);

// The buffer layout of a (validated) spec: block sizes and displacements in O(1) each.
// Copies share the spec and the tables (they are immutable). alltoallv's two p x (p + 1)
// displacement tables are made at the first send_displ/recv_displ (thread-safe), not with
// the layout: a layout asked only for sizes and totals (bounds, a builder's checks, one
// rank's program) costs O(p) beyond its spec, not 2 p^2 (268 MB at p = 4,096).
class Layout {
 public:
  explicit Layout(CollectiveSpec spec);  // validates
  // A layout of `spec` that does not copy it: `spec` must outlive the layout (and its
  // copies) unchanged. Validates.
  static Layout borrowing(const CollectiveSpec& spec);

  const CollectiveSpec& spec() const { return *spec_; }
  // The spec, moved out where this layout alone owns it (else a copy); the layout is left
  // without one.
  CollectiveSpec release_spec() &&;
  CollectiveKind kind() const { return spec_->kind; }
  Rank nranks() const { return spec_->nranks; }
  Rank root() const { return spec_->root; }

  // Block of rank r: its share of a scatter/gather/allgather/reduce_scatter buffer; the whole
  // message for bcast/reduce/allreduce/scan/exscan; 0 for barrier and alltoall(v) (see
  // pair_count).
  Count block(Rank r) const;
  Count displ(Rank r) const;  // sum of the blocks of ranks 0..r-1
  Count total() const;  // sum of all blocks (the message size for bcast/reduce/allreduce/(ex)scan)

  Count input_count(Rank r) const;
  Count output_count(Rank r) const;
  Count buffer_count(Rank r, Buf buf) const;  // input or output; scratch is the schedule's

  // alltoall(v): elements `from` sends to `to`, where they sit in `from`'s input, and where
  // they land in `to`'s output.
  Count pair_count(Rank from, Rank to) const;
  Count send_displ(Rank from, Rank to) const;
  Count recv_displ(Rank to, Rank from) const;

 private:
  struct PairDispls;  // alltoallv's displacement tables (collective.cc)
  explicit Layout(std::shared_ptr<const CollectiveSpec> spec);
  const PairDispls& pair_displs() const;  // made on first use

  std::shared_ptr<const CollectiveSpec> spec_;
  std::vector<Count> displs_;                // p+1 prefix sums of blocks (v-variants but alltoallv)
  std::vector<Count> sent_, received_;       // alltoallv: each rank's row and column sums
  std::shared_ptr<PairDispls> pair_displs_;  // alltoallv
};

// A run of `count` consecutive buffer elements starting at `offset` whose symbolic value is:
// element `index_base + k` of the combination, in rank order, of the inputs of ranks
// first..last. A single rank's data has first == last.
struct ValueRun {
  Count offset = 0;
  Count count = 0;
  Count index_base = 0;
  Rank first = 0;
  Rank last = 0;
  bool operator==(const ValueRun&) const = default;
};

// What rank r's buffer `buf` holds before the collective starts (runs sorted by offset;
// elements not covered are undefined). Inputs hold the rank's own data; bcast's root holds
// the message in its output buffer (MPI_Bcast has a single buffer).
std::vector<ValueRun> initial_contents(const Layout& layout, Rank r, Buf buf);

// The postcondition: what rank r's output buffer must hold afterwards (runs sorted by
// offset, covering the whole output buffer). scan: rank r holds the combination of ranks
// 0..r; exscan: of ranks 0..r-1 (rank 0 has no output). Barrier has no data; its postcondition is
// synchronization (every rank finishes after every rank started), see needs_synchronization.
std::vector<ValueRun> expected_output(const Layout& layout, Rank r);
bool needs_synchronization(CollectiveKind kind);

// One-line description for messages: "gatherv p=8 root=2 counts=[3,0,...] (total 17)".
std::string describe(const CollectiveSpec& spec);

}  // namespace optcoll
