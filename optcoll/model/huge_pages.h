// SPDX-License-Identifier: Apache-2.0
// File: the large arrays of the verifier, the validator and the simulator on transparent
// huge pages. A schedule of millions of ops gets flat arrays of hundreds of megabytes, which
// the first write faults in one 4 KiB page at a time: at p = 65,536 (the two-level
// allreduce, 16 M ops) 1.3 M page faults, a third of the run's time on a KVM guest whose
// faults cost about 8 us each. Asking the kernel to back such an array with 2 MiB pages
// before it is first written (madvise MADV_HUGEPAGE: Linux's transparent huge pages in
// their "madvise" mode, Debian's default) makes one fault of each 512, and fewer TLB misses
// while the array is read. Advice only: a kernel without transparent huge pages, another
// system, or an allocation that cannot be backed by them leaves the array as it was.
//
//   std::vector<Hot> hot;
//   reserve_on_huge_pages(hot, n);  // before the first write: then assign / resize
//   hot.resize(n);
#pragma once

#include <cstddef>
#include <vector>

namespace optcoll {

// Arrays smaller than this are left alone: they would get at most one huge page, and
// advice on a small heap block splits the heap's mapping for nothing.
inline constexpr std::size_t kHugePageAdviceBytes = std::size_t{8} << 20;

// Advises the kernel to back the whole 2 MiB pages within [data, data + bytes) with huge
// pages. Never fails: refused advice changes nothing but speed.
void advise_huge_pages(const void* data, std::size_t bytes) noexcept;

// Gives `v` capacity for `n` elements and, when that is kHugePageAdviceBytes or more and
// `v` had to grow, advises huge pages for it before anything is written there. Call it on
// an empty vector, right before the assign or resize that first writes it (a vector with
// elements would be copied into the new storage, and that storage written).
template <class T>
void reserve_on_huge_pages(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  if (n * sizeof(T) >= kHugePageAdviceBytes) advise_huge_pages(v.data(), n * sizeof(T));
}

}  // namespace optcoll
