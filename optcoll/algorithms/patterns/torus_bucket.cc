// SPDX-License-Identifier: Apache-2.0
// File: the bucket machinery of the torus algorithms (torus_bucket.h).
#include "optcoll/algorithms/patterns/torus_bucket.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

// One stream: a region of a buffer (the same on every rank) reduced or gathered along the
// dimensions in `order`, in ring direction `dir`.
struct Stream {
  std::vector<int> order;
  int dir = 1;
  Slice region;
};

std::vector<Stream> make_streams(const RingGeometry& g, const BucketPlan& plan) {
  std::vector<Stream> streams;
  const int n = g.ndims();
  for (int c = 0; c < plan.colors; ++c) {
    for (int d = 0; d < plan.directions; ++d) {
      for (int k = 0; k < plan.pieces; ++k) {
        Stream s;
        for (int i = 0; i < n; ++i) s.order.push_back((i + c) % n);
        s.dir = d == 0 ? 1 : -1;
        streams.push_back(std::move(s));
      }
    }
  }
  return streams;
}

// Rank r's part of the stream's region once the phases before `phase` are done: the region
// cut, phase by phase, into ring-length pieces, keeping the piece of r's position.
Slice segment(const RingGeometry& g, const Stream& s, Rank r, int phase) {
  Slice seg = s.region;
  for (int i = 0; i < phase; ++i) {
    const int q = s.order[static_cast<std::size_t>(i)];
    const auto piece = even_piece(seg.count, g.sizes[static_cast<std::size_t>(q)], g.pos(r, q));
    seg.offset += piece.offset;
    seg.count = piece.count;
  }
  return seg;
}

// The piece of `seg` that belongs to ring position c of dimension q.
Slice chunk(const RingGeometry& g, const Slice& seg, int q, int c) {
  const auto piece = even_piece(seg.count, g.sizes[static_cast<std::size_t>(q)], c);
  return {seg.buf, seg.offset + piece.offset, piece.count};
}

int max_size(const RingGeometry& g) { return *std::max_element(g.sizes.begin(), g.sizes.end()); }

Rank ranks(const RingGeometry& g) { return static_cast<Rank>(g.position.size() / g.sizes.size()); }

// Phase synchronisation per rank (BucketPlan::sync): the colours run their phases on
// different dimensions only while they are in the same phase. A colour that finishes a phase
// early (asymmetric torus) would otherwise start sending on a dimension another colour still
// uses and both would wait for each other's links. So a rank starts a phase's sends only when
// all its sends of the previous phase are done (every colour's last send there), and the sends
// of one stream on a rank go out in step order.
class PhaseGate {
 public:
  PhaseGate(bool enabled, Rank p, std::size_t streams)
      : enabled_(enabled),
        streams_(streams),
        done_(static_cast<std::size_t>(p)),
        last_(static_cast<std::size_t>(p) * streams, kNoOp) {}

  void sent(ScheduleBuilder& b, Rank r, std::size_t stream, OpId send) {
    if (!enabled_) return;
    OpId& last = last_[static_cast<std::size_t>(r) * streams_ + stream];
    if (last == kNoOp) {
      // The first send of this stream in the phase: after the rank's previous phase (above).
      for (const OpId before : done_[static_cast<std::size_t>(r)]) {
        b.add_dependency(r, before, send);
      }
    } else {
      b.add_dependency(r, last, send);  // step order within the stream (above)
    }
    last = send;
  }

  void end_phase() {
    if (!enabled_) return;
    for (std::size_t r = 0; r < done_.size(); ++r) {
      std::vector<OpId> last_sends;
      for (std::size_t k = 0; k < streams_; ++k) {
        const OpId last = last_[r * streams_ + k];
        if (last != kNoOp) last_sends.push_back(last);
        last_[r * streams_ + k] = kNoOp;
      }
      if (!last_sends.empty()) done_[r] = std::move(last_sends);
    }
  }

 private:
  bool enabled_;
  std::size_t streams_;
  std::vector<std::vector<OpId>> done_;
  std::vector<OpId> last_;
};

