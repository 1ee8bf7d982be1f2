// SPDX-License-Identifier: Apache-2.0
// File: logical grids over the ranks for hybrid (multi-dimensional) algorithms, after Chan,
// Heimlich, Purkayastha, van de Geijn: p = d_0 x d_1 x ... x d_{k-1}, rank r has coordinates
// in mixed radix with the last dimension varying fastest (d_{k-1} consecutive ranks form a
// line of the last dimension). A line of dimension i is a sub-communicator: the ranks that
// differ only in coordinate i, in increasing rank order.
//
//   dims 2x3:  ranks 0 1 2 / 3 4 5;  lines of dim 1: {0,1,2} {3,4,5};  of dim 0: {0,3} {1,4} {2,5}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "optcoll/algorithms/patterns/group_phases.h"

namespace optcoll::algorithms::patterns {

class Grid {
 public:
  explicit Grid(std::vector<Rank> dims);

  int ndims() const { return static_cast<int>(dims_.size()); }
  Rank dim(int i) const { return dims_[static_cast<std::size_t>(i)]; }
  Rank stride(int i) const { return strides_[static_cast<std::size_t>(i)]; }
  Rank coord(Rank r, int i) const { return r / stride(i) % dim(i); }
  Rank nranks() const { return nranks_; }

  // The line of dimension i through rank r.
  Members line(Rank r, int i) const;
  // Every line of dimension i; with `anchor` >= 0 only the lines whose coordinates after i
  // equal the anchor's.
  std::vector<Members> lines(int i, Rank anchor = -1) const;

 private:
  std::vector<Rank> dims_;
  std::vector<Rank> strides_;
  Rank nranks_ = 1;
};

// "4x8" (or "4X8", "64") -> {4, 8}. Throws Error(kInvalidArgument) unless every factor is a
// positive integer and their product is p.
std::vector<Rank> parse_dims(std::string_view text, Rank p);
std::string dims_to_string(const std::vector<Rank>& dims);
// Why `text` is not a valid dims value for p (empty if it is, or if it is "auto").
std::string dims_problem(std::string_view text, Rank p);

// Every ordered factorization of p into at most `max_dims` factors >= 2 (p = 1: {{1}}),
// in a fixed order (fewer dimensions first, then lexicographic).
std::vector<std::vector<Rank>> ordered_factorizations(Rank p, int max_dims);

}  // namespace optcoll::algorithms::patterns
