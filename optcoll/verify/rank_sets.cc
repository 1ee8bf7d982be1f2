// SPDX-License-Identifier: Apache-2.0
// File: interned rank sets: union with double-count detection, and formatting.
#include "optcoll/verify/rank_sets.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::verify_detail {
namespace {

constexpr std::size_t kInitialSlots = 1024;  // power of two
constexpr std::size_t kMaxFormattedRanges = 8;

std::uint64_t hash_ranges(std::span<const RankRange> ranges) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (const RankRange& r : ranges) {
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r.first)) << 32) |
         static_cast<std::uint32_t>(r.last);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h;
}

// Appends `next` (which starts at or after merged.back().first) to a canonical list.
// Returns false, with the shared ranks in `shared`, when it overlaps the last range.
bool append_range(std::vector<RankRange>& merged, RankRange next, RankRange& shared) {
  if (!merged.empty()) {
    RankRange& back = merged.back();
    if (next.first <= back.last) {
      shared = {next.first, std::min(next.last, back.last)};
      return false;
    }
    if (next.first == back.last + 1) {
      back.last = next.last;
      return true;
    }
  }
  merged.push_back(next);
  return true;
}

}  // namespace

RankSets::RankSets(Rank nranks) : start_{0}, table_(kInitialSlots, 0), nranks_(nranks) {}

std::span<const RankRange> RankSets::ranges(SetId id, InlineRanges& storage) const {
  OPTCOLL_CHECK(is_set(id), "rank set id {} is not a set", id);
  if (is_range(id)) {
    storage[0] = range_of(id);
    return {storage.data(), 1};
  }
  if (id < kInternedBit) {  // wrapped: 0..b and a..p-1, stored as range a..b
    const RankRange ends = range_of(id);
    storage[0] = {0, ends.last};
    storage[1] = {ends.first, nranks_ - 1};
    return {storage.data(), 2};
  }
  const auto i = static_cast<std::size_t>(id & ~kInternedBit);
  return std::span<const RankRange>(pool_).subspan(start_[i], start_[i + 1] - start_[i]);
}

SetId RankSets::unite(SetId a, SetId b, RankRange& shared) {
  if (is_range(a) && is_range(b)) {
    RankRange x = range_of(a);
    RankRange y = range_of(b);
    if (y.first < x.first) std::swap(x, y);
    if (y.first <= x.last) {
      shared = {y.first, std::min(x.last, y.last)};
      return kInvalid;
    }
    if (y.first == x.last + 1) return range(x.first, y.last);
  }
  InlineRanges storage_a;
  InlineRanges storage_b;
  const auto ra = ranges(a, storage_a);
  const auto rb = ranges(b, storage_b);
  merged_.clear();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < ra.size() || j < rb.size()) {
    const bool take_a = j == rb.size() || (i < ra.size() && ra[i].first <= rb[j].first);
    const RankRange next = take_a ? ra[i++] : rb[j++];
    if (!append_range(merged_, next, shared)) return kInvalid;
  }
  return canonical(merged_);
}

SetId RankSets::canonical(std::span<const RankRange> list) {
  if (list.size() == 1) return range(list[0].first, list[0].last);
  if (list.size() == 2 && list[0].first == 0 && list[1].last == nranks_ - 1) {
    return kWrappedBit | range(list[1].first, list[0].last);
  }
  return intern(list);
}

std::size_t RankSets::probe(std::uint64_t hash, std::span<const RankRange> ranges) const {
  const std::size_t mask = table_.size() - 1;
  const std::uint64_t tag = hash >> 32;
  for (std::size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    const std::uint64_t entry = table_[slot];
    if (entry == 0) return slot;
    if ((entry >> 32) != tag) continue;
    const std::size_t i = (entry & 0xffffffffu) - 1;
    const auto stored =
        std::span<const RankRange>(pool_).subspan(start_[i], start_[i + 1] - start_[i]);
    if (std::equal(stored.begin(), stored.end(), ranges.begin(), ranges.end(),
                   [](const RankRange& x, const RankRange& y) {
                     return x.first == y.first && x.last == y.last;
                   })) {
      return slot;
    }
  }
}

SetId RankSets::intern(std::span<const RankRange> ranges) {
  const std::uint64_t hash = hash_ranges(ranges);
  const std::size_t slot = probe(hash, ranges);
  if (table_[slot] != 0) return kInternedBit | ((table_[slot] & 0xffffffffu) - 1);
  const std::size_t index = hash_.size();
  OPTCOLL_CHECK(index + 1 < 0xffffffffu && pool_.size() + ranges.size() < 0xffffffffu,
                "too many distinct rank sets ({})", index);
  pool_.insert(pool_.end(), ranges.begin(), ranges.end());
  start_.push_back(static_cast<std::uint32_t>(pool_.size()));
  hash_.push_back(hash);
  table_[slot] = ((hash >> 32) << 32) | (index + 1);
  if (2 * hash_.size() > table_.size()) grow();
  return kInternedBit | index;
}

void RankSets::grow() {
  std::vector<std::uint64_t> old(table_.size() * 2, 0);
  old.swap(table_);
  const std::size_t mask = table_.size() - 1;
  for (const std::uint64_t entry : old) {
    if (entry == 0) continue;
    std::size_t slot = hash_[(entry & 0xffffffffu) - 1] & mask;
    while (table_[slot] != 0) slot = (slot + 1) & mask;
    table_[slot] = entry;
  }
}

std::string RankSets::format_set(SetId id) const {
  InlineRanges storage;
  const auto list = ranges(id, storage);
  std::string text = "{";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) text += ',';
    if (i == kMaxFormattedRanges) {
      text += "...";
      break;
    }
    if (list[i].first == list[i].last) {
      text += fmt::format("{}", list[i].first);
    } else {
      text += fmt::format("{}..{}", list[i].first, list[i].last);
    }
  }
  return text + "}";
}

std::string RankSets::format_value(Count index, SetId id) const {
  if (id == kUndefined) return "undefined";
  if (id == kInvalid) return "invalid";
  if ((id & kFoldBit) != 0 && id < kWrappedBit) {
    return fmt::format("x[{}]{}(left fold)", index, format_set(id & ~kFoldBit));
  }
  return fmt::format("x[{}]{}", index, format_set(id));
}

}  // namespace optcoll::verify_detail