// Bucket reduce-scatter, all phases: in step t of a phase on a ring of L, the rank at
// position j passes its partial sum of chunk (j - dir (t+1)) mod L to its dir-neighbour,
// which adds its own; after L-1 steps position j holds chunk j summed over the ring.
void reduce_scatter_phases(ScheduleBuilder& b, const RingGeometry& g,
                           const std::vector<Stream>& streams, PhaseGate& gate) {
  const Rank p = ranks(g);
  for (int i = 0; i < g.ndims(); ++i) {
    for (int t = 0; t + 1 < max_size(g); ++t) {
      for (std::size_t k = 0; k < streams.size(); ++k) {
        const Stream& s = streams[k];
        const int q = s.order[static_cast<std::size_t>(i)];
        const int len = g.sizes[static_cast<std::size_t>(q)];
        if (t + 1 >= len) continue;
        for (Rank r = 0; r < p; ++r) {
          const int c = ring_mod(std::int64_t{g.pos(r, q)} - s.dir * (t + 1), len);
          const Slice piece = chunk(g, segment(g, s, r, i), q, c);
          if (piece.count == 0) continue;
          const auto sent = b.transfer_reduce(r, g.next(r, q, s.dir), piece, piece, Side::kLeft);
          gate.sent(b, r, k, sent.send);
        }
      }
    }
    gate.end_phase();
  }
}

// Bucket allgather, the phases in reverse: in step t the rank at position j passes chunk
// (j - dir t) mod L (its own first) to its dir-neighbour.
void allgather_phases(ScheduleBuilder& b, const RingGeometry& g, const std::vector<Stream>& streams,
                      PhaseGate& gate) {
  const Rank p = ranks(g);
  for (int i = g.ndims() - 1; i >= 0; --i) {
    for (int t = 0; t + 1 < max_size(g); ++t) {
      for (std::size_t k = 0; k < streams.size(); ++k) {
        const Stream& s = streams[k];
        const int q = s.order[static_cast<std::size_t>(i)];
        const int len = g.sizes[static_cast<std::size_t>(q)];
        if (t + 1 >= len) continue;
        for (Rank r = 0; r < p; ++r) {
          const int c = ring_mod(std::int64_t{g.pos(r, q)} - s.dir * t, len);
          const Slice piece = chunk(g, segment(g, s, r, i), q, c);
          if (piece.count == 0) continue;
          const auto sent = b.transfer(r, g.next(r, q, s.dir), piece, piece);
          gate.sent(b, r, k, sent.send);
        }
      }
    }
    gate.end_phase();
  }
}

// Block streams (reduce_scatter_block, allgather): stream k takes part k of every block, in
// a scratch region of p parts ordered by `key`: the positions of the block's owner, the
// stream's first dimension most significant, so that every phase cuts along block borders.
std::int64_t key(const RingGeometry& g, const Stream& s, Rank owner) {
  std::int64_t k = 0;
  for (const int q : s.order) k = k * g.sizes[static_cast<std::size_t>(q)] + g.pos(owner, q);
  return k;
}

// Assigns block streams their scratch regions; returns each stream's part of a block.
std::vector<Piece> place_block_streams(std::vector<Stream>& streams, const Slice& scratch, Count m,
                                       Rank p) {
  std::vector<Piece> parts;
  const auto total = static_cast<Rank>(streams.size());
  for (Rank k = 0; k < total; ++k) {
    const Piece part = even_piece(m, total, k);
    streams[static_cast<std::size_t>(k)].region = {scratch.buf, scratch.offset + p * part.offset,
                                                   p * part.count};
    parts.push_back(part);
  }
  return parts;
}

// Copies block part `part` of every owner between the rank-ordered buffer `blocks` (block
// size m) and the stream's region (to_region: blocks -> region), merging runs of owners
// whose keys are consecutive into one copy.
void copy_blocks(ScheduleBuilder& b, const RingGeometry& g, const Stream& s, Rank at,
                 const Slice& blocks, Count m, const Piece& part, bool to_region) {
  const Rank p = ranks(g);
  if (part.count == 0) return;
  Rank first = 0;
  while (first < p) {
    Rank last = first + 1;
    while (last < p && key(g, s, last) == key(g, s, last - 1) + 1 && m == part.count) ++last;
    const Count run = (last - first) * part.count;
    const Slice linear{blocks.buf, blocks.offset + first * m + part.offset, run};
    const Slice region{s.region.buf, s.region.offset + key(g, s, first) * part.count, run};
    if (to_region) {
      b.copy(at, linear, region);
    } else {
      b.copy(at, region, linear);
    }
    first = last;
  }
}

