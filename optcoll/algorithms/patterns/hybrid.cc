// SPDX-License-Identifier: Apache-2.0
// File: hybrid compositions over logical grids (hybrid.h).
#include "optcoll/algorithms/patterns/hybrid.h"

#include <limits>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

std::size_t idx(Rank i) { return static_cast<std::size_t>(i); }

// dims=auto considers grids of up to 8 dimensions (Chan et al.'s slides use an 8-D hybrid).
constexpr int kMaxDims = 8;

bool is_long(const std::string& kinds, int i) { return kinds[idx(i)] == 'l'; }

// R_i of rank r: the message split along every long dimension before i.
Piece range_at(const Grid& grid, const std::string& kinds, Count n, int i, Rank r) {
  Piece range{0, n};
  for (int j = 0; j < i; ++j) {
    if (!is_long(kinds, j)) continue;
    const Piece piece = even_piece(range.count, grid.dim(j), grid.coord(r, j));
    range = {range.offset + piece.offset, piece.count};
  }
  return range;
}

Parts split(const Piece& range, Rank d) {
  Parts parts = even_parts(range.count, d);
  for (auto& part : parts) part.offset += range.offset;
  return parts;
}

std::vector<Slice> bases_of(const std::vector<Slice>& bases, const Members& line) {
  std::vector<Slice> out;
  for (const Rank r : line) out.push_back(bases[idx(r)]);
  return out;
}

std::vector<Slice> ranges_of(const std::vector<Slice>& bases, const Members& line,
                             const Piece& range) {
  std::vector<Slice> out;
  for (const Rank r : line) out.push_back(at(bases[idx(r)], range));
  return out;
}

// Chunks of a line of dimension i: member c's chunk is the run of ranks sharing its
// coordinates 0..i.
Parts chunks(const Grid& grid, const Members& line, int i, const std::vector<Count>& prefix) {
  Parts parts;
  for (const Rank r : line) {
    const Rank first = r - r % grid.stride(i);
    parts.push_back({prefix[idx(first)], prefix[idx(first + grid.stride(i))] - prefix[idx(first)]});
  }
  return parts;
}

std::vector<Count> prefix_sums(const std::vector<Count>& sizes) {
  std::vector<Count> prefix(sizes.size() + 1, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) prefix[i + 1] = prefix[i] + sizes[i];
  return prefix;
}

std::int64_t ceil_log2(Rank d) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < d; reach *= 2) ++rounds;
  return rounds;
}

}  // namespace

void hybrid_bcast(ScheduleBuilder& b, const Grid& grid, const std::string& kinds,
                  const std::vector<Slice>& bases, Rank root) {
  const Count n = bases[0].count;
  // Messages that would bring a rank only what it holds are not sent (group_phases.h).
  Held held(grid.nranks());
  held.add(root, bases[idx(root)]);
  for (int i = 0; i < grid.ndims(); ++i) {
    for (const auto& line : grid.lines(i, root)) {
      const Piece range = range_at(grid, kinds, n, i, line[0]);
      if (is_long(kinds, i)) {
        mst_scatter(b, line, bases_of(bases, line), split(range, grid.dim(i)), grid.coord(root, i),
                    &held);
      } else {
        mst_bcast(b, line, ranges_of(bases, line, range), grid.coord(root, i), &held);
      }
    }
  }
  for (int i = grid.ndims() - 1; i >= 0; --i) {
    if (!is_long(kinds, i)) continue;
    for (const auto& line : grid.lines(i)) {
      const Piece range = range_at(grid, kinds, n, i, line[0]);
      ring_allgather(b, line, bases_of(bases, line), split(range, grid.dim(i)), &held);
    }
  }
}

void hybrid_reduce(ScheduleBuilder& b, const Grid& grid, const std::string& kinds,
                   const std::vector<Slice>& bases, Rank root) {
  const Count n = bases[0].count;
  for (int i = 0; i < grid.ndims(); ++i) {
    if (!is_long(kinds, i)) continue;
    for (const auto& line : grid.lines(i)) {
      const Piece range = range_at(grid, kinds, n, i, line[0]);
      ring_reduce_scatter(b, line, bases_of(bases, line), split(range, grid.dim(i)));
    }
  }
  for (int i = grid.ndims() - 1; i >= 0; --i) {
    for (const auto& line : grid.lines(i, root)) {
      const Piece range = range_at(grid, kinds, n, i, line[0]);
      if (is_long(kinds, i)) {
        mst_gather(b, line, bases_of(bases, line), split(range, grid.dim(i)), grid.coord(root, i));
      } else {
        mst_reduce(b, line, ranges_of(bases, line, range), grid.coord(root, i));
      }
    }
  }
}

void hybrid_allgather(ScheduleBuilder& b, const Grid& grid, const std::vector<Slice>& bases,
                      const std::vector<Count>& sizes) {
  const auto prefix = prefix_sums(sizes);
  for (int i = grid.ndims() - 1; i >= 0; --i) {
    for (const auto& line : grid.lines(i)) {
      ring_allgather(b, line, bases_of(bases, line), chunks(grid, line, i, prefix));
    }
  }
}

