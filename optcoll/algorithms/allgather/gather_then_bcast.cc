// SPDX-License-Identifier: Apache-2.0
// allgather/gather_then_bcast (also allgatherv/gather_then_bcast) — binomial gather of every
// block to rank 0, then binomial broadcast of the assembled vector from rank 0.
//
//   p = 4:  gather 1→0, 3→2, 2→0 [2,3];  bcast 0→2 [0..3], 0→1, 2→3
//
// Cost (alpha-beta, one port, regular blocks m, n = p·m, p a power of two, copy = 0):
//   2·log2(p)·α + (log2(p) + (p-1)/p)·nβ   (Chan et al.'s MST allgather)
// Restrictions: none.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (allgather = gather + bcast).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_gather_then_bcast(const CollectiveSpec& spec, const Params& /*params*/,
                                           const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/gather_then_bcast");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  const Slice assembled = output_of(layout, 0);
  patterns::emit_tree_gather(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst),
                             patterns::virtual_positions(p, 0), assembled);
  patterns::emit_tree_bcast(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kLargestFirst),
                            assembled);
  return std::move(b).finish();
}

// Estimate: the binomial gather to rank 0 (patterns::tree_gather_time), then the binomial
// broadcast of the n elements, ceil(log2 p)(α + nβ).
std::optional<Estimate> estimate_allgather_gather_then_bcast(const CollectiveSpec& spec,
                                                             const Params& /*params*/,
                                                             const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  std::vector<Count> blocks;
  for (Rank r = 0; r < p; ++r) blocks.push_back(layout.block(r));
  const auto gather_tree = patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst);
  const Time time =
      patterns::tree_gather_time(gather_tree, patterns::virtual_positions(p, 0), blocks, *c) +
      static_cast<Time>(ceil_log2(p)) * c->message(layout.total());
  const double elements = patterns::tree_subtree_elements(gather_tree, blocks) +
                          static_cast<double>(p - 1) * static_cast<double>(layout.total());
  return make_estimate(spec, time, elements, 5.0 * p, false);
}

}  // namespace optcoll::algorithms
