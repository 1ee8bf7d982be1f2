// SPDX-License-Identifier: Apache-2.0
// allgather/bruck (also allgatherv) — Bruck's concatenation: rank r keeps the blocks in
// rotated order r, r+1, ..., r-1 (mod p) in scratch. In step k (distance d = 2^k < p) it
// sends its first min(d, p-d) blocks to rank r-d, which appends them; a final local rotation
// puts the blocks in rank order.
//
//   p = 5, rank 0's scratch:  [0] → step 0 (from 1): [0 1] → step 1 (from 2): [0 1 2 3]
//                             → step 2 (from 4): [0 1 2 3 4]
//
// Cost (alpha-beta, full duplex, one port, regular blocks m, n = p·m):
//   ceil(log2 p)·α + (p-1)·mβ + (m + n)·copy    (any p)
// Restrictions: none (any p, irregular and empty blocks: a step then waits for its largest
//   message).
// Reference: Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all
//            communications in multiport message-passing systems", IEEE TPDS 8(11), 1997.

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_bruck(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/bruck");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Count n = layout.total();
  auto prefix = [&](Rank x) { return x >= p ? n : layout.displ(x); };  // blocks 0..x-1
  // Size of blocks r, r+1, ..., r+j-1 (mod p): where block r+j sits in rank r's scratch.
  auto rotated_offset = [&](Rank r, Rank j) {
    return r + j <= p ? prefix(r + j) - prefix(r) : n - prefix(r) + prefix(r + j - p);
  };
  std::vector<Slice> rotated;
  for (Rank r = 0; r < p; ++r) {
    rotated.push_back(b.scratch(r, n));
    b.copy(r, input_of(layout, r), sub(rotated.back(), 0, layout.block(r)));
  }
  std::vector<OpId> last_recv(static_cast<std::size_t>(p), kNoOp);
  for (Rank d = 1; d < p; d *= 2) {
    const Rank blocks = std::min(d, p - d);
    for (Rank r = 0; r < p; ++r) {
      const Rank to = (r - d + p) % p;
      const Count count = rotated_offset(r, blocks);
      const auto t =
          b.transfer(r, to, sub(rotated[static_cast<std::size_t>(r)], 0, count),
                     sub(rotated[static_cast<std::size_t>(to)], rotated_offset(to, d), count));
      if (t.recv != kNoOp) last_recv[static_cast<std::size_t>(to)] = t.recv;
    }
  }
  for (Rank r = 0; r < p; ++r) {
    const Slice& s = rotated[static_cast<std::size_t>(r)];
    const Count tail = n - layout.displ(r);  // blocks r..p-1
    const OpId first = b.copy(r, sub(s, 0, tail), {Buf::kOutput, layout.displ(r), tail});
    b.copy(r, sub(s, tail, layout.displ(r)), {Buf::kOutput, 0, layout.displ(r)});
    // The rotation waits for the last step: the blocks it moves first may have arrived
    // early, and a copy started between two steps (no overlap) would hold the rank's ports
    // and delay every later step of the partners.
    b.add_dependency(r, last_recv[static_cast<std::size_t>(r)], first);
  }
  return std::move(b).finish();
}

// Estimate: the copy of the own block, ceil(log2 p) steps each as long as its largest
// message (the blocks r..r+d-1 a rank forwards), then the rotation's copies of the n
// elements. Exact for equal blocks: ceil(log2 p)α + (p-1)mβ + (m + n)·copy.
std::optional<Estimate> estimate_allgather_bruck(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  const Count n = layout.total();
  auto prefix = [&](Rank x) { return x >= p ? n : layout.displ(x); };
  auto window = [&](Rank r, Rank j) {  // blocks r, ..., r + j - 1 (mod p)
    return r + j <= p ? prefix(r + j) - prefix(r) : n - prefix(r) + prefix(r + j - p);
  };
  Time time = c->copy_of(largest_block(spec)) + c->copy_of(n);
  double elements = 0;
  for (Rank d = 1; d < p; d *= 2) {
    const Rank blocks = std::min(d, p - d);
    Count largest = 0;
    for (Rank r = 0; r < p; ++r) {
      largest = std::max(largest, window(r, blocks));
      elements += static_cast<double>(window(r, blocks));
    }
    time += c->message(largest);
  }
  // When the last step carries few blocks (at most an eighth of the power of two below p),
  // a rank's rotation copies that need no data of that step run before it and hold up a
  // partner's last message by a quarter of that power of two's blocks (measured).
  const auto pow2 = std::int64_t{1} << floor_log2(p);
  const std::int64_t rem = p - pow2;
  const bool late_copy = rem > 0 && rem <= pow2 / 8;
  if (late_copy) time += c->copy_of(largest_block(spec) * (pow2 / 4));
  return make_estimate(spec, time, elements, 2.0 * p * (ceil_log2(p) + 2),
                       spec.counts.empty() && (!late_copy || c->copy == 0));
}

}  // namespace optcoll::algorithms
