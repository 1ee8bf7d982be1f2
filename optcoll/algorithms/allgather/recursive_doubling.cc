// SPDX-License-Identifier: Apache-2.0
// allgather/recursive_doubling (also allgatherv) — in step k = 0, 1, ... every rank
// exchanges everything it holds with the rank at distance 2^k (the held blocks are always a
// contiguous run). For p not a power of two the first 2·rem ranks fold pairwise (rank 2i
// gives its block to 2i+1 first and gets the whole result back last), rem = p - 2^floor(log2 p)
// (patterns/butterfly.h).
//
//   p = 4:  step 0: 0↔1, 2↔3 (one block each)   step 1: 0↔2, 1↔3 (two blocks each)
//   p = 5:  0→1 (block 0); butterfly over {1, 2, 3, 4}; 1→0 (everything)
//
// Cost (alpha-beta, full duplex, one port, regular blocks m, n = p·m):
//   p a power of two: log2(p)·α + (p-1)·mβ + m·copy
//   otherwise: the butterfly over 2^floor(log2 p) ranks (whose first rem ranks hold two
//   blocks) plus (α + mβ) before and (α + nβ) after.
// Restrictions: none (any p, irregular and empty blocks).
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (recursive doubling allgather);
//            Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007.

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_recursive_doubling(const CollectiveSpec& spec, const Params& /*params*/,
                                            const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/recursive_doubling");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  std::vector<Slice> bases;
  std::vector<Count> sizes;
  for (Rank r = 0; r < p; ++r) {
    b.copy(r, input_of(layout, r), block_in(layout, Buf::kOutput, r));
    bases.push_back(output_of(layout, r));
    sizes.push_back(layout.block(r));
  }
  patterns::doubling_allgather(b, patterns::all_ranks(p), bases, patterns::parts_of_sizes(sizes));
  return std::move(b).finish();
}

// Estimate: the copy of the own block, then patterns::doubling_allgather_time.
std::optional<Estimate> estimate_allgather_recursive_doubling(const CollectiveSpec& spec,
                                                              const Params& /*params*/,
                                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  std::vector<Count> blocks;
  for (Rank r = 0; r < p; ++r) blocks.push_back(layout.block(r));
  const double n = static_cast<double>(layout.total());
  return make_estimate(
      spec, c->copy_of(largest_block(spec)) + patterns::doubling_allgather_time(blocks, *c),
      (p - 1) * n, 2.0 * p * (ceil_log2(p) + 2), false);
}

}  // namespace optcoll::algorithms
