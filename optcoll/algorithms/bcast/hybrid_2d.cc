// SPDX-License-Identifier: Apache-2.0
// bcast/hybrid_2d_mst, bcast/hybrid_2d_scatter_mst, bcast/hybrid_2d_scatter — Chan et al.'s
// three 2-D broadcast options on a c x r grid (dims=cxr): bcast/hybrid (patterns/hybrid.h)
// with the kinds of each option fixed. dims defaults to the grid whose cost formula is least
// under the model (recorded in the schedule's params).
//   option 1, hybrid_2d_mst (kinds ss): MST broadcast in the first dimension, then MST
//     broadcast in the second.
//   option 2, hybrid_2d_scatter_mst (kinds ls): scatter in the first dimension (c), MST
//     broadcast in the second (r), allgather in the first.
//   option 3, hybrid_2d_scatter (kinds ll): scatter in both dimensions, then allgather in
//     both (reverse order).
//
//   p = 8, dims 2x4, root 0: see bcast/hybrid with kinds=ss (option 1), ls (2), ll (3).
//
// Cost (alpha-beta, full duplex, one port, c and r powers of two, p | n):
//   option 1: log2(p)(α + nβ), the same as the 1-D MST (any grid)
//   option 2: (log2(p) + c - 1)α + (2(c-1) + log2(r))/c·nβ
//   option 3: (log2(p) + r + c - 2)α + 2(p-1)/p·nβ
// Restrictions: dims must be two factors multiplying to p. Any p (p prime: p x 1), any root,
//   any n.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (2-D broadcast, options 1-3).

#include <string>

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

namespace {

// One of Chan et al.'s options: its registry name and the kinds of patterns/hybrid.h.
struct Option2d {
  const char* name;
  const char* kinds;
};
constexpr Option2d kOption1{"bcast/hybrid_2d_mst", "ss"};
constexpr Option2d kOption2{"bcast/hybrid_2d_scatter_mst", "ls"};
constexpr Option2d kOption3{"bcast/hybrid_2d_scatter", "ll"};

Schedule build_option(const Option2d& option, const CollectiveSpec& spec, const Params& params,
                      const CostModel& model) {
  ScheduleBuilder b(spec, option.name);
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false, option.kinds);
  b.set_params("dims=" + patterns::dims_to_string(choice.dims));
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) bases.push_back(output_of(b.layout(), r));
  patterns::hybrid_bcast(b, patterns::Grid(choice.dims), choice.kinds, bases, spec.root);
  return std::move(b).finish();
}

// Estimate: tree_grid_estimate over the grid the builder resolves.
std::optional<Estimate> estimate_option(const Option2d& option, const CollectiveSpec& spec,
                                        const Params& params, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false, option.kinds);
  return tree_grid_estimate(spec, *c, choice, false,
                            "dims=" + patterns::dims_to_string(choice.dims));
}

}  // namespace

Schedule build_bcast_hybrid_2d_mst(const CollectiveSpec& spec, const Params& params,
                                   const CostModel& model) {
  return build_option(kOption1, spec, params, model);
}
Schedule build_bcast_hybrid_2d_scatter_mst(const CollectiveSpec& spec, const Params& params,
                                           const CostModel& model) {
  return build_option(kOption2, spec, params, model);
}
Schedule build_bcast_hybrid_2d_scatter(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model) {
  return build_option(kOption3, spec, params, model);
}

std::optional<Estimate> estimate_bcast_hybrid_2d_mst(const CollectiveSpec& spec,
                                                     const Params& params, const CostModel& model) {
  return estimate_option(kOption1, spec, params, model);
}
std::optional<Estimate> estimate_bcast_hybrid_2d_scatter_mst(const CollectiveSpec& spec,
                                                             const Params& params,
                                                             const CostModel& model) {
  return estimate_option(kOption2, spec, params, model);
}
std::optional<Estimate> estimate_bcast_hybrid_2d_scatter(const CollectiveSpec& spec,
                                                         const Params& params,
                                                         const CostModel& model) {
  return estimate_option(kOption3, spec, params, model);
}

}  // namespace optcoll::algorithms
