// SPDX-License-Identifier: Apache-2.0
// File: the bucket (ring) machinery shared by the torus algorithms
// (docs/math/torus-bucket.md §3, §4): data split into streams (colour x direction x pipeline
// piece), each stream running the 1-D bucket reduce-scatter / allgather along the rings of one
// dimension per phase, in its own dimension order.
#pragma once

#include <string_view>
#include <vector>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::patterns {

// The rings the streams run on: `sizes[q]` is the ring length of dimension q; a rank's
// position on its dimension-q ring, and its neighbours one step either way.
struct RingGeometry {
  std::vector<int> sizes;
  std::vector<int> position;    // [rank * ndims + q]
  std::vector<Rank> neighbour;  // [(rank * ndims + q) * 2 + (step > 0)]
  int ndims() const { return static_cast<int>(sizes.size()); }
  int pos(Rank r, int q) const { return position[static_cast<std::size_t>(r * ndims() + q)]; }
  Rank next(Rank r, int q, int step) const {
    return neighbour[static_cast<std::size_t>((r * ndims() + q) * 2 + (step > 0 ? 1 : 0))];
  }
};

// The torus of the model's topology (which must have p nodes), or a 1-D ring 0..p-1 in rank
// order when the model has none. Rings close through the wrap links; on a mesh the ring
// edge from d-1 back to 0 is routed across the dimension.
RingGeometry torus_geometry(const CostModel& model, Rank p);
// One ring over all p ranks in the given order.
RingGeometry single_ring(const std::vector<Rank>& order);
// The ranks in snake order (reflected Gray code) over the model's torus dimensions; rank
// order without a topology. On a torus with an even first dimension consecutive entries,
// and the last and the first, are neighbours.
std::vector<Rank> snake_order(const CostModel& model, Rank p);

struct BucketPlan {
  int colors = 1;      // colour c runs the dimensions in order (c, c+1, ...) mod N
  int directions = 1;  // 2: each colour's data half clockwise, half anticlockwise
  int pieces = 1;      // pipelining: each stream cut into this many independent pieces
  bool sync = false;   // per-rank phase synchronisation of the colours (torus_bucket.cc)
};

// The parameters of the torus algorithms: sync (0|1), directions (auto|1|2), pieces (>= 1); of the
// single-ring baselines: pieces only.
std::span<const ParamInfo> bucket_params();
std::span<const ParamInfo> ring_params();
// Resolves `directions` (auto: 2 on a bidirectional topology, else 1; fixed_directions > 0
// overrides it and the parameter is not read) and `pieces`, and records them with
// b.set_params. Throws Error(kInvalidArgument) for bad values.
BucketPlan resolve_bucket_plan(const Params& params, const CostModel& model, int colors,
                               int fixed_directions, ScheduleBuilder& b);

// The three collectives (commutative operator; contributions are combined in ring order).
void emit_allreduce(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan);
void emit_reduce_scatter_block(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan);
void emit_allgather(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan);

}  // namespace optcoll::algorithms::patterns