Slice one_scratch(ScheduleBuilder& b, Rank p, Count count) {
  Slice first;
  for (Rank r = 0; r < p; ++r) {
    const Slice s = b.scratch(r, count);
    if (r == 0) first = s;
    OPTCOLL_CHECK(s.offset == first.offset, "scratch offsets differ between ranks");
  }
  return first;
}

constexpr std::array<ParamInfo, 3> kParams{{
    {"sync", "1",
     "1: a rank starts a phase's sends after all its sends of the previous phase (keeps the "
     "colours on different dimensions on asymmetric tori); 0: colours run ahead freely"},
    {"directions", "auto",
     "1: every colour one way round; 2: half of each colour each way (auto: 2 on a "
     "bidirectional topology, else 1)"},
    {"pieces", "1", "pipelining: each colour-direction stream is cut into this many pieces"},
}};

}  // namespace

RingGeometry torus_geometry(const CostModel& model, Rank p) {
  if (!model.topology)
    return single_ring([&] {
      std::vector<Rank> order(static_cast<std::size_t>(p));
      for (Rank r = 0; r < p; ++r) order[static_cast<std::size_t>(r)] = r;
      return order;
    }());
  const Topology& t = *model.topology;
  // build() ran validate_for(model, p) first.
  OPTCOLL_CHECK(t.size() == p, "the model's topology {} has {} nodes, the collective {} ranks",
                to_string(t), t.size(), p);
  RingGeometry g;
  g.sizes = t.dims;
  const int n = t.ndims();
  g.position.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(n));
  g.neighbour.resize(g.position.size() * 2);
  for (Rank r = 0; r < p; ++r) {
    const std::vector<int> c = t.coords(r);
    for (int q = 0; q < n; ++q) {
      const auto i = static_cast<std::size_t>(r * n + q);
      const int d = t.dims[static_cast<std::size_t>(q)];
      g.position[i] = c[static_cast<std::size_t>(q)];
      for (const int step : {-1, 1}) {
        std::vector<int> other = c;
        other[static_cast<std::size_t>(q)] = ring_mod(c[static_cast<std::size_t>(q)] + step, d);
        g.neighbour[i * 2 + (step > 0 ? 1 : 0)] = t.rank_at(other);
      }
    }
  }
  return g;
}

RingGeometry single_ring(const std::vector<Rank>& order) {
  const auto p = static_cast<Rank>(order.size());
  RingGeometry g;
  g.sizes = {static_cast<int>(p)};
  g.position.resize(order.size());
  g.neighbour.resize(order.size() * 2);
  for (Rank i = 0; i < p; ++i) {
    const auto r = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
    g.position[r] = static_cast<int>(i);
    g.neighbour[r * 2] = order[static_cast<std::size_t>(ring_left(i, p))];
    g.neighbour[r * 2 + 1] = order[static_cast<std::size_t>(ring_right(i, p))];
  }
  return g;
}

std::vector<Rank> snake_order(const CostModel& model, Rank p) {
  std::vector<Rank> order(static_cast<std::size_t>(p));
  for (Rank k = 0; k < p; ++k) {
    order[static_cast<std::size_t>(k)] =
        model.topology ? model.topology->rank_at(snake_coords(model.topology->dims, k)) : k;
  }
  OPTCOLL_CHECK(!model.topology || model.topology->size() == p,
                "the model's topology has {} nodes, the collective {} ranks",
                model.topology ? model.topology->size() : 0, p);
  return order;
}

std::span<const ParamInfo> bucket_params() { return kParams; }
std::span<const ParamInfo> ring_params() { return std::span<const ParamInfo>(kParams).subspan(2); }

