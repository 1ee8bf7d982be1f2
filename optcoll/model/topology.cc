// SPDX-License-Identifier: Apache-2.0
// File: tori and meshes: mappings, links, routes, parsing (topology.h).
#include "optcoll/model/topology.h"

#include <array>
#include <charconv>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

using Coords = std::array<int, Topology::kMaxDims>;

// Mixed-radix digits of k, the last dimension fastest.
void digits_of(const std::vector<int>& dims, std::int64_t k, int* out) {
  for (int q = static_cast<int>(dims.size()) - 1; q >= 0; --q) {
    const auto d = static_cast<std::size_t>(q);
    out[q] = static_cast<int>(k % dims[d]);
    k /= dims[d];
  }
}

std::int64_t index_of(const std::vector<int>& dims, const int* c) {
  std::int64_t k = 0;
  for (std::size_t q = 0; q < dims.size(); ++q) k = k * dims[q] + c[q];
  return k;
}

// Reflected Gray code: digit q runs backwards while the number formed by the digits before
// it is odd.
void snake_of(const std::vector<int>& dims, std::int64_t k, int* out) {
  digits_of(dims, k, out);
  std::int64_t prefix = 0;
  for (std::size_t q = 0; q < dims.size(); ++q) {
    const int a = out[q];
    if (prefix % 2 == 1) out[q] = dims[q] - 1 - a;
    prefix = prefix * dims[q] + a;
  }
}

std::int64_t unsnake(const std::vector<int>& dims, const int* g) {
  std::int64_t prefix = 0;
  for (std::size_t q = 0; q < dims.size(); ++q) {
    const int a = prefix % 2 == 1 ? dims[q] - 1 - g[q] : g[q];
    prefix = prefix * dims[q] + a;
  }
  return prefix;
}

void coords_into(const Topology& t, Rank rank, int* out) {
  if (t.snake) {
    snake_of(t.dims, rank, out);
  } else {
    digits_of(t.dims, rank, out);
  }
}

}  // namespace

Rank Topology::size() const {
  std::int64_t p = 1;
  for (const int d : dims) p *= d;
  return static_cast<Rank>(p);
}

std::int64_t Topology::link_count() const {
  const std::int64_t per_direction = static_cast<std::int64_t>(size()) * ndims();
  return links == LinkMode::kBidirectional ? 2 * per_direction : per_direction;
}

std::vector<int> Topology::coords(Rank rank) const {
  Coords c{};
  coords_into(*this, rank, c.data());
  return {c.begin(), c.begin() + ndims()};
}

Rank Topology::rank_at(const std::vector<int>& c) const {
  return static_cast<Rank>(snake ? unsnake(dims, c.data()) : index_of(dims, c.data()));
}

Rank Topology::neighbour(Rank rank, int q, int step) const {
  Coords c{};
  coords_into(*this, rank, c.data());
  const int d = dims[static_cast<std::size_t>(q)];
  int x = c[static_cast<std::size_t>(q)] + step;
  if (x < 0 || x >= d) {
    if (kind == TopologyKind::kMesh) return kNoRank;
    x = (x + d) % d;
  }
  c[static_cast<std::size_t>(q)] = x;
  return static_cast<Rank>(snake ? unsnake(dims, c.data()) : index_of(dims, c.data()));
}

void Topology::route(Rank from, Rank to, std::vector<std::int64_t>& links_out) const {
  Coords at{};
  Coords target{};
  coords_into(*this, from, at.data());
  coords_into(*this, to, target.data());
  const int n = ndims();
  const bool bi = links == LinkMode::kBidirectional;
  for (int q = 0; q < n; ++q) {
    const auto qi = static_cast<std::size_t>(q);
    const int d = dims[qi];
    const int forward = ((target[qi] - at[qi]) % d + d) % d;
    if (forward == 0) continue;
    int steps = forward;
    int dir = +1;
    if (kind == TopologyKind::kMesh) {
      if (target[qi] < at[qi]) {
        dir = -1;
        steps = at[qi] - target[qi];
      }
    } else if (d - forward < forward) {
      dir = -1;
      steps = d - forward;
    }
    for (int s = 0; s < steps; ++s) {
      if (dir > 0) {
        const std::int64_t id = index_of(dims, at.data()) * n + q;
        links_out.push_back(bi ? 2 * id : id);
        at[qi] = (at[qi] + 1) % d;
      } else {
        at[qi] = (at[qi] - 1 + d) % d;
        const std::int64_t id = index_of(dims, at.data()) * n + q;
        links_out.push_back(bi ? 2 * id + 1 : id);
      }
    }
  }
}