void hybrid_reduce_scatter(ScheduleBuilder& b, const Grid& grid, const std::vector<Slice>& bases,
                           const std::vector<Count>& sizes) {
  const auto prefix = prefix_sums(sizes);
  for (int i = 0; i < grid.ndims(); ++i) {
    for (const auto& line : grid.lines(i)) {
      ring_reduce_scatter(b, line, bases_of(bases, line), chunks(grid, line, i, prefix));
    }
  }
}

Time hybrid_tree_cost(const std::vector<Rank>& dims, const std::string& kinds, double n,
                      bool reduce, const CostModel& model) {
  const Time gamma = reduce ? model.gamma : 0;
  Time t = 0;
  Time s = n;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<Time>(dims[i]);
    const auto rounds = static_cast<Time>(ceil_log2(dims[i]));
    if (kinds[i] == 'l') {
      t += rounds * model.alpha + (d - 1) / d * s * model.beta;
      t += (d - 1) * (model.alpha + s / d * (model.beta + gamma));
      s /= d;
    } else {
      t += rounds * (model.alpha + s * (model.beta + gamma));
    }
  }
  return t;
}

Time hybrid_ring_cost(const std::vector<Rank>& dims, double n, bool reduce,
                      const CostModel& model) {
  Time p = 1;
  Time t = 0;
  for (const Rank d : dims) {
    p *= d;
    t += (d - 1) * model.alpha;
  }
  return t + (p - 1) / p * n * (model.beta + (reduce ? model.gamma : 0));
}

namespace {

// hybrid_tree_cost for the kinds `mask` gives (dimension i short where bit i is set), with the
// same arithmetic in the same order, stopping once the sum reaches `limit`: the result is
// then only known to be at least `limit`. (best_tree_grid weighs about 4 million patterns at
// p = 65536; building each one's kinds string and costing it whole took 0.4 s.)
Time masked_tree_cost(const std::vector<Rank>& dims, std::uint32_t mask, double n, bool reduce,
                      const CostModel& model, Time limit) {
  const Time gamma = reduce ? model.gamma : 0;
  Time t = 0;
  Time s = n;
  for (std::size_t i = 0; i < dims.size() && t < limit; ++i) {
    const auto d = static_cast<Time>(dims[i]);
    const auto rounds = static_cast<Time>(ceil_log2(dims[i]));
    if (((mask >> i) & 1) == 0) {
      t += rounds * model.alpha + (d - 1) / d * s * model.beta;
      t += (d - 1) * (model.alpha + s / d * (model.beta + gamma));
      s /= d;
    } else {
      t += rounds * (model.alpha + s * (model.beta + gamma));
    }
  }
  return t;
}

std::string kinds_of(std::uint32_t mask, std::size_t k) {
  std::string pattern;
  for (std::size_t i = 0; i < k; ++i) pattern += ((mask >> i) & 1) ? 's' : 'l';
  return pattern;
}

}  // namespace

GridChoice best_tree_grid(Rank p, double n, bool reduce, const CostModel& model,
                          const std::vector<Rank>& dims, const std::string& kinds) {
  std::vector<std::vector<Rank>> candidates;
  if (!dims.empty()) {
    candidates.push_back(dims);
  } else if (!kinds.empty()) {
    OPTCOLL_CHECK(kinds.size() == 2, "fixed kinds need fixed dims beyond 2-D");
    for (Rank a = 1; a <= p; ++a) {
      if (p % a == 0) candidates.push_back({a, p / a});
    }
  } else {
    candidates = ordered_factorizations(p, kMaxDims);
  }
  GridChoice best;
  Time best_time = 0;
  for (const auto& candidate : candidates) {
    const std::size_t k = candidate.size();
    if (!kinds.empty()) {
      if (kinds.size() != k) continue;
      const Time t = hybrid_tree_cost(candidate, kinds, n, reduce, model);
      if (best.dims.empty() || t < best_time) {
        best = {candidate, kinds};
        best_time = t;
      }
      continue;
    }
    for (std::uint32_t mask = 0; mask < (1u << k); ++mask) {
      const Time limit = best.dims.empty() ? std::numeric_limits<Time>::infinity() : best_time;
      const Time t = masked_tree_cost(candidate, mask, n, reduce, model, limit);
      if (best.dims.empty() || t < best_time) {
        best = {candidate, kinds_of(mask, k)};
        best_time = t;
      }
    }
  }
  OPTCOLL_CHECK(!best.dims.empty(), "no grid for p = {}", p);
  return best;
}

std::vector<Rank> best_ring_grid(Rank p, double n, bool reduce, const CostModel& model) {
  std::vector<Rank> best;
  Time best_time = 0;
  for (const auto& candidate : ordered_factorizations(p, kMaxDims)) {
    const Time t = hybrid_ring_cost(candidate, n, reduce, model);
    if (best.empty() || t < best_time) {
      best = candidate;
      best_time = t;
    }
  }
  return best;
}

}  // namespace optcoll::algorithms::patterns
