// SPDX-License-Identifier: Apache-2.0
// exscan/linear — a chain in rank order: rank r receives the prefix x0 ⊕ ... ⊕ x(r-1) from
// rank r-1 straight into its output, and (unless it is the last rank) sends on that prefix
// combined with its own input, prefix ⊕ xr, built in scratch. Rank 0 sends its input and has
// no output (optcoll defines exscan's rank-0 output as empty; MPI leaves it undefined).
//
//   p = 4:  0→1: x0 (out1)   r1: s = x0⊕x1   1→2: s (out2)   r2: s = (x0⊕x1)⊕x2   2→3 (out3)
//
// Every middle rank first copies its input into the scratch (s = xr) and, once the prefix
// has arrived, combines it on the left (s = prefix ⊕ xr). The copies of ranks 2.. run while
// those ranks wait (rank 1 has copied and combined before any of them can receive). Rank 1's
// copy is on the chain: its receive starts at once, and a rank without overlap does not
// compute while it communicates.
//
// Cost (alpha-beta-gamma, one port, no overlap): (p-1)·(α + nβ) + (p-2)·nγ + n·copy for
//   p ≥ 3; p = 2: α + nβ; p = 1: nothing.
// Restrictions: none (non-commutative operators: prefix ⊕ own, in rank order; every output
//   is the left fold, so the algorithm serves reproducible specs).
// Reference: the "basic linear" exscan of Open MPI (ompi/mca/coll/basic, exscan): receive
//   from r-1, reduce with the own input, send to r+1.

#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_exscan_linear(const CollectiveSpec& spec, const Params& /*params*/,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "exscan/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  // What rank r sends on: x0 on rank 0; prefix ⊕ xr in scratch on the middle ranks.
  std::vector<Slice> onward(static_cast<std::size_t>(p));
  if (p > 1) onward[0] = input_of(layout, 0);
  for (Rank r = 1; r + 1 < p; ++r) {
    onward[static_cast<std::size_t>(r)] = b.scratch(r, spec.count);
    b.copy(r, input_of(layout, r), onward[static_cast<std::size_t>(r)]);
  }
  for (Rank r = 1; r < p; ++r) {
    const Slice out = output_of(layout, r);
    b.transfer(r - 1, r, onward[static_cast<std::size_t>(r - 1)], out);
    if (r + 1 < p) b.reduce(r, out, onward[static_cast<std::size_t>(r)], Side::kLeft);
  }
  return std::move(b).finish();
}

// Estimate: (p-1)(α + nβ) + (p-2)nγ + n·copy for p >= 3, (p-1)(α + nβ) below. Exact.
std::optional<Estimate> estimate_exscan_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  Time time = static_cast<Time>(p - 1) * c->message(n);
  if (p >= 3) time += static_cast<Time>(p - 2) * c->reduce(n) + c->copy_of(n);
  return make_estimate(spec, time, static_cast<double>(p - 1) * static_cast<double>(n), 3.0 * p,
                       true);
}

}  // namespace optcoll::algorithms
