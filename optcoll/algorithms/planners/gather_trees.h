// SPDX-License-Identifier: Apache-2.0
// File: tree planners for irregular gather and scatter (Träff, "Optimal trees for irregular
// gather and scatter collectives", TPDS 30(9), 2019; the math of
// docs/math/gather-scatter-trees.md). Each planner returns an OrderedTree: a TreeShape whose nodes
// list their children in reception order, where each node's local copy goes, and the completion
// time that Definition 2 gives it under the homogeneous one-ported model:
//
//   C(leaf) = 0 (no copy);  an interior node (and the root, always) works through its items
//   in order: a child c costs  t = max(t, C(c)) + c(|T_c|),  its copy  t = t + copy·m_v,
//   with c(M) = alpha + beta·M for M > 0 and c(0) = 0 (empty messages are free).
//
// A scatter over the same tree takes the same time (the items in reverse order).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::planners {

// Träff's model: block sizes in model units (elements or bytes), alpha, beta and the local
// copy rate (the paper's gamma; optcoll's CostModel::copy). Optionally non-homogeneous: p x p
// matrices, row-major [sender][receiver] (the child-to-parent direction of a gather), that
// replace alpha and beta for every message (Träff's alpha_ij, beta_ij;
// docs/math/gather-scatter-trees.md §1), or the same read from a model's pair costs as they
// are needed (`pair_model`; gather_problem): under a placement of 4,096 ranks the matrices
// were 256 MB per problem, and most planners price only the p - 1 edges of their tree.

// Which way the tree's messages flow: a gather tree sends child -> parent, a scatter tree
// parent -> child (a scatter over a tree takes its gather time under the transposed matrices).
enum class TreeDirection : std::uint8_t { kGather, kScatter };

struct GatherProblem {
  std::vector<Time> sizes;
  Time alpha = 0;
  Time beta = 1;
  Time copy = 0;
  std::vector<Time> pair_alpha = {};  // empty (and no pair_model): homogeneous
  std::vector<Time> pair_beta = {};
  // Instead of the matrices: the model's latency() and per_unit() in `pair_direction` (the
  // model must outlive the problem).
  const CostModel* pair_model = nullptr;
  TreeDirection pair_direction = TreeDirection::kGather;

  Rank nranks() const { return static_cast<Rank>(sizes.size()); }
  bool homogeneous() const { return pair_alpha.empty() && pair_model == nullptr; }
  Time message(Time m) const { return m > 0 ? alpha + beta * m : 0; }
  // Non-homogeneous: alpha and beta of a message from child `from` to parent `to` (the
  // gather direction).
  std::pair<Time, Time> pair(Rank from, Rank to) const {
    if (pair_model != nullptr) {
      const bool gather = pair_direction == TreeDirection::kGather;
      const Rank sender = gather ? from : to;
      const Rank receiver = gather ? to : from;
      return {pair_model->latency(sender, receiver), pair_model->per_unit(sender, receiver)};
    }
    const auto at = static_cast<std::size_t>(from) * sizes.size() + static_cast<std::size_t>(to);
    return {pair_alpha[at], pair_beta[at]};
  }
  // A message of m units from `from` to `to` (c(0) = 0), priced as the simulator prices it.
  Time message(Rank from, Rank to, Time m) const {
    if (homogeneous()) return message(m);
    if (m <= 0) return 0;
    const auto [a, b] = pair(from, to);
    return a + b * m;
  }
};

// The problem of a layout under a model. Under a model that is not homogeneous the problem
// reads its pair costs from `model` (pair_model, which must outlive the problem) in the
// gather direction (child -> parent): transposed for kScatter. Only the non-homogeneous
// optimal DP and completion_time() use them; the other planners plan with alpha and beta.
GatherProblem gather_problem(const Layout& layout, const CostModel& model, std::size_t elem_bytes,
                             TreeDirection direction = TreeDirection::kGather);

struct OrderedTree {
  TreeShape shape;
  // copy_slot[v]: how many children v receives before its local copy (0: copy first). Used
  // for interior nodes and the root; leaves other than the root do not copy.
  std::vector<int> copy_slot;
  Time cost = 0;  // Definition 2 completion time, as planned
};

// Definition 2, evaluated bottom-up in O(p) (independent of how the tree was planned); with
// pair matrices each message costs alpha_{child,parent} + beta_{child,parent}·M.
Time completion_time(const TreeShape& shape, const std::vector<int>& copy_slot,
                     const GatherProblem& problem);

