// SPDX-License-Identifier: Apache-2.0
// File: collective kinds, spec validation, buffer layouts and postconditions.
#include "optcoll/model/collective.h"

#include <array>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

constexpr bool rows_in_enumerator_order() {
  for (std::size_t i = 0; i < std::size(kCollectiveKinds); ++i) {
    if (static_cast<std::size_t>(kCollectiveKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_enumerator_order(), "kCollectiveKinds: one row per kind, in enum order");
static_assert(std::size(kCollectiveKinds) == static_cast<std::size_t>(CollectiveKind::kBarrier) + 1,
              "kCollectiveKinds: a row for every kind");

constexpr std::array<CollectiveKind, std::size(kCollectiveKinds)> kAllKinds = [] {
  std::array<CollectiveKind, std::size(kCollectiveKinds)> kinds{};
  for (std::size_t i = 0; i < kinds.size(); ++i) kinds[i] = kCollectiveKinds[i].kind;
  return kinds;
}();

// a + b, or an error naming what overflowed (formatted from `what` and `args` only then:
// validate() runs on every call, and formatting on success cost a small call 10%).
template <typename... Args>
Count checked_add(Count a, Count b, fmt::format_string<Args...> what, Args&&... args) {
  if (b > kMaxCount - a) {
    throw_invalid("{} exceeds the limit of 2^48 elements",
                  fmt::format(what, std::forward<Args>(args)...));
  }
  return a + b;
}

template <typename... Args>
Count checked_mul(Count a, Count b, fmt::format_string<Args...> what, Args&&... args) {
  if (a != 0 && b > kMaxCount / a) {
    throw_invalid("{} exceeds the limit of 2^48 elements ({} x {})",
                  fmt::format(what, std::forward<Args>(args)...), a, b);
  }
  return a * b;
}

}  // namespace

std::span<const CollectiveKind> all_collectives() { return kAllKinds; }

bool needs_synchronization(CollectiveKind kind) { return kind == CollectiveKind::kBarrier; }

namespace {

// Each rank's row sum (what it sends) and column sum (what it receives) of an alltoallv.
struct AlltoallvSums {
  std::vector<Count> sent, received;
};

// validate()'s checks of an alltoallv spec of one rank's row and column (counts_of), with
// every rank's row and column sums: the owner's are its row's and its column's; another
// rank sends only to the owner (its column entry) and receives only from it (its row entry).
void check_row_and_column(const CollectiveSpec& spec, AlltoallvSums* sums) {
  const auto p = static_cast<std::size_t>(spec.nranks);
  const Rank owner = *spec.counts_of;
  if (owner < 0 || owner >= spec.nranks) {
    throw_invalid("alltoallv: counts_of {} out of range for nranks {}", owner, spec.nranks);
  }
  if (spec.counts.size() != 2 * p) {
    throw_invalid("alltoallv of rank {}'s counts needs {} (its row, then its column), got {}",
                  owner, 2 * p, spec.counts.size());
  }
  for (std::size_t i = 0; i < spec.counts.size(); ++i) {
    if (spec.counts[i] < 0) {
      throw_invalid("alltoallv: counts[{}] (rank {}'s {} {}) is negative ({})", i, owner,
                    i < p ? "row, to rank" : "column, from rank", i < p ? i : i - p,
                    spec.counts[i]);
    }
  }
  const auto me = static_cast<std::size_t>(owner);
  if (spec.counts[me] != spec.counts[p + me]) {
    throw_invalid("alltoallv: rank {} sends itself {} elements in its row but {} in its column",
                  owner, spec.counts[me], spec.counts[p + me]);
  }
  AlltoallvSums local;
  AlltoallvSums& out = sums != nullptr ? *sums : local;
  out.sent.assign(spec.counts.begin() + static_cast<std::ptrdiff_t>(p), spec.counts.end());
  out.received.assign(spec.counts.begin(), spec.counts.begin() + static_cast<std::ptrdiff_t>(p));
  Count sent = 0;
  Count received = 0;
  for (std::size_t i = 0; i < p; ++i) {
    sent = checked_add(sent, spec.counts[i], "alltoallv: rank {}'s input", owner);
    received = checked_add(received, spec.counts[p + i], "alltoallv: rank {}'s output", owner);
  }
  out.sent[me] = sent;
  out.received[me] = received;
}

// validate()'s checks of an alltoallv's whole p x p matrix, with every rank's row and column
// sums, row by row as the counts lie (a column read down strides p entries per element).
void check_matrix(const CollectiveSpec& spec, AlltoallvSums* sums) {
  const auto p = static_cast<std::size_t>(spec.nranks);
  if (spec.counts.size() != p * p) {
    throw_invalid("alltoallv needs {} counts (nranks x nranks, row = sender), got {}", p * p,
                  spec.counts.size());
  }
  AlltoallvSums local;
  AlltoallvSums& out = sums != nullptr ? *sums : local;
  out.sent.assign(p, 0);
  out.received.assign(p, 0);
  for (std::size_t i = 0; i < p; ++i) {
    const Count* row = spec.counts.data() + i * p;
    Count sent = 0;
    for (std::size_t j = 0; j < p; ++j) {
      if (row[j] < 0) throw_invalid("alltoallv: counts[{}] is negative ({})", i * p + j, row[j]);
      sent = checked_add(sent, row[j], "alltoallv: rank {}'s input", i);
      out.received[j] = checked_add(out.received[j], row[j], "alltoallv: rank {}'s output", j);
    }
    out.sent[i] = sent;
  }
}

// validate()'s checks; for an alltoallv they sum each rank's row and column (for overflow),
// and leave the sums in `sums` when it is given (Layout keeps them: one pass over the p^2
// counts, not two).
void check_spec(const CollectiveSpec& spec, AlltoallvSums* sums) {
  const std::string_view name = collective_name(spec.kind);
  if (name == "unknown") throw_invalid("unknown collective kind {}", static_cast<int>(spec.kind));
  if (spec.nranks < 1) throw_invalid("{}: nranks must be at least 1, got {}", name, spec.nranks);
  if (spec.nranks > (Rank{1} << 24)) {
    throw_invalid("{}: nranks {} exceeds the limit of 2^24", name, spec.nranks);
  }
  if (is_rooted(spec.kind)) {
    if (spec.root < 0 || spec.root >= spec.nranks) {
      throw_invalid("{}: root {} out of range for nranks {}", name, spec.root, spec.nranks);
    }
  } else if (spec.root != 0) {
    throw_invalid("{} has no root (got root {})", name, spec.root);
  }
  if (spec.elem_bytes < 1 || spec.elem_bytes > 4096) {
    throw_invalid("{}: elem_bytes must be in 1..4096, got {}", name, spec.elem_bytes);
  }
  if (spec.counts_of && spec.kind != CollectiveKind::kAlltoallv) {
    throw_invalid("{}: counts_of ({}) is for an alltoallv's row and column only", name,
                  *spec.counts_of);
  }
  if (spec.reproducible && !is_reduction(spec.kind)) {
    throw_invalid("{} combines nothing: 'reproducible' applies to reductions only", name);
  }
  if (spec.kind == CollectiveKind::kBarrier) {
    if (spec.count != 0 || !spec.counts.empty()) throw_invalid("barrier carries no data");
    return;
  }
  if (!takes_counts(spec.kind)) {
    if (!spec.counts.empty()) {
      throw_invalid("{} takes a uniform count, not per-rank counts (got {} counts)", name,
                    spec.counts.size());
    }
    if (spec.count < 0) throw_invalid("{}: count must be non-negative, got {}", name, spec.count);
    if (spec.count > kMaxCount) throw_invalid("{}: count {} exceeds 2^48", name, spec.count);
    // Block-structured kinds hold up to p blocks in one buffer.
    if (!count_is_message(spec.kind)) checked_mul(spec.count, spec.nranks, "{} buffer", name);
    return;
  }
  if (spec.count != 0) {
    throw_invalid("{} takes per-rank counts, not a uniform count (got count {})", name, spec.count);
  }
  if (spec.kind == CollectiveKind::kAlltoallv) {
    if (spec.counts_of) {
      check_row_and_column(spec, sums);
    } else {
      check_matrix(spec, sums);
    }
    return;
  }
  const std::size_t p = static_cast<std::size_t>(spec.nranks);
  if (spec.counts.size() != p) {
    throw_invalid("{} needs {} counts (one per rank), got {}", name, p, spec.counts.size());
  }
  Count total = 0;
  for (std::size_t i = 0; i < p; ++i) {
    if (spec.counts[i] < 0)
      throw_invalid("{}: counts[{}] is negative ({})", name, i, spec.counts[i]);
    total = checked_add(total, spec.counts[i], "{}: the sum of counts", name);
  }
}

}  // namespace

void validate(const CollectiveSpec& spec) { check_spec(spec, nullptr); }

CollectiveSpec make_spec(CollectiveKind kind, Rank nranks, Count count, Rank root) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = nranks;
  spec.count = count;
  spec.root = root;
  validate(spec);
  return spec;
}

CollectiveSpec make_spec_v(CollectiveKind kind, Rank nranks, std::vector<Count> counts, Rank root) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = nranks;
  spec.counts = std::move(counts);
  spec.root = root;
  validate(spec);
  return spec;
}

