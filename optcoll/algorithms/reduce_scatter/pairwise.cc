// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/pairwise (also reduce_scatter_block) — pairwise exchange: in step
// s = 1..p-1 rank r sends its contribution to block (r+s) mod p to that rank and receives
// rank (r-s) mod p's contribution to its own block. To keep rank order it combines the
// senders below it into its output (they arrive r-1, r-2, ..., 0: each on the left) and the
// senders above it into scratch (they arrive p-1, p-2, ..., r+1: each on the left), and
// finally output = op(output, scratch).
//
//   p = 3, rank 0:  s=1 from 2 → hi = x2;  s=2 from 1 → hi = x1·x2;  out = x0·(x1·x2)
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m):
//   at most (p-1)·(α + mβ + mγ) + mγ + m·copy (the final combine; ranks whose first
//   receives are plain run ahead of the lockstep, so it is often less)
// Restrictions: none (any p, non-commutative operators, irregular and empty blocks).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (pairwise exchange reduce-scatter).

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_pairwise(const CollectiveSpec& spec, const Params& /*params*/,
                                       const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/pairwise");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  std::vector<Slice> above(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    b.copy(r, block_in(layout, Buf::kInput, r), output_of(layout, r));
    if (r + 1 < p) above[static_cast<std::size_t>(r)] = b.scratch(r, layout.block(r));
  }
  // Steps are sendrecv pairs, as in MPI libraries: a rank posts step s's send after its
  // receive of step s-1. Nothing else orders the sends (they read the input), and sends
  // posted early would take ports out of step order and stall the partners.
  std::vector<OpId> last_recv(static_cast<std::size_t>(p), kNoOp);
  for (Rank s = 1; s < p; ++s) {
    std::vector<OpId> recv(static_cast<std::size_t>(p), kNoOp);
    for (Rank r = 0; r < p; ++r) {
      const Rank to = (r + s) % p;
      const Slice src = block_in(layout, Buf::kInput, to);
      ScheduleBuilder::Transfer t;
      if (r < to) {
        t = b.transfer_reduce(r, to, src, output_of(layout, to), Side::kLeft);
      } else if (r == p - 1) {  // the first sender above `to`
        t = b.transfer(r, to, src, above[static_cast<std::size_t>(to)]);
      } else {
        t = b.transfer_reduce(r, to, src, above[static_cast<std::size_t>(to)], Side::kLeft);
      }
      b.add_dependency(r, last_recv[static_cast<std::size_t>(r)], t.send);
      recv[static_cast<std::size_t>(to)] = t.recv;
    }
    for (Rank r = 0; r < p; ++r) {
      if (recv[static_cast<std::size_t>(r)] != kNoOp) {
        last_recv[static_cast<std::size_t>(r)] = recv[static_cast<std::size_t>(r)];
      }
    }
  }
  for (Rank r = 0; r + 1 < p; ++r) {
    b.reduce(r, above[static_cast<std::size_t>(r)], output_of(layout, r), Side::kRight);
  }
  return std::move(b).finish();
}

// Bound: the owner of the largest block receives p - 1 contributions to it, one message each.
std::optional<Time> bound_reduce_scatter_pairwise(const CollectiveSpec& spec,
                                                  const CostModel& model) {
  return fan_in_bound(spec, model, spec.nranks - 1, largest_block(spec));
}

// Estimate (the header's upper bound; ranks run ahead of the lockstep): the copy of the own
// block, p - 1 steps of the largest block's message and reduction, the last reduction:
// (p-1)(α + mβ + mγ) + mγ + m·copy.
std::optional<Estimate> estimate_reduce_scatter_pairwise(const CollectiveSpec& spec,
                                                         const Params& /*params*/,
                                                         const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  const Count m = largest_block(spec);
  const Time time =
      c->copy_of(m) + static_cast<Time>(p - 1) * c->message_reduce(m) + (p > 1 ? c->reduce(m) : 0);
  return make_estimate(spec, time, static_cast<double>(p - 1) * static_cast<double>(layout.total()),
                       3.0 * p * p, false);
}

}  // namespace optcoll::algorithms
