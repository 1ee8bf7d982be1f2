// SPDX-License-Identifier: Apache-2.0
// scatter/binomial (also scatterv/binomial) — the root sends each subtree of a binomial tree
// the blocks of all its ranks in one message, largest subtree first; inner ranks keep their
// own block and pass the rest on. Blocks may differ in size (scatterv) and may be empty.
//
//   p = 8, root 0, block m:  0→4 [4..7] (4m)   0→2 [2,3], 4→6 [6,7] (2m)   0→1, 2→3, 4→5, 6→7 (m)
//
// Cost (alpha-beta, one port, regular blocks m, p a power of two, copy = 0):
//   log2(p)·α + (p-1)·m·β   (= log p·α + (p-1)/p·nβ with n = p·m; Chan et al.)
//   Each inner rank also copies its own block out of scratch (m·copy).
// Restrictions: none. With a root other than 0 the subtree containing rank 0 wraps around
//   rank p-1 and is sent by the root as two messages (one per run of consecutive ranks).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (MST scatter).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_scatter_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                                const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/binomial");
  auto tree = patterns::binomial_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  patterns::emit_tree_scatter(b, tree, patterns::virtual_positions(spec.nranks, spec.root),
                              input_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: patterns::tree_scatter_time over the builder's tree.
std::optional<Estimate> estimate_scatter_binomial(const CollectiveSpec& spec,
                                                  const Params& /*params*/,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  std::vector<Count> blocks;
  for (Rank r = 0; r < spec.nranks; ++r) blocks.push_back(layout.block(r));
  const auto tree =
      patterns::binomial_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  const auto positions = patterns::virtual_positions(spec.nranks, spec.root);
  return make_estimate(spec, patterns::tree_scatter_time(tree, positions, blocks, *c),
                       patterns::tree_subtree_elements(tree, blocks), 3.0 * spec.nranks, false);
}

}  // namespace optcoll::algorithms
