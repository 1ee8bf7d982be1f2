// SPDX-License-Identifier: Apache-2.0
// exscan/recursive_doubling — the exclusive variant of scan/recursive_doubling: in step
// k = 0, 1, ..., ceil(log2 p)-1, with d = 2^k, every rank r with r + d < p sends its partial
// P_r (the reduction of the inputs of ranks max(0, r-d+1)..r, own input included) to r + d,
// and every rank r ≥ d combines the value Y it receives from r - d on the LEFT of two things:
// its partial (P_r = Y ⊕ P_r, only if it still sends in a later step, r + 2d < p) and its
// output prefix O_r, which leaves out its own input (O_r = Y ⊕ O_r; in step 0, O_r = Y).
// After the last step O_r = x0 ⊕ ... ⊕ x(r-1). Rank 0 has no output (optcoll defines
// exscan's rank-0 output as empty; MPI leaves it undefined); its partial is x0 throughout.
//
//   p = 6:  step 0 (d=1): O1 = x0  O2 = x1  ...  O5 = x4;   P1 = x0⊕x1  P2 = x1⊕x2  P3 = x2⊕x3
//           step 1 (d=2): O2 = x0⊕x1  O3 = (x0⊕x1)⊕x2  O4 = (x1⊕x2)⊕x3  O5 = (x2⊕x3)⊕x4
//           step 2 (d=4): O4 = x0⊕(x1..x3)  O5 = (x0⊕x1)⊕(x2..x4)
//
// Step 0 receives into the output, and a rank that sends again builds P_r = O_r ⊕ xr in
// scratch (a copy of its input, then the combination). Later steps receive into scratch. A
// rank combines into P_r before O_r (its next send waits only for P_r) and posts each
// receive only after its previous step's combinations (as scan/recursive_doubling: an early
// receive would take the port while the rank still has to combine).
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap), L = ceil(log2 p), p ≥ 4:
//   L·(α + nβ) + n·copy + (2L − 2)·nγ   if p > 3·2^(L-2), else one nγ less
// Steps 0 and L-1 put one combination on the critical path, each middle step two (the
// partial and the prefix) — except step L-2 when no rank does both there, which is when
// p ≤ 3·2^(L-2) (a rank r ≥ 2^(L-2) updates its partial only if r + 2^(L-1) < p).
// The copy of step 0 is on the path once. p = 3: 2(α + nβ) + nγ; p = 2: α + nβ; p = 1:
// nothing.
// Restrictions: none (any p; non-commutative operators). Not a left fold from p = 5 on
//   (rank 4 gets x0 ⊕ ((x1 ⊕ x2) ⊕ x3)), so not for reproducible specs.
// Reference: Hillis, Steele, "Data parallel algorithms", CACM 29(12), 1986. MPICH's
//   recursive-doubling exscan (src/mpi/coll/exscan) keeps the same two values (partial_scan
//   and the result) in the butterfly form (exchange with rank XOR 2^k).

#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_exscan_recursive_doubling(const CollectiveSpec& spec, const Params& /*params*/,
                                         const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "exscan/recursive_doubling");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Count n = spec.count;
  // Rank r sends again after step 0 iff r + 2 < p: only those ranks keep a partial.
  std::vector<Slice> partial(static_cast<std::size_t>(p));
  std::vector<Slice> incoming(static_cast<std::size_t>(p));
  if (p > 1) partial[0] = input_of(layout, 0);
  for (Rank r = 1; r < p; ++r) {
    if (r + 2 < p) partial[static_cast<std::size_t>(r)] = b.scratch(r, n);
    if (r >= 2) incoming[static_cast<std::size_t>(r)] = b.scratch(r, n);
  }
  std::vector<OpId> combined(static_cast<std::size_t>(p), kNoOp);  // the last combination
  for (Rank d = 1; d < p; d *= 2) {
    // Every send of the step before any combination, so that each sends the old partial.
    for (Rank r = d; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const Rank from = r - d;
      const Slice src = d == 1 ? input_of(layout, from) : partial[static_cast<std::size_t>(from)];
      const Slice dst = d == 1 ? output_of(layout, r) : incoming[i];
      const auto t = b.transfer(from, r, src, dst);
      b.add_dependency(r, combined[i], t.recv);  // see the header: no early receive
      if (d == 1) combined[i] = t.recv;
    }
    for (Rank r = d; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const Slice out = output_of(layout, r);
      if (d == 1) {
        if (r + 2 < p) {
          b.copy(r, input_of(layout, r), partial[i]);
          combined[i] = b.reduce(r, out, partial[i], Side::kLeft);  // P = x(r-1) ⊕ xr
        }
        continue;
      }
      if (r + 2 * d < p) b.reduce(r, incoming[i], partial[i], Side::kLeft);
      combined[i] = b.reduce(r, incoming[i], out, Side::kLeft);
    }
  }
  return std::move(b).finish();
}

// Estimate: L = ceil(log2 p) steps of α + nβ, n·copy and 2L − 2 reductions (one fewer when
// p <= 3·2^(L-2)) for p >= 4; p <= 3: L(α + nβ), plus nγ for p = 3. Exact.
std::optional<Estimate> estimate_exscan_recursive_doubling(const CollectiveSpec& spec,
                                                           const Params& /*params*/,
                                                           const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const std::int64_t log = ceil_log2(p);
  Time time = static_cast<Time>(log) * c->message(n);
  if (p == 3) time += c->reduce(n);
  if (p >= 4) {
    const bool both = p > 3 * (std::int64_t{1} << (log - 2));
    time += c->copy_of(n) + static_cast<Time>(2 * log - 2 - (both ? 0 : 1)) * c->reduce(n);
  }
  double messages = 0;
  for (std::int64_t d = 1; d < p; d *= 2) messages += static_cast<double>(p - d);
  return make_estimate(spec, time, messages * static_cast<double>(n), 3 * messages + p, true);
}

}  // namespace optcoll::algorithms
