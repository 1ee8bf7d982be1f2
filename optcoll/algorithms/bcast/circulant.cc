// SPDX-License-Identifier: Apache-2.0
// bcast/circulant — round-optimal pipelined broadcast (Träff and Ripke): the message is cut
// into S blocks, which go round a circulant graph in S − 1 + q rounds, q = ceil(log2 p), the
// least any one-ported full-duplex broadcast of S blocks needs. Ranks are relabelled from the
// root (root = 0); skips s_q = p, s_k = ceil(s_{k+1}/2), so s_0 = 1. In round i, with
// k = i mod q, every rank r sends one block to r + s_k and receives one from r − s_k (mod
// p). Each rank's receive schedule (patterns/circulant.h: per k, which block of the current
// phase of q rounds, or of the previous one, it receives in round k) comes from Träff's
// depth-first search in O(q^2) per rank; what a rank sends in round k is what r + s_k
// receives then. Every rank receives every block exactly once, and from its first round on
// sends and receives one block per round.
//
//   p = 5, root 0: skips 1, 2, 3 (q = 3); receive schedules (values v: block v + 3j in phase
//   j) rank 1: 0 −1 −2, rank 2: −3 1 −1, rank 3: −2 −3 2, rank 4: −1 −2 0.
//   S = 2 blocks, 4 rounds (virtual rounds from x = (1 − S) mod q = 2; a block index beyond
//   S − 1 means the last block, sent early, received once):
//     0: 0→3 b0 | 1: 0→1 b1, 3→4 b0 | 2: 0→2 b1, 4→1 b0 | 3: 0→3 b1, 1→4 b1, 4→2 b0
//
// Cost (alpha-beta, one port, full duplex, exact): every op of a rank in round t waits for
// the rank's ops of its previous round, so the simulated time is the longest path through
// the rounds. With S blocks of ceil(m/S) or floor(m/S) elements, the larger ones last,
//   T(S) = (q − 1)(α + ceil(m/S)·β) + S·α + m·β,
//   = (S − 1 + q)(α + (m/S)·β) when S divides m (S − 1 + q rounds of one block each).
//   segment=auto takes the S that minimizes T(S). Checked in
//   tests/sim/circulant_bcast_test.cc: for every p up to 300 and S in {1, 2, 3, q, 17, 100}
//   the schedule verifies and α = 1, β = 0 gives S − 1 + q rounds exactly; T(S) with β > 0
//   and blocks of unequal size at every p up to 70 and every 7th p to 300.
//   α = 100, β = 1, m = 1e5 (optcoll simulate bcast -p P --count 100000 --abstract --alpha 100
//   --beta 1 --ports 1 --duplex full -a ...): docs/experiments.md has the table against
//   bcast/double_binary, bcast/pipelined_binary and bcast/pipelined_chain.
// Restrictions: segment "auto" or a positive integer; any p, any root, any count (S <= m).
// Reference: J. L. Träff, S. Ripke, "Optimal broadcast for fully connected processor-node
//            networks", JPDC 68(7), 2008; J. L. Träff, "Round-optimal n-block broadcast
//            schedules in logarithmic time", arXiv:2312.11236, 2023 (the receive schedules).

#include "optcoll/algorithms/patterns/circulant.h"

#include <cstdint>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {
namespace {

// T(S) = (q − 1)(α + ceil(m/S)β) + Sα + mβ: pipelined_tree_cost with q slots and fanout 1.
Count circulant_blocks(const Params& params, const LinkCost& link, Rank nranks, Count count) {
  return pipelined_segments(params, link, ceil_log2(nranks), /*fanout=*/1, count, false);
}

}  // namespace

Schedule build_bcast_circulant(const CollectiveSpec& spec, const Params& params,
                               const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/circulant");
  const Count n = spec.count;
  const Count blocks = circulant_blocks(params, link_cost(model, spec), spec.nranks, n);
  b.set_params(segment_param_text(n, blocks));
  patterns::emit_circulant_bcast(b, spec.root, blocks, output_of(b.layout(), spec.root));
  return std::move(b).finish();
}

// Estimate: (q − 1)(α + ceil(m/S)β) + Sα + mβ for the S the builder picks. Exact.
std::optional<Estimate> estimate_bcast_circulant(const CollectiveSpec& spec, const Params& params,
                                                 const CostModel& model) {
  if (!closed_form_costs(spec, model)) return std::nullopt;
  const LinkCost link = link_cost(model, spec);
  const std::int64_t q = ceil_log2(spec.nranks);
  const Count blocks = circulant_blocks(params, link, spec.nranks, spec.count);
  const double sends = spec.nranks - 1;
  return make_estimate(
      spec,
      spec.count == 0 || q == 0 ? 0 : pipelined_tree_cost(link, q, 1, spec.count, blocks, false),
      sends * spec.count, 2 * sends * static_cast<double>(blocks), true,
      segment_param_text(spec.count, blocks));
}

}  // namespace optcoll::algorithms
