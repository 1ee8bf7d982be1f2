// SPDX-License-Identifier: Apache-2.0
// File: the tests' view of the naive reference semantics (optcoll/api/reference.h, written
// from the MPI standard and independently of optcoll/model/collective.cc and of every
// schedule) with element combines written here, plus input generators. Given each rank's
// contribution, it computes each rank's expected output buffer; reductions combine in rank
// order x0 (+) x1 (+) ... (+) x(p-1) with a caller-given element combine, so non-commutative
// operators check that an executor preserves rank order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "optcoll/api/reference.h"
#include "optcoll/model/collective.h"

namespace optcoll::testing {

using Bytes = std::vector<std::byte>;

// out = left (+) right for one element. `out` never aliases the operands here.
using ElementCombine =
    std::function<void(const std::byte* left, const std::byte* right, std::byte* out)>;

namespace reference_detail {

inline std::size_t at(Count elems, std::size_t elem_bytes) {
  return static_cast<std::size_t>(elems) * elem_bytes;
}

// The block of rank r (v-variants: counts[r]; otherwise the uniform count).
inline Count block_of(const CollectiveSpec& spec, Rank r) {
  return spec.counts.empty() ? spec.count : spec.counts[static_cast<std::size_t>(r)];
}

// Where rank r's block starts in a buffer holding every rank's block in rank order.
inline Count displacement(const CollectiveSpec& spec, Rank r) {
  Count d = 0;
  for (Rank q = 0; q < r; ++q) d += block_of(spec, q);
  return d;
}

inline Count all_blocks(const CollectiveSpec& spec) { return displacement(spec, spec.nranks); }

// alltoallv: elements i sends to j.
inline Count pair(const CollectiveSpec& spec, Rank i, Rank j) {
  if (spec.kind == CollectiveKind::kAlltoall) return spec.count;
  return spec.counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(spec.nranks) +
                     static_cast<std::size_t>(j)];
}

}  // namespace reference_detail

// How much each rank contributes, in elements: the size of its input buffer, except for
// bcast, where the root contributes the message (MPI_Bcast's single buffer: optcoll keeps
// it in the root's output) and the others nothing.
inline Count contribution_count(const CollectiveSpec& spec, Rank r) {
  using reference_detail::all_blocks;
  using reference_detail::block_of;
  const Rank p = spec.nranks;
  switch (spec.kind) {
    case CollectiveKind::kBcast:
      return r == spec.root ? spec.count : 0;
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan:
      return spec.count;
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
      return r == spec.root ? all_blocks(spec) : 0;
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
      return block_of(spec, r);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
      return all_blocks(spec);
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv: {
      Count total = 0;
      for (Rank j = 0; j < p; ++j) total += reference_detail::pair(spec, r, j);
      return total;
    }
    case CollectiveKind::kBarrier:
      return 0;
  }
  return 0;
}

// Each rank's expected output buffer after the collective (empty where MPI defines none):
// the library's naive reference (optcoll/api/reference.h, written from the MPI standard and
// checked on hand-worked examples in tests/api/reference_test.cc), with `combine` as the
// operator, applied one element at a time in rank order.
inline std::vector<Bytes> reference_outputs(const CollectiveSpec& spec, std::size_t elem_bytes,
                                            const std::vector<Bytes>& contributions,
                                            const ElementCombine& combine) {
  const ReduceOp op = ReduceOp::user(
      "test_combine", spec.commutative,
      [combine, elem_bytes](const std::byte* left, const std::byte* right, std::byte* out,
                            Count n) {
        Bytes tmp(elem_bytes);  // `combine` wants an out that aliases neither operand
        for (Count i = 0; i < n; ++i) {
          const std::size_t at = static_cast<std::size_t>(i) * elem_bytes;
          combine(left + at, right + at, tmp.data());
          std::memcpy(out + at, tmp.data(), elem_bytes);
        }
      });
  return optcoll::reference_outputs(spec, contributions, Datatype::user("test_elem", elem_bytes),
                                    op);
}

// ---- Inputs

// A deterministic pseudo-random 64-bit value for (rank, element index, salt).
inline std::uint64_t mix(Rank r, Count i, std::uint64_t salt = 0) {
  std::uint64_t x = (static_cast<std::uint64_t>(r) + 1) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(i) + 1) * 0xC2B2AE3D27D4EB4Full ^ salt;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

