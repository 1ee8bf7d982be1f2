// SPDX-License-Identifier: Apache-2.0
// File: the rank sets of symbolic values ("the combination of the inputs of ranks S"), as
// compact canonical ids. A contiguous range first..last, and a range that wraps around past
// rank p-1 (0..b together with a..p-1: what ring algorithms and trees over ranks relabelled
// from a root produce), are encoded in the id itself; any other set (a sorted list of
// disjoint, non-adjacent ranges, which only commutative reductions create) is interned once,
// so sets compare by id and a ring allreduce at p = 1024, with ~1M distinct partial sums,
// interns none.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll::verify_detail {

struct RankRange {
  Rank first = 0;
  Rank last = 0;
};

// A canonical set id: equal sets have equal ids. Values >= kFirstSpecial are not sets.
using SetId = std::uint64_t;
inline constexpr SetId kUndefined = ~SetId{0};    // never written (or combined with such)
inline constexpr SetId kInvalid = ~SetId{0} - 1;  // result of a reported bad combination
inline constexpr SetId kMixed = ~SetId{0} - 2;    // not a value: marks a multi-run cell
inline constexpr SetId kFirstSpecial = kMixed;
inline constexpr SetId kInternedBit = SetId{1} << 62;
inline constexpr SetId kWrappedBit = SetId{1} << 61;
// Only for reproducible specs: marks a contiguous range first..last whose value was built
// as the left fold ((x_first ⊕ x_first+1) ⊕ ...) ⊕ x_last — the one association that
// `reproducible` accepts. Single ranks carry it from the start; every other combination
// drops it. (Set operations ignore it: range_of masks it off.)
inline constexpr SetId kFoldBit = SetId{1} << 60;

// Room for the ranges of a set encoded in its id.
using InlineRanges = std::array<RankRange, 2>;

inline bool is_set(SetId id) { return id < kFirstSpecial; }

class RankSets {
 public:
  explicit RankSets(Rank nranks);

  // The set first..last (ranks < 2^24, as validate(CollectiveSpec) guarantees).
  static SetId range(Rank first, Rank last) {
    return (static_cast<SetId>(first) << 24) | static_cast<SetId>(last);
  }
  static bool is_range(SetId id) { return id < kWrappedBit; }
  static RankRange range_of(SetId id) {
    return {static_cast<Rank>((id >> 24) & 0xffffff), static_cast<Rank>(id & 0xffffff)};
  }

  // The disjoint ranges of a set, in rank order; `storage` backs the result for sets
  // encoded in their id.
  std::span<const RankRange> ranges(SetId id, InlineRanges& storage) const;

  // The union of two disjoint sets. If they share ranks, returns kInvalid and stores the
  // first shared range in `shared`.
  SetId unite(SetId a, SetId b, RankRange& shared);

  // "x[5]{0..3,5,7..9}", "undefined", "invalid" (a value: element `index` of the set).
  std::string format_value(Count index, SetId id) const;
  std::string format_set(SetId id) const;  // "{0..3,5}"

  std::size_t interned() const { return start_.size() - 1; }

 private:
  SetId canonical(std::span<const RankRange> ranges);  // encoded inline or interned
  SetId intern(std::span<const RankRange> ranges);
  std::size_t probe(std::uint64_t hash, std::span<const RankRange> ranges) const;
  void grow();

  std::vector<RankRange> pool_;       // ranges of every interned set, back to back
  std::vector<std::uint32_t> start_;  // set i owns pool_[start_[i] .. start_[i+1])
  std::vector<std::uint64_t> hash_;   // per interned set (for rehashing)
  // Open addressing: (high 32 bits of the hash) << 32 | (set index + 1); 0 = empty. The tag
  // lets a probe skip other sets without touching their ranges (one cache miss, not three).
  std::vector<std::uint64_t> table_;
  Rank nranks_;
  std::vector<RankRange> merged_;  // scratch for unite()
};

}  // namespace optcoll::verify_detail
