// SPDX-License-Identifier: Apache-2.0
// scan/recursive_doubling — Hillis-Steele (recursive doubling) prefix reduction: in step
// k = 0, 1, ..., ceil(log2 p)-1, with d = 2^k, every rank r with r + d < p sends its partial
// result to r + d, and every rank r ≥ d combines the partial it receives from r - d on the
// LEFT of its own. Rank r's partial, kept in its output buffer, is then the reduction of the
// inputs of ranks max(0, r - 2d + 1)..r: a contiguous rank range ending at r, so rank order
// holds and after the last step it is the whole prefix x0 ⊕ ... ⊕ xr. Rank 0's partial is x0
// throughout: it sends its input, and copies it to its output when first idle (the copy is
// emitted last, so that the step-0 send starts first).
//
//   p = 6:  step 0 (d=1): r1: x0⊕x1  r2: x1⊕x2  r3: x2⊕x3  r4: x3⊕x4  r5: x4⊕x5
//           step 1 (d=2): r2: x0⊕(x1⊕x2)  r3: (x0⊕x1)⊕(x2⊕x3)  r4: x1..x4  r5: x2..x5
//           step 2 (d=4): r4: x0⊕(x1..x4)  r5: (x0⊕x1)⊕(x2..x5)
//
// In step 0 the message lands in the output and the own input is combined on the right
// (out = x(r-1) ⊕ xr, no copy); later steps receive into scratch and combine it on the left
// once the rank's own send of the old partial has completed. A rank posts each receive only
// after its previous step's combination: an earlier receive (the scratch is free, and rank
// 0's sends of x0 are ready at once) would take the port while the rank still has to
// combine, delaying its own next send by a whole transfer.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap), L = ceil(log2 p), p ≥ 2:
//   L·(α + nβ + nγ)   (+ n·max(0, copy − γ) if p ≥ 2^L − 1)
// Rank 0's copy runs while the others combine step 0, so it delays rank 0's step-1 send to
// rank 2 only by what it takes longer than their combination; that delay reaches the last
// step along ranks 2, 6, 14, ..., 2^L − 2, hence only when that rank exists. p = 1: n·copy.
// Half duplex serializes each step's send and receive.
// Restrictions: none (any p; non-commutative operators). Not a left fold for p ≥ 3, so not
//   for reproducible specs.
// Reference: Hillis, Steele, "Data parallel algorithms", CACM 29(12), 1986. MPICH's
//   recursive-doubling scan (src/mpi/coll/scan) is the butterfly form of the same idea: it
//   exchanges with rank XOR 2^k and keeps a partial apart from the result.

#include <algorithm>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_scan_recursive_doubling(const CollectiveSpec& spec, const Params& /*params*/,
                                       const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "scan/recursive_doubling");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Count n = spec.count;
  // Rank r's partial result before step d: its input in step 0 (and on rank 0 always), its
  // output afterwards.
  auto partial = [&](Rank r, Rank d) {
    return d == 1 || r == 0 ? input_of(layout, r) : output_of(layout, r);
  };
  std::vector<Slice> incoming(static_cast<std::size_t>(p));
  std::vector<OpId> combined(static_cast<std::size_t>(p), kNoOp);  // the last combination
  for (Rank r = 2; r < p; ++r) incoming[static_cast<std::size_t>(r)] = b.scratch(r, n);
  for (Rank d = 1; d < p; d *= 2) {
    // Every send of the step before any combination, so that each sends the old partial.
    for (Rank r = d; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const Slice dst = d == 1 ? output_of(layout, r) : incoming[i];
      const auto t = b.transfer(r - d, r, partial(r - d, d), dst);
      b.add_dependency(r, combined[i], t.recv);  // see the header: no early receive
    }
    for (Rank r = d; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      combined[i] = d == 1 ? b.reduce(r, input_of(layout, r), output_of(layout, r), Side::kRight)
                           : b.reduce(r, incoming[i], output_of(layout, r), Side::kLeft);
    }
  }
  b.copy(0, input_of(layout, 0), output_of(layout, 0));
  return std::move(b).finish();
}

// Estimate: L = ceil(log2 p) steps of α + nβ + nγ; rank 0's copy delays the chain of ranks
// 2, 6, ..., 2^L − 2 by n·max(0, copy − γ) when that rank exists (p = 1: the copy). Exact.
std::optional<Estimate> estimate_scan_recursive_doubling(const CollectiveSpec& spec,
                                                         const Params& /*params*/,
                                                         const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const std::int64_t log = ceil_log2(p);
  Time time = c->copy_of(n);
  if (p > 1) {
    const bool late = p >= (std::int64_t{1} << log) - 1;
    time = static_cast<Time>(log) * c->message_reduce(n) +
           (late ? std::max<Time>(0, c->copy_of(n) - c->reduce(n)) : 0);
  }
  double messages = 0;
  for (std::int64_t d = 1; d < p; d *= 2) messages += static_cast<double>(p - d);
  return make_estimate(spec, time, messages * static_cast<double>(n), 3 * messages + p, true);
}

}  // namespace optcoll::algorithms
