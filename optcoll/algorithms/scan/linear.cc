// SPDX-License-Identifier: Apache-2.0
// scan/linear — a chain in rank order: rank r receives the prefix x0 ⊕ ... ⊕ x(r-1) from
// rank r-1 into its output, combines its own input on the right, and sends the result on to
// rank r+1. Rank 0 sends its input and copies it to its output.
//
//   p = 4:  0→1: x0   r1: x0⊕x1   1→2   r2: (x0⊕x1)⊕x2   2→3   r3: ((x0⊕x1)⊕x2)⊕x3
//
// Cost (alpha-beta-gamma, one port, no overlap): (p-1)·(α + nβ + nγ) for p ≥ 2, half or
//   full duplex (rank 0's copy runs after its send, off the chain; only at p = 2 with
//   copy > γ is rank 0 the last to finish, at α + nβ + n·copy); p = 1: n·copy.
// Restrictions: none (non-commutative operators: each step is prefix ⊕ own, in rank order;
//   every output is the left fold, so the algorithm serves reproducible specs).
// Reference: the "basic linear" scan of Open MPI (ompi/mca/coll/basic, scan): each rank
//   receives from r-1, reduces, sends to r+1.

#include <algorithm>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_scan_linear(const CollectiveSpec& spec, const Params& /*params*/,
                           const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "scan/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 1; r < p; ++r) {
    const Slice out = output_of(layout, r);
    b.transfer(r - 1, r, r == 1 ? input_of(layout, 0) : output_of(layout, r - 1), out);
    b.reduce(r, input_of(layout, r), out, Side::kRight);  // out = prefix ⊕ x_r
  }
  // Last on rank 0, so that its send of x0 starts first.
  b.copy(0, input_of(layout, 0), output_of(layout, 0));
  return std::move(b).finish();
}

// Estimate: the chain, (p-1)(α + nβ + nγ) (p = 2: + n·max(0, copy − γ), rank 0's copy on the
// path; p = 1: the copy). Exact.
std::optional<Estimate> estimate_scan_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                             const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  Time time = c->copy_of(n);
  if (p > 1) {
    time = static_cast<Time>(p - 1) * c->message_reduce(n) +
           (p == 2 ? std::max<Time>(0, c->copy_of(n) - c->reduce(n)) : 0);
  }
  return make_estimate(spec, time, static_cast<double>(p - 1) * static_cast<double>(n), 3.0 * p,
                       true);
}

}  // namespace optcoll::algorithms
