// SPDX-License-Identifier: Apache-2.0
// File: network topologies for the cost model: N-dimensional tori and meshes, their links,
// rank <-> coordinate mappings and dimension-ordered shortest routes
// (docs/math/torus-bucket.md §1 and §6).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

enum class TopologyKind : std::uint8_t { kTorus, kMesh };

// Unidirectional: one half-duplex channel per neighbour pair, shared by both directions.
// Bidirectional: one channel in each direction per neighbour pair.
enum class LinkMode : std::uint8_t { kUnidirectional, kBidirectional };

// Ranks sit on the nodes of a d_0 x d_1 x ... x d_{N-1} grid. Row-major mapping: rank =
// ((x_0 d_1 + x_1) d_2 + x_2) ..., the last dimension fastest. Snake mapping: rank k sits at
// the k-th node of the reflected mixed-radix Gray code (the last dimension goes back and
// forth, the others alternate), so consecutive ranks are neighbours, and on a torus with d_0
// even (or N = 1) rank p-1 is a wrap-link neighbour of rank 0.
//
// Links. A torus has, per node x and dimension q, the link between x and x + e_q (mod d_q); a
// mesh lacks the wrap links (x_q = d_q - 1). In a dimension of size 2 the + and - neighbours
// coincide and the torus then has two parallel links between the pair (the direct one and
// the wrap one). Link ids: unidirectional (node * N + q), the channel between x and x + e_q;
// bidirectional 2 (node * N + q) for the direction x -> x + e_q and 2 (node * N + q) + 1 for
// x + e_q -> x.
//
// Routes are dimension-ordered (dimension 0 first) and shortest: on a torus each dimension
// goes the shorter way round, the + way on a tie (d even, distance d/2, and d = 2).
struct Topology {
  static constexpr int kMaxDims = 16;
  TopologyKind kind = TopologyKind::kTorus;
  std::vector<int> dims;
  LinkMode links = LinkMode::kBidirectional;
  bool snake = false;

  int ndims() const { return static_cast<int>(dims.size()); }
  Rank size() const;
  std::int64_t link_count() const;
  std::vector<int> coords(Rank rank) const;
  Rank rank_at(const std::vector<int>& coords) const;
  // The rank one step along dimension q (step = +1 or -1), wrapping on a torus; on a mesh
  // kNoRank past the edge.
  Rank neighbour(Rank rank, int q, int step) const;
  // Appends the ids of the links of the route from `from` to `to` (empty for from == to).
  void route(Rank from, Rank to, std::vector<std::int64_t>& links_out) const;
  bool operator==(const Topology&) const = default;
};

// The coordinates of the k-th node of the snake (reflected mixed-radix Gray code).
std::vector<int> snake_coords(const std::vector<int>& dims, std::int64_t k);

// "torus:8x8x8", "mesh:4x4", with options ":uni" or ":bi" (default bi) and ":snake".
// Throws Error(kInvalidArgument) with a message that names what is wrong.
Topology parse_topology(std::string_view text);
std::string to_string(const Topology& topology);
// Throws Error(kInvalidArgument): no dimensions or more than kMaxDims, a dimension < 1, more
// than 2^31 - 1 nodes.
void validate(const Topology& topology);

}  // namespace optcoll
