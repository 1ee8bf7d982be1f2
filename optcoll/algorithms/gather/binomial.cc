// SPDX-License-Identifier: Apache-2.0
// gather/binomial (also gatherv/binomial) — the mirror image of scatter/binomial: every rank
// collects its subtree's blocks in scratch (smallest subtree first) and sends them to its
// parent in one message. Blocks may differ in size (gatherv) and may be empty.
//
//   p = 8, root 0, block m:  1→0 3→2 5→4 7→6 (m)   2→0 6→4 (2m)   4→0 [4..7] (4m)
//
// Cost (alpha-beta, one port, regular blocks m, p a power of two, copy = 0):
//   log2(p)·α + (p-1)·m·β.  Every inner rank first copies its own block into place (m·copy),
//   overlapping its children's work (Träff's "interior nodes always copy").
// Restrictions: none. With a root other than 0 the subtree containing rank 0 wraps around
//   rank p-1 and reaches the root as two messages (one per run of consecutive ranks).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (MST gather); Träff,
//            "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019 (binomial).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_gather_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/binomial");
  auto tree = patterns::binomial_tree(spec.nranks, spec.root, patterns::ChildOrder::kSmallestFirst);
  patterns::emit_tree_gather(b, tree, patterns::virtual_positions(spec.nranks, spec.root),
                             output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: patterns::tree_gather_time over the builder's tree.
std::optional<Estimate> estimate_gather_binomial(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  std::vector<Count> blocks;
  for (Rank r = 0; r < spec.nranks; ++r) blocks.push_back(layout.block(r));
  const auto tree =
      patterns::binomial_tree(spec.nranks, spec.root, patterns::ChildOrder::kSmallestFirst);
  const auto positions = patterns::virtual_positions(spec.nranks, spec.root);
  return make_estimate(spec, patterns::tree_gather_time(tree, positions, blocks, *c),
                       patterns::tree_subtree_elements(tree, blocks), 3.0 * spec.nranks, false);
}

}  // namespace optcoll::algorithms
