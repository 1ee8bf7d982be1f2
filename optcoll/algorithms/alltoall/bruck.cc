// SPDX-License-Identifier: Apache-2.0
// alltoall/bruck — Bruck's index algorithm: ceil(log2 p) exchanges of about p/2 blocks each,
// trading bandwidth for latency.
//   1. Rank r rotates its blocks: position i holds its block for rank (r + i) mod p.
//   2. For k = 0, 1, ...: rank r packs the positions i with bit k set into one message to
//      rank (r + 2^k) mod p, and unpacks the message from (r − 2^k) mod p into the same
//      positions. A block at position i travels i ranks in total: it ends at its
//      destination, and position i of rank r then holds the block from (r − i) mod p.
//   3. Rank r copies position i to its output block for source (r − i) mod p.
//
//   p = 5, step k = 0: positions {1, 3} to r+1; k = 1: {2, 3} to r+2; k = 2: {4} to r+4.
//
// Cost (alpha-beta, full duplex, one port, copy = 0):
//   Σ_{k < ceil(log2 p)} (α + c_k·mβ),  c_k = #{1 ≤ i < p : bit k of i is 1} (≈ p/2)
//   = ceil(log2 p)·α + about (p/2)·ceil(log2 p)·mβ. With copy > 0 add the local rotations
//   and the packing and unpacking of every step (about (2 + 2·log2 p)·p·m·copy in all).
// Restrictions: none (any p; zero-size blocks send nothing).
// Reference: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all
//            communications in multiport message-passing systems", IEEE TPDS 8(11), 1997.

#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_alltoall_bruck(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "alltoall/bruck");
  const Rank p = spec.nranks;
  const Count m = spec.count;
  if (m == 0) return std::move(b).finish();
  const Slice in{Buf::kInput, 0, p * m};
  const Slice out{Buf::kOutput, 0, p * m};
  // work[r]: rank r's p positions of m elements.
  std::vector<Slice> work(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    const Slice w = b.scratch(r, p * m);
    work[static_cast<std::size_t>(r)] = w;
    b.copy(r, sub(in, r * m, (p - r) * m), sub(w, 0, (p - r) * m));
    if (r > 0) b.copy(r, sub(in, 0, r * m), sub(w, (p - r) * m, r * m));
  }
  for (Rank bit = 1; bit < p; bit *= 2) {
    std::vector<Rank> positions;
    for (Rank i = 1; i < p; ++i) {
      if ((i & bit) != 0) positions.push_back(i);
    }
    const auto count = static_cast<Count>(positions.size()) * m;
    // Every rank packs before any rank unpacks, so a step sends only the blocks held at
    // its start.
    std::vector<Slice> packs(static_cast<std::size_t>(p));
    std::vector<std::vector<OpId>> packed(static_cast<std::size_t>(p));  // each rank's packs
    for (Rank r = 0; r < p; ++r) {
      const Slice pack = b.scratch(r, count);
      packs[static_cast<std::size_t>(r)] = pack;
      if (!b.emits(r)) continue;  // built for another rank (OneRankBuild)
      for (std::size_t j = 0; j < positions.size(); ++j) {
        packed[static_cast<std::size_t>(r)].push_back(
            b.copy(r, sub(work[static_cast<std::size_t>(r)], positions[j] * m, m),
                   sub(pack, static_cast<Count>(j) * m, m)));
      }
    }
    for (Rank r = 0; r < p; ++r) {
      const Rank to = patterns::ring_mod(std::int64_t{r} + bit, p);
      const Slice unpack = b.scratch(to, count);
      const auto t = b.transfer(r, to, packs[static_cast<std::size_t>(r)], unpack);
      if (!b.emits(to)) continue;
      // Why: a rank packs before it receives. Without overlap a pack (a computation) cannot
      // run while a receive is in progress, so a receive started first would delay the
      // rank's own send of this step by a whole message.
      for (const OpId op : packed[static_cast<std::size_t>(to)]) b.add_dependency(to, op, t.recv);
      for (std::size_t j = 0; j < positions.size(); ++j) {
        b.copy(to, sub(unpack, static_cast<Count>(j) * m, m),
               sub(work[static_cast<std::size_t>(to)], positions[j] * m, m));
      }
    }
  }
  for (Rank r = 0; r < p; ++r) {
    if (!b.emits(r)) continue;
    for (Rank i = 0; i < p; ++i) {
      const Rank from = patterns::ring_mod(std::int64_t{r} - i, p);
      b.copy(r, sub(work[static_cast<std::size_t>(r)], i * m, m), sub(out, from * m, m));
    }
  }
  return std::move(b).finish();
}

// Estimate: the rotation in, then per bit k the pack of c_k blocks, the message of c_k·m
// elements and the unpack (c_k = #{1 <= i < p: bit k of i set}), then the rotation out:
// 2pm·copy + Σ_k (α + c_k·mβ + 2c_k·m·copy).
std::optional<Estimate> estimate_alltoall_bruck(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count m = spec.count;
  if (m == 0) return make_estimate(spec, 0, 0, 0, true);
  Time time = 2 * c->copy_of(p * m);
  double elements = 0;
  double ops = 3.0 * p;
  for (Rank bit = 1; bit < p; bit *= 2) {
    Count blocks = 0;
    for (Rank i = 1; i < p; ++i) blocks += (i & bit) != 0 ? 1 : 0;
    time += c->message(blocks * m) + 2 * c->copy_of(blocks * m);
    elements += static_cast<double>(p) * static_cast<double>(blocks * m);
    ops += 2.0 * p * (static_cast<double>(blocks) + 1);
  }
  return make_estimate(spec, time, elements, ops + 2.0 * p * p, false);
}

}  // namespace optcoll::algorithms