// Linear (star): the root copies, then receives every other rank in rank order.
OrderedTree linear_tree(const GatherProblem& problem, Rank root);

// The paper's "oblivious" tree: the standard rank-ordered binomial tree. In round t aligned
// blocks of 2^t ranks merge pairwise; the block holding the root receives, otherwise the upper
// block's root does. Copy first, children in round order. (This is not gatherv/binomial's
// virtual-rank tree, which relabels the root to 0.)
OrderedTree oblivious_binomial_tree(const GatherProblem& problem, Rank root);

// The problem-adaptive binomial tree (Proposition 1; Träff 2018): the same blocks, but when
// neither holds the root, the block whose sending finishes the merge earlier sends. Without a
// root the final block's root is the root.
OrderedTree adaptive_binomial_tree(const GatherProblem& problem, std::optional<Rank> root);

// Case (6) of the DP (root = last rank of its range: receive, then copy): the text charges
// copy·m_j (kText, what optcoll uses); the paper's chosen-root program charges beta·m_j
// (kPaperProgram, only to reproduce its published numbers;
// docs/math/gather-scatter-trees.md §3.4).
enum class CaseSix { kText, kPaperProgram };

// Optimal ordered variable-degree tree, homogeneous DP (Figure 6; O(p^3) time, O(p^2) space).
// No root: the best root (the DP's own choice, with the tie-breaking of
// docs/math/gather-scatter-trees.md §3.4).
OrderedTree optimal_tree(const GatherProblem& problem, std::optional<Rank> root,
                         CaseSix case_six = CaseSix::kText);

// The same optimum by the plain triple loop (no transposed table): the reference for tests
// and benchmarks. Returns only the cost.
Time optimal_cost_plain(const GatherProblem& problem);

// How much of the best-root DP's work its exact block pruning skipped (optimal_tree_dp.cc):
// over all ranges [i..j], the middle split points k = i+1..j-2 (`splits`) and those whose
// candidates were evaluated (`evaluated`; the rest lay in segments whose lower bound proved
// they cannot hold the first minimum).
struct TreeDpStats {
  std::int64_t splits = 0;
  std::int64_t evaluated = 0;
};

// optimal_tree(problem, std::nullopt) with the DP's worker threads chosen: 1, 2 (a wavefront
// over row tiles; the same tree), or <= 0 (automatic: 2 from p = 400 on, on a machine with two or
// more hardware threads; optimal_tree's choice). Fills *stats if given. For tests and benchmarks.
OrderedTree optimal_tree_best_root(const GatherProblem& problem, int workers,
                                   TreeDpStats* stats = nullptr);

// Optimal ordered variable-degree tree under pair costs (non-homogeneous DP,
// gather-scatter-trees.md §3.3; the tree class of optimal_tree). Works for homogeneous problems too
// (then every pair costs alpha + beta·M). No root: the best root (first minimum over ranks). See
// nonhomogeneous_tree_dp.cc for the recurrence and its cost.
OrderedTree optimal_tree_nonhomogeneous(const GatherProblem& problem, std::optional<Rank> root);

// The same optimum by the literal recurrence (explicit minimum over split and child root,
// O(p^5)): the reference for tests and benchmarks. Cost only (best root or fixed root).
Time optimal_cost_nonhomogeneous_literal(const GatherProblem& problem, std::optional<Rank> root);

// Optimal strictly rank-ordered binary tree (Figure 7, five cases; ties: smallest root).
// A fixed root r uses the DP's tables below it and the case with q = r at the top.
OrderedTree binary_optimal_tree(const GatherProblem& problem, std::optional<Rank> root);

// The same tree with every candidate evaluated (no pruning): the reference for tests and
// benchmarks. And how much of the candidates (root and split choices over all ranges) the
// pruned DP evaluated (binary_tree_dp.cc, "exact block pruning").
OrderedTree binary_optimal_tree_plain(const GatherProblem& problem, std::optional<Rank> root);
TreeDpStats binary_tree_dp_stats(const GatherProblem& problem);

// The best-root and the fixed-root tree from one set of tables (X = copy in case (6)).
std::pair<OrderedTree, OrderedTree> optimal_trees_best_and_fixed(const GatherProblem& problem,
                                                                 Rank root);
