// SPDX-License-Identifier: Apache-2.0
// File: barrier synchronization by blocked bitset propagation over happens-before.
#include "optcoll/verify/synchronization.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "optcoll/model/huge_pages.h"
#include "optcoll/verify/happens_before.h"

namespace optcoll::verify_detail {
namespace {

constexpr std::size_t kMaxWork = std::size_t{1} << 30;       // word operations
constexpr std::size_t kMaxMaskWords = std::size_t{1} << 25;  // 256 MB of per-op masks
constexpr std::size_t kMaxBlockWords = 8;                    // 512 ranks per sweep

struct Missing {
  Rank first = kNoRank;  // lowest rank not heard from
  Rank count = 0;
};

class SyncSweep {
 public:
  SyncSweep(const FlatSchedule& flat, std::span<const GlobalOp> starts)
      : flat_(flat), starts_(starts), rank_(flat.op_count()), missing_(flat.nranks) {
    for (Rank r = 0; r < flat.nranks; ++r) {
      const auto first = flat.op_base[static_cast<std::size_t>(r)];
      const auto last = flat.op_base[static_cast<std::size_t>(r) + 1];
      std::fill(rank_.begin() + first, rank_.begin() + last, r);
    }
  }

  // Ranks [64 * first_word, 64 * (first_word + words)).
  void sweep(std::size_t first_word, std::size_t words) {
    const std::size_t n = flat_.op_count();
    reserve_on_huge_pages(masks_, n * words);
    masks_.assign(n * words, 0);
    auto mask = [&](GlobalOp g) { return masks_.data() + static_cast<std::size_t>(g) * words; };
    for (const GlobalOp entry : starts_) {
      const GlobalOp g = entry & ~kCompletesPair;
      std::uint64_t* m = mask(g);
      set_bit(m, rank_[g], first_word, words);
      for (std::uint32_t k = flat_.dep_start[g]; k < flat_.dep_start[g + 1]; ++k) {
        const std::uint64_t* d = mask(flat_.deps[k]);
        for (std::size_t w = 0; w < words; ++w) m[w] |= d[w];
      }
      if ((entry & kCompletesPair) == 0) continue;
      const GlobalOp q = flat_.partner[g];
      const bool g_sends = is_send(flat_.ops[g].kind);
      std::uint64_t* recv = mask(g_sends ? q : g);
      const std::uint64_t* send = mask(g_sends ? g : q);
      for (std::size_t w = 0; w < words; ++w) recv[w] |= send[w];
    }
    collect(first_word, words);
  }

  const std::vector<Missing>& missing() const { return missing_; }

 private:
  static void set_bit(std::uint64_t* m, Rank r, std::size_t first_word, std::size_t words) {
    const auto word = static_cast<std::size_t>(r) / 64;
    if (word >= first_word && word < first_word + words) {
      m[word - first_word] |= std::uint64_t{1} << (static_cast<std::size_t>(r) % 64);
    }
  }

  // For each rank, the block's ranks that no op of it has heard from.
  void collect(std::size_t first_word, std::size_t words) {
    const auto p = static_cast<std::size_t>(flat_.nranks);
    std::vector<std::uint64_t> heard(words);
    for (std::size_t r = 0; r < p; ++r) {
      std::fill(heard.begin(), heard.end(), 0);
      for (GlobalOp g = flat_.op_base[r]; g < flat_.op_base[r + 1]; ++g) {
        const std::uint64_t* m = masks_.data() + static_cast<std::size_t>(g) * words;
        for (std::size_t w = 0; w < words; ++w) heard[w] |= m[w];
      }
      set_bit(heard.data(), static_cast<Rank>(r), first_word, words);  // itself
      for (std::size_t w = 0; w < words; ++w) {
        const std::size_t base = 64 * (first_word + w);
        if (base >= p) break;
        const std::size_t valid = std::min<std::size_t>(64, p - base);
        const std::uint64_t all = valid == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << valid) - 1;
        const std::uint64_t absent = all & ~heard[w];
        if (absent == 0) continue;
        Missing& m = missing_[r];
        if (m.first == kNoRank) m.first = static_cast<Rank>(base + std::countr_zero(absent));
        m.count += static_cast<Rank>(std::popcount(absent));
      }
    }
  }

  const FlatSchedule& flat_;
  std::span<const GlobalOp> starts_;
  std::vector<Rank> rank_;
  std::vector<std::uint64_t> masks_;
  std::vector<Missing> missing_;
};

}  // namespace

bool check_synchronization(const FlatSchedule& flat, std::span<const GlobalOp> starts,
                           DiagnosticList& out) {
  const auto p = static_cast<std::size_t>(flat.nranks);
  if (p <= 1) return true;
  const std::size_t n = flat.op_count();
  const std::size_t words = (p + 63) / 64;
  if (words * (n + flat.deps.size() + 1) > kMaxWork) return false;
  const std::size_t block =
      std::max<std::size_t>(1, std::min({words, kMaxBlockWords, kMaxMaskWords / (n + 1)}));
  SyncSweep sweep(flat, starts);
  for (std::size_t first = 0; first < words; first += block) {
    sweep.sweep(first, std::min(block, words - first));
  }
  for (std::size_t r = 0; r < p; ++r) {
    const Missing& m = sweep.missing()[r];
    if (m.count == 0 || !out.wants_more()) continue;
    const bool idle = flat.op_base[r] == flat.op_base[r + 1];
    Diagnostic d;
    d.check = VerifyCheck::kSynchronization;
    d.rank = static_cast<Rank>(r);
    d.expected = fmt::format("rank {} finishes after all {} ranks started", r, p);
    d.actual = fmt::format("{} ranks not waited for (first: rank {})", m.count, m.first);
    d.message = idle ? fmt::format(
                           "rank {} has no ops, so it can leave the barrier before any other "
                           "rank enters it",
                           r)
                     : fmt::format(
                           "rank {} can leave the barrier before rank {} has entered it: no op "
                           "of rank {} happens before rank {}'s ops complete{}",
                           r, m.first, m.first, r,
                           m.count > 1 ? fmt::format(" (nor of {} other ranks)", m.count - 1)
                                       : std::string());
    out.add(std::move(d));
  }
  return true;
}

}  // namespace optcoll::verify_detail