// alltoallv's displacements, both written in the order the counts are read (row by row):
// send[from*(p+1) + to] = what `from` sends ranks before `to`; recv[from*p + to] = what `to`
// receives from ranks before `from` (row 0: zeros). Of one rank's row and column (counts_of),
// only that rank's: send[to] = what it sends ranks before `to`, recv[from] = what it receives
// from ranks before `from` (p + 1 each; any other rank's are one count or 0).
struct Layout::PairDispls {
  std::once_flag made;
  std::vector<Count> send;
  std::vector<Count> recv;
};

// (Made as a mutable object, so that release_spec may move it out once it is the only owner.)
Layout::Layout(CollectiveSpec spec) : Layout(std::make_shared<CollectiveSpec>(std::move(spec))) {}

CollectiveSpec Layout::release_spec() && {
  // use_count() is 0 for a borrowed spec (no owner) and 1 for one this layout alone owns.
  std::shared_ptr<const CollectiveSpec> spec = std::move(spec_);
  if (spec.use_count() != 1) return *spec;
  return std::move(const_cast<CollectiveSpec&>(*spec));  // made mutable (constructor above)
}

Layout Layout::borrowing(const CollectiveSpec& spec) {
  // An aliasing pointer with no owner: it never deletes `spec`.
  return Layout(std::shared_ptr<const CollectiveSpec>(std::shared_ptr<void>(), &spec));
}

