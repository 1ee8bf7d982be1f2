// SPDX-License-Identifier: Apache-2.0
// File: the exact optimum over all gather trees, ordered or not (Träff 2019, Proposition 2,
// equations (7) and (8)), by dynamic programming over subsets: 3^p work, so budgeted.
//   C({r}, r) = 0
//   C(V, r)   = min over V'' ⊆ V∖{r}, V'' ≠ ∅, r'' ∈ V'' (the last subtree r receives) of
//                 max(C(V∖V'', r), C(V'', r'')) + c(|V''|)     if V'' ≠ V∖{r}   (7)
//                 max(copy·m_r, C(V'', r'')) + c(|V''|)         if V'' = V∖{r}   (8)
// Blocks may then arrive out of rank order: such a tree needs a permutation at the root.
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {

std::optional<Time> unordered_optimal_cost(const GatherProblem& pb, std::optional<Rank> root,
                                           Rank max_ranks) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < p), "root out of range");
  if (p > max_ranks || p > 20) return std::nullopt;
  if (p == 1) return pb.copy * pb.sizes[0];
  const std::size_t masks = std::size_t{1} << p;
  const auto n = static_cast<std::size_t>(p);
  std::vector<Time> mass(masks, 0);
  for (std::size_t m = 1; m < masks; ++m) {
    const auto low = static_cast<std::size_t>(__builtin_ctzll(m));
    mass[m] = mass[m & (m - 1)] + pb.sizes[low];
  }
  std::vector<Time> c(masks * n, 0);  // c[mask * n + r], r in mask
  std::vector<Time> best(masks, 0);   // min over r in mask
  for (std::size_t m = 1; m < masks; ++m) {
    Time best_m = -1;
    for (std::size_t r = 0; r < n; ++r) {
      if (!(m >> r & 1)) continue;
      const std::size_t rest = m ^ (std::size_t{1} << r);
      Time value = 0;
      if (rest != 0) {
        value = -1;
        for (std::size_t sub = rest; sub != 0; sub = (sub - 1) & rest) {
          const Time before = sub == rest ? pb.copy * pb.sizes[r] : c[(m ^ sub) * n + r];
          const Time v = std::max(before, best[sub]) + pb.message(mass[sub]);
          if (value < 0 || v < value) value = v;
        }
      }
      c[m * n + r] = value;
      if (best_m < 0 || value < best_m) best_m = value;
    }
    best[m] = best_m;
  }
  const std::size_t all = masks - 1;
  return root ? c[all * n + static_cast<std::size_t>(*root)] : best[all];
}

}  // namespace optcoll::algorithms::planners