// Fills one element of rank r's contribution (element index i) at `out`.
using ElementFill = std::function<void(Rank r, Count i, std::byte* out)>;

// Every rank's contribution for `spec`, elements filled by `fill`.
inline std::vector<Bytes> make_contributions(const CollectiveSpec& spec, std::size_t elem_bytes,
                                             const ElementFill& fill) {
  std::vector<Bytes> contributions(static_cast<std::size_t>(spec.nranks));
  for (Rank r = 0; r < spec.nranks; ++r) {
    const Count n = contribution_count(spec, r);
    Bytes& c = contributions[static_cast<std::size_t>(r)];
    c.resize(reference_detail::at(n, elem_bytes));
    for (Count i = 0; i < n; ++i) fill(r, i, c.data() + reference_detail::at(i, elem_bytes));
  }
  return contributions;
}

template <typename T>
void store(std::byte* out, T value) {
  std::memcpy(out, &value, sizeof(T));
}

template <typename T>
T load(const std::byte* in) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  return value;
}

// Integers spread over the whole range (sums wrap).
template <typename T>
ElementFill fill_integers(std::uint64_t salt = 0) {
  return
      [salt](Rank r, Count i, std::byte* out) { store<T>(out, static_cast<T>(mix(r, i, salt))); };
}

// Small dyadic values (multiples of 1/8 in [-8, 8)): sums of a few are exact in binary
// floating point, whatever the order.
template <typename T>
ElementFill fill_dyadic(std::uint64_t salt = 0) {
  return [salt](Rank r, Count i, std::byte* out) {
    store<T>(out, static_cast<T>(static_cast<double>(mix(r, i, salt) % 128) / 8.0 - 8.0));
  };
}

// Values in {1, 2, 3} (products of many stay meaningful for integers mod 2^n).
template <typename T>
ElementFill fill_small_positive(std::uint64_t salt = 0) {
  return [salt](Rank r, Count i, std::byte* out) {
    store<T>(out, static_cast<T>(1 + mix(r, i, salt) % 3));
  };
}

// Element combines for the reference, written independently of optcoll's kernels.
template <typename T>
ElementCombine combine_sum() {
  return [](const std::byte* a, const std::byte* b, std::byte* out) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      store<T>(out, static_cast<T>(static_cast<U>(load<T>(a)) + static_cast<U>(load<T>(b))));
    } else {
      store<T>(out, load<T>(a) + load<T>(b));
    }
  };
}

template <typename T>
ElementCombine combine_prod() {
  return [](const std::byte* a, const std::byte* b, std::byte* out) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      store<T>(out, static_cast<T>(static_cast<U>(load<T>(a)) * static_cast<U>(load<T>(b))));
    } else {
      store<T>(out, load<T>(a) * load<T>(b));
    }
  };
}

template <typename T>
ElementCombine combine_min() {
  return [](const std::byte* a, const std::byte* b, std::byte* out) {
    const T x = load<T>(a);
    const T y = load<T>(b);
    store<T>(out, y < x ? y : x);
  };
}

template <typename T>
ElementCombine combine_max() {
  return [](const std::byte* a, const std::byte* b, std::byte* out) {
    const T x = load<T>(a);
    const T y = load<T>(b);
    store<T>(out, x < y ? y : x);
  };
}

// ---- 2x2 integer matrices: a non-commutative (associative) operator.

// Row-major {a, b, c, d} of int64, multiplied with wrapping arithmetic.
inline constexpr std::size_t kMat2Bytes = 4 * sizeof(std::int64_t);

inline void mat2_multiply(const std::byte* left, const std::byte* right, std::byte* out) {
  std::uint64_t l[4];
  std::uint64_t r[4];
  std::memcpy(l, left, sizeof(l));
  std::memcpy(r, right, sizeof(r));
  const std::uint64_t o[4] = {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3],
                              l[2] * r[0] + l[3] * r[2], l[2] * r[1] + l[3] * r[3]};
  std::memcpy(out, o, sizeof(o));
}

// Matrices with small entries, different for every (rank, element): products in different
// orders differ.
inline ElementFill fill_mat2(std::uint64_t salt = 0) {
  return [salt](Rank r, Count i, std::byte* out) {
    std::int64_t m[4];
    for (int k = 0; k < 4; ++k) {
      m[k] = static_cast<std::int64_t>(mix(r, i * 4 + k, salt) % 7) - 3;
    }
    std::memcpy(out, m, sizeof(m));
  };
}

}  // namespace optcoll::testing