Layout::Layout(std::shared_ptr<const CollectiveSpec> spec) : spec_(std::move(spec)) {
  const auto p = static_cast<std::size_t>(spec_->nranks);
  if (spec_->kind == CollectiveKind::kAlltoallv) {
    AlltoallvSums sums;
    check_spec(*spec_, &sums);  // (sums the rows and columns as it checks them)
    sent_ = std::move(sums.sent);
    received_ = std::move(sums.received);
    pair_displs_ = std::make_shared<PairDispls>();
    return;
  }
  validate(*spec_);
  if (!spec_->counts.empty()) {
    displs_.assign(p + 1, 0);
    for (std::size_t r = 0; r < p; ++r) displs_[r + 1] = displs_[r] + spec_->counts[r];
  }
}

const Layout::PairDispls& Layout::pair_displs() const {
  PairDispls& d = *pair_displs_;
  std::call_once(d.made, [&] {
    const auto p = static_cast<std::size_t>(spec_->nranks);
    if (spec_->counts_of) {
      d.send.assign(p + 1, 0);
      d.recv.assign(p + 1, 0);
      for (std::size_t i = 0; i < p; ++i) {
        d.send[i + 1] = d.send[i] + spec_->counts[i];
        d.recv[i + 1] = d.recv[i] + spec_->counts[p + i];
      }
      return;
    }
    d.send.resize(p * (p + 1));
    d.recv.resize((p + 1) * p);
    for (std::size_t i = 0; i < p; ++i) {
      const Count* row = spec_->counts.data() + i * p;
      Count* send = d.send.data() + i * (p + 1);
      const Count* recv_before = d.recv.data() + i * p;
      Count* recv_after = d.recv.data() + (i + 1) * p;
      send[0] = 0;
      for (std::size_t j = 0; j < p; ++j) {
        send[j + 1] = send[j] + row[j];
        recv_after[j] = recv_before[j] + row[j];
      }
    }
  });
  return d;
}