std::pair<OrderedTree, OrderedTree> binary_trees_best_and_fixed(const GatherProblem& problem,
                                                                Rank root);

// Beyond the paper's programs: the exact optimum over all gather trees, ordered or not
// (Proposition 2 over subsets; 3^p work). std::nullopt when p exceeds max_ranks (the budget;
// p = 12 takes milliseconds). Cost only.
std::optional<Time> unordered_optimal_cost(const GatherProblem& problem, std::optional<Rank> root,
                                           Rank max_ranks = 12);

// Best root of a fixed-root planner by trying every rank (first minimum).
OrderedTree best_root_by_search(const GatherProblem& problem,
                                OrderedTree (*planner)(const GatherProblem&, Rank));

// The trees of the paper's comparison, by name (registry algorithms and the experiment).
enum class TreeKind : std::uint8_t {
  kLinear,
  kObliviousBinomial,
  kAdaptiveBinomial,
  kBinaryOptimal,
  kOptimal
};
// Plans `kind` for a fixed root, or for the planner's best root (std::nullopt): the DPs'
// own choice (kOptimal on a problem with pair matrices: optimal_tree_nonhomogeneous), the adaptive
// tree's final root, the first minimum over all ranks otherwise.
OrderedTree plan_tree(TreeKind kind, const GatherProblem& problem, std::optional<Rank> root);

// The estimate (estimate.h) of the gather(v) or scatter(v) over the tree `kind` plans for
// spec.root: Definition 2 of the planned tree (what the emitters reproduce, so exact) for the
// cheap planners (linear, binomial trees), and for the DPs up to kDpInEstimate ranks; above,
// the DPs are not run and their tree's time is estimated from above: the least of the
// linear and binomial trees' (all ordered trees, so never better than the optimal DP's), or
// for the binary DP the in-order binary tree's (an ordered binary tree).
inline constexpr Rank kDpInEstimate = 128;
std::optional<Estimate> ordered_tree_estimate(const CollectiveSpec& spec, const CostModel& model,
                                              TreeKind kind);
// The least of the linear and binomial trees' Definition 2 times (with the tree): the upper
// estimate above, shared with the two-block planner's estimate.
OrderedTree cheapest_ordered_tree(const GatherProblem& problem, Rank root);

// A gather(v) or scatter(v) schedule over the tree `kind` plans for spec.root under `model`
// (patterns::emit_ordered_gather / emit_ordered_scatter); records the tree.
Schedule build_ordered_tree_schedule(const CollectiveSpec& spec, const CostModel& model,
                                     TreeKind kind, std::string_view name);

// ---- Theorem 4: optimal ordered broadcast and reduction trees (ordered_bcast_reduce.cc) ----
enum class FullVectorOp : std::uint8_t { kBcast, kReduce };

// The gather problem whose optimal ordered tree is the optimal ordered bcast (reduce) tree of
// `count` elements on `nranks` ranks under `model` (gather-scatter-trees.md §3.6): every rank holds
// one unit (none if count = 0), so every non-empty subtree is one message, and that message costs
// alpha = the full vector's transfer (bcast: + 0; reduce: + its reduction, gamma·n), beta = 0, copy
// = 0. With pair matrices, pair_alpha[child][parent] is the transfer in the direction the data
// flows (bcast: parent -> child) plus the reduction, pair_beta = 0.
GatherProblem full_vector_problem(const CostModel& model, Rank nranks, Count count,
                                  std::size_t elem_bytes, FullVectorOp op);

// The optimal ordered tree for `root`: the gather DP (optimal_tree, or
// optimal_tree_nonhomogeneous under pair matrices) on full_vector_problem. The shape lists
// children in communication order: reception order for reduce, the reverse for bcast (a
// broadcast is the gather's time reversal). cost: its completion time, which
// emit_ordered_bcast / emit_ordered_reduce reproduce in the simulator (reduce on one rank:
// the root's copy of its contribution).
// No root: the DP's best root (the best-root hook of bcast/reduce optimal_ordered).
OrderedTree optimal_ordered_full_vector_tree(const CostModel& model, Rank nranks, Count count,
                                             std::size_t elem_bytes, std::optional<Rank> root,
                                             FullVectorOp op);

// bcast/optimal_ordered and reduce/optimal_ordered (records the tree).
Schedule build_optimal_ordered_full_vector(const CollectiveSpec& spec, const CostModel& model);

}  // namespace optcoll::algorithms::planners