BucketPlan resolve_bucket_plan(const Params& params, const CostModel& model, int colors,
                               int fixed_directions, ScheduleBuilder& b) {
  BucketPlan plan;
  plan.colors = colors;
  if (fixed_directions > 0) {
    plan.directions = fixed_directions;
  } else if (params.get("directions") == "auto") {
    plan.directions = model.topology && model.topology->links == LinkMode::kBidirectional ? 2 : 1;
  } else {
    const std::int64_t d = params.get_int("directions");
    if (d != 1 && d != 2) throw_invalid("parameter directions must be 1, 2 or auto, got {}", d);
    plan.directions = static_cast<int>(d);
  }
  const std::int64_t pieces = params.get_int("pieces");
  if (pieces < 1 || pieces > 1024) {
    throw_invalid("parameter pieces must be in 1..1024, got {}", pieces);
  }
  plan.pieces = static_cast<int>(pieces);
  if (fixed_directions > 0) {
    b.set_params(fmt::format("pieces={}", plan.pieces));
    return plan;
  }
  const std::int64_t sync = params.get_int("sync");
  if (sync != 0 && sync != 1) throw_invalid("parameter sync must be 0 or 1, got {}", sync);
  plan.sync = sync == 1 && colors > 1;
  b.set_params(fmt::format("directions={},pieces={},sync={}", plan.directions, plan.pieces,
                           plan.sync ? 1 : 0));
  return plan;
}

void emit_allreduce(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan) {
  const Rank p = b.nranks();
  const Count n = b.spec().count;
  std::vector<Stream> streams = make_streams(g, plan);
  const auto total = static_cast<Rank>(streams.size());
  for (Rank k = 0; k < total; ++k) {
    const Piece piece = even_piece(n, total, k);
    streams[static_cast<std::size_t>(k)].region = {Buf::kOutput, piece.offset, piece.count};
  }
  if (n == 0) return;
  // Everything happens in place in the output, which starts as the rank's contribution.
  for (Rank r = 0; r < p; ++r) b.copy(r, {Buf::kInput, 0, n}, {Buf::kOutput, 0, n});
  PhaseGate gate(plan.sync, p, streams.size());
  reduce_scatter_phases(b, g, streams, gate);
  allgather_phases(b, g, streams, gate);
}

void emit_reduce_scatter_block(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan) {
  const Rank p = b.nranks();
  const Count m = b.spec().count;
  if (m == 0) return;
  std::vector<Stream> streams = make_streams(g, plan);
  const Slice scratch = one_scratch(b, p, p * m);
  const std::vector<Piece> parts = place_block_streams(streams, scratch, m, p);
  const Slice input{Buf::kInput, 0, p * m};
  for (Rank r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < streams.size(); ++k) {
      copy_blocks(b, g, streams[k], r, input, m, parts[k], true);
    }
  }
  PhaseGate gate(plan.sync, p, streams.size());
  reduce_scatter_phases(b, g, streams, gate);
  for (Rank r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (parts[k].count == 0) continue;
      const Slice done = segment(g, streams[k], r, g.ndims());
      b.copy(r, done, {Buf::kOutput, parts[k].offset, parts[k].count});
    }
  }
}

void emit_allgather(ScheduleBuilder& b, const RingGeometry& g, const BucketPlan& plan) {
  const Rank p = b.nranks();
  const Count m = b.spec().count;
  if (m == 0) return;
  std::vector<Stream> streams = make_streams(g, plan);
  const Slice scratch = one_scratch(b, p, p * m);
  const std::vector<Piece> parts = place_block_streams(streams, scratch, m, p);
  for (Rank r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (parts[k].count == 0) continue;
      const Slice mine = segment(g, streams[k], r, g.ndims());
      b.copy(r, {Buf::kInput, parts[k].offset, parts[k].count}, mine);
    }
  }
  PhaseGate gate(plan.sync, p, streams.size());
  allgather_phases(b, g, streams, gate);
  const Slice output{Buf::kOutput, 0, p * m};
  for (Rank r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < streams.size(); ++k) {
      copy_blocks(b, g, streams[k], r, output, m, parts[k], false);
    }
  }
}

}  // namespace optcoll::algorithms::patterns