Count Layout::block(Rank r) const {
  switch (spec_->kind) {
    case CollectiveKind::kBarrier:
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv:
      return 0;
    default:
      return spec_->counts.empty() ? spec_->count : spec_->counts[static_cast<std::size_t>(r)];
  }
}

Count Layout::displ(Rank r) const {
  switch (spec_->kind) {
    case CollectiveKind::kBcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan:
    case CollectiveKind::kBarrier:
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv:
      return 0;
    default:
      return displs_.empty() ? spec_->count * r : displs_[static_cast<std::size_t>(r)];
  }
}

Count Layout::total() const {
  switch (spec_->kind) {
    case CollectiveKind::kBcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan:
      return spec_->count;
    case CollectiveKind::kBarrier:
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv:
      return 0;
    default:
      return displs_.empty() ? spec_->count * spec_->nranks : displs_.back();
  }
}

Count Layout::input_count(Rank r) const {
  const Count n = spec_->count;
  switch (spec_->kind) {
    case CollectiveKind::kBcast:
    case CollectiveKind::kBarrier:
      return 0;
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan:
      return n;
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
      return r == spec_->root ? total() : 0;
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
      return block(r);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
      return total();
    case CollectiveKind::kAlltoall:
      return n * spec_->nranks;
    case CollectiveKind::kAlltoallv:
      return sent_[static_cast<std::size_t>(r)];
  }
  return 0;
}

Count Layout::output_count(Rank r) const {
  const Count n = spec_->count;
  switch (spec_->kind) {
    case CollectiveKind::kBarrier:
      return 0;
    case CollectiveKind::kBcast:
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kScan:
      return n;
    case CollectiveKind::kReduce:
      return r == spec_->root ? n : 0;
    case CollectiveKind::kExscan:
      return r == 0 ? 0 : n;  // MPI leaves rank 0's output undefined: optcoll has none
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
      return block(r);
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
      return r == spec_->root ? total() : 0;
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
      return total();
    case CollectiveKind::kAlltoall:
      return n * spec_->nranks;
    case CollectiveKind::kAlltoallv:
      return received_[static_cast<std::size_t>(r)];
  }
  return 0;
}

Count Layout::buffer_count(Rank r, Buf buf) const {
  switch (buf) {
    case Buf::kInput:
      return input_count(r);
    case Buf::kOutput:
      return output_count(r);
    case Buf::kScratch:
      break;
  }
  return 0;
}

Count Layout::pair_count(Rank from, Rank to) const {
  if (spec_->kind == CollectiveKind::kAlltoall) return spec_->count;
  if (spec_->kind != CollectiveKind::kAlltoallv) return 0;
  return alltoallv_pair(*spec_, from, to);
}

Count Layout::send_displ(Rank from, Rank to) const {
  if (spec_->kind == CollectiveKind::kAlltoall) return spec_->count * to;
  if (spec_->kind != CollectiveKind::kAlltoallv) return 0;
  if (spec_->counts_of) {  // another rank sends only to the owner (PairDispls)
    const Rank owner = *spec_->counts_of;
    if (from == owner) return pair_displs().send[static_cast<std::size_t>(to)];
    return to > owner ? alltoallv_pair(*spec_, from, owner) : 0;
  }
  const auto p = static_cast<std::size_t>(spec_->nranks);
  return pair_displs()
      .send[static_cast<std::size_t>(from) * (p + 1) + static_cast<std::size_t>(to)];
}