std::vector<int> snake_coords(const std::vector<int>& dims, std::int64_t k) {
  Coords c{};
  snake_of(dims, k, c.data());
  return {c.begin(), c.begin() + static_cast<std::ptrdiff_t>(dims.size())};
}

void validate(const Topology& topology) {
  if (topology.dims.empty()) throw_invalid("topology has no dimensions");
  if (topology.ndims() > Topology::kMaxDims) {
    throw_invalid("topology has {} dimensions; at most {} are supported", topology.ndims(),
                  Topology::kMaxDims);
  }
  std::int64_t p = 1;
  for (const int d : topology.dims) {
    if (d < 1) throw_invalid("topology dimension sizes must be at least 1, got {}", d);
    p *= d;
    if (p > std::int64_t{0x7fffffff}) throw_invalid("topology has more than 2^31 - 1 nodes");
  }
}

Topology parse_topology(std::string_view text) {
  const std::string_view usage =
      "expected torus:DxDx...[:uni|:bi][:snake] or mesh:DxDx...[:uni|:bi][:snake], e.g. "
      "torus:8x8x8:bi";
  auto fail = [&](std::string_view what) {
    throw_invalid("bad topology \"{}\": {}; {}", text, what, usage);
  };
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t colon = text.find(':', begin);
    parts.push_back(text.substr(begin, colon == std::string_view::npos ? colon : colon - begin));
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  Topology t;
  if (parts[0] == "torus") {
    t.kind = TopologyKind::kTorus;
  } else if (parts[0] == "mesh") {
    t.kind = TopologyKind::kMesh;
  } else {
    fail(fmt::format("unknown kind \"{}\"", parts[0]));
  }
  if (parts.size() < 2 || parts[1].empty()) fail("no dimensions");
  std::string_view sizes = parts[1];
  while (true) {
    const std::size_t x = sizes.find('x');
    const std::string_view one = sizes.substr(0, x);
    int d = 0;
    const auto [end, ec] = std::from_chars(one.data(), one.data() + one.size(), d);
    if (one.empty() || ec != std::errc() || end != one.data() + one.size()) {
      fail(fmt::format("dimension \"{}\" is not a number", one));
    }
    if (d < 1) fail(fmt::format("dimension {} is less than 1", d));
    t.dims.push_back(d);
    if (x == std::string_view::npos) break;
    sizes.remove_prefix(x + 1);
  }
  bool seen_links = false;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    if ((parts[i] == "uni" || parts[i] == "bi") && !seen_links) {
      t.links = parts[i] == "uni" ? LinkMode::kUnidirectional : LinkMode::kBidirectional;
      seen_links = true;
    } else if (parts[i] == "snake" && !t.snake) {
      t.snake = true;
    } else {
      fail(fmt::format("unknown or repeated option \"{}\"", parts[i]));
    }
  }
  try {
    validate(t);
  } catch (const Error& e) {
    fail(e.what());
  }
  return t;
}

std::string to_string(const Topology& t) {
  std::string s = t.kind == TopologyKind::kTorus ? "torus:" : "mesh:";
  for (std::size_t q = 0; q < t.dims.size(); ++q) {
    s += fmt::format("{}{}", q == 0 ? "" : "x", t.dims[q]);
  }
  s += t.links == LinkMode::kBidirectional ? ":bi" : ":uni";
  if (t.snake) s += ":snake";
  return s;
}

}  // namespace optcoll