Count Layout::recv_displ(Rank to, Rank from) const {
  if (spec_->kind == CollectiveKind::kAlltoall) return spec_->count * from;
  if (spec_->kind != CollectiveKind::kAlltoallv) return 0;
  if (spec_->counts_of) {  // another rank receives only from the owner (PairDispls)
    const Rank owner = *spec_->counts_of;
    if (to == owner) return pair_displs().recv[static_cast<std::size_t>(from)];
    return from > owner ? alltoallv_pair(*spec_, owner, to) : 0;
  }
  const auto p = static_cast<std::size_t>(spec_->nranks);
  return pair_displs().recv[static_cast<std::size_t>(from) * p + static_cast<std::size_t>(to)];
}

std::vector<ValueRun> initial_contents(const Layout& layout, Rank r, Buf buf) {
  std::vector<ValueRun> runs;
  if (buf == Buf::kInput) {
    const Count n = layout.input_count(r);
    if (n > 0) runs.push_back({0, n, 0, r, r});
  } else if (buf == Buf::kOutput && layout.kind() == CollectiveKind::kBcast && r == layout.root() &&
             layout.total() > 0) {
    runs.push_back({0, layout.total(), 0, r, r});
  }
  return runs;
}

std::vector<ValueRun> expected_output(const Layout& layout, Rank r) {
  std::vector<ValueRun> runs;
  const Rank p = layout.nranks();
  const Rank root = layout.root();
  auto add = [&runs](Count offset, Count count, Count index_base, Rank first, Rank last) {
    if (count > 0) runs.push_back({offset, count, index_base, first, last});
  };
  switch (layout.kind()) {
    case CollectiveKind::kBarrier:
      break;
    case CollectiveKind::kBcast:
      add(0, layout.total(), 0, root, root);
      break;
    case CollectiveKind::kReduce:
      if (r == root) add(0, layout.total(), 0, 0, p - 1);
      break;
    case CollectiveKind::kAllreduce:
      add(0, layout.total(), 0, 0, p - 1);
      break;
    case CollectiveKind::kScan:
      add(0, layout.total(), 0, 0, r);
      break;
    case CollectiveKind::kExscan:
      if (r > 0) add(0, layout.total(), 0, 0, r - 1);
      break;
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
      add(0, layout.block(r), layout.displ(r), root, root);
      break;
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
      if (r != root) break;
      [[fallthrough]];
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
      for (Rank q = 0; q < p; ++q) add(layout.displ(q), layout.block(q), 0, q, q);
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
      add(0, layout.block(r), layout.displ(r), 0, p - 1);
      break;
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv:
      for (Rank q = 0; q < p; ++q) {
        add(layout.recv_displ(r, q), layout.pair_count(q, r), layout.send_displ(q, r), q, q);
      }
      break;
  }
  return runs;
}

std::string describe(const CollectiveSpec& spec) {
  std::string text = fmt::format("{} p={}", collective_name(spec.kind), spec.nranks);
  if (is_rooted(spec.kind)) text += fmt::format(" root={}", spec.root);
  if (spec.kind == CollectiveKind::kBarrier) return text;
  if (spec.counts.empty()) {
    text += fmt::format(" count={}", spec.count);
  } else if (spec.counts_of) {
    const auto p = static_cast<std::size_t>(spec.nranks);
    const auto shown = [&](std::size_t first) {
      constexpr std::size_t kShown = 4;
      std::string list;
      for (std::size_t i = 0; i < p && i < kShown; ++i) {
        list += (i ? "," : "") + std::to_string(spec.counts[first + i]);
      }
      return p > kShown ? list + ",..." : list;
    };
    text +=
        fmt::format(" rank {}'s counts: row=[{}] column=[{}]", *spec.counts_of, shown(0), shown(p));
  } else {
    Count total = 0;
    for (const Count c : spec.counts) total += c;
    constexpr std::size_t kShown = 8;
    std::string shown;
    for (std::size_t i = 0; i < spec.counts.size() && i < kShown; ++i) {
      shown += (i ? "," : "") + std::to_string(spec.counts[i]);
    }
    if (spec.counts.size() > kShown) shown += ",...";
    text += fmt::format(" counts=[{}] (total {})", shown, total);
  }
  if (!spec.commutative) text += " noncommutative";
  if (spec.reproducible) text += " reproducible";
  return text;
}

}  // namespace optcoll
