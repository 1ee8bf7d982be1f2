// SPDX-License-Identifier: Apache-2.0
// File: the simulator against closed forms: the papers' formulas (docs/math/alpha-beta-costs.md)
// and every registry algorithm's cost formula (algorithms.def), written out as C++ here and
// checked at p in {4, 7, 16} and several counts with integer parameters (exact equality).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::kAlpha;
using testing::kBeta;
using testing::kGamma;

std::int64_t ceil_log2(Rank p) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}
bool power_of_two(Rank p) { return p > 0 && (p & (p - 1)) == 0; }

CostModel model(Time copy = 0, Duplex duplex = Duplex::kFull) {
  CostModel m = testing::textbook_model();
  m.copy = copy;
  m.duplex = duplex;
  return m;
}

Time makespan(std::string_view algorithm, const CollectiveSpec& spec, const CostModel& m) {
  // Built for the model it is priced under: builders resolve "auto" parameters from it.
  const auto result = simulate(algorithms::build(algorithm, spec, {}, m), m);
  EXPECT_EQ(result.status, SimStatus::kOk) << algorithm << ": " << result.deadlock;
  return result.makespan;
}

// ---- the papers' closed forms --------------------------------------------------------------

TEST(ClosedForm, BinomialBroadcastAnyDuplex) {
  // ceil(log2 p)(α + nβ), one port, half or full duplex (every rank sends or receives alone).
  for (Rank p = 1; p <= 70; ++p) {
    for (const Count n : {1, 100}) {
      const Time expected = static_cast<Time>(ceil_log2(p)) * (kAlpha + n * kBeta);
      for (const Duplex d : {Duplex::kFull, Duplex::kHalf}) {
        EXPECT_EQ(makespan("bcast/binomial", make_spec(CollectiveKind::kBcast, p, n), model(0, d)),
                  expected)
            << "p=" << p << " n=" << n;
      }
    }
  }
}

TEST(ClosedForm, RingAllgatherFullDuplex) {
  // (p-1)(α + (n/p)β) with n/p = m, the block: full duplex, one port, copy = 0.
  for (Rank p = 2; p <= 20; ++p) {
    for (const Count m : {1, 7}) {
      EXPECT_EQ(makespan("allgather/ring", make_spec(CollectiveKind::kAllgather, p, m), model()),
                (p - 1) * (kAlpha + m * kBeta))
          << "p=" << p << " m=" << m;
    }
  }
}

TEST(ClosedForm, RingAllgatherHalfDuplexIsSlower) {
  // p = 3, m = 1, T = α + β = 101. Full duplex: 2 steps of T = 202. Half duplex, computed by
  // hand from the start-order rule (each rank has 2 sends and 2 receives, one at a time):
  //   [0,101] 0->1;  [101,202] 1->2;  [202,303] 2->0;  [303,404] 1->2 (2nd);
  //   [404,505] 2->0 (2nd);  [505,606] 0->1 (2nd)
  // so 606 = 6T: three times the full-duplex time (4T is the per-rank lower bound).
  const auto spec = make_spec(CollectiveKind::kAllgather, 3, 1);
  EXPECT_EQ(makespan("allgather/ring", spec, model(0, Duplex::kFull)), 202);
  EXPECT_EQ(makespan("allgather/ring", spec, model(0, Duplex::kHalf)), 606);
}

TEST(ClosedForm, BinomialScatterPowersOfTwo) {
  // log2(p)α + (p-1)mβ for p a power of two, root 0 (Chan et al.'s MST scatter: the root
  // sends halves, quarters, ...).
  for (const Rank p : {2, 4, 8, 16, 32, 64}) {
    for (const Count m : {1, 5}) {
      EXPECT_EQ(makespan("scatter/binomial", make_spec(CollectiveKind::kScatter, p, m), model()),
                ceil_log2(p) * kAlpha + (p - 1) * m * kBeta)
          << "p=" << p << " m=" << m;
    }
  }
}

TEST(ClosedForm, RingAllreduceWithGamma) {
  // 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ for p | n: full duplex, copy = 0.
  for (Rank p = 2; p <= 17; ++p) {
    for (const Count k : {1, 6}) {
      const Count n = p * k;
      EXPECT_EQ(makespan("allreduce/ring", make_spec(CollectiveKind::kAllreduce, p, n), model()),
                2 * (p - 1) * kAlpha + 2 * (p - 1) * k * kBeta + (p - 1) * k * kGamma)
          << "p=" << p << " n=" << n;
    }
  }
}

TEST(ClosedForm, BinomialReduceWithGamma) {
  // ceil(log2 p)(α + nβ + nγ) + n·copy (Chan et al.'s MST reduce; the copy of the rank's own
  // contribution happens once, on every rank at the same time).
  for (Rank p = 1; p <= 33; ++p) {
    for (const Count n : {1, 50}) {
      for (const Time copy : {0.0, 1.0}) {
        EXPECT_EQ(
            makespan("reduce/binomial", make_spec(CollectiveKind::kReduce, p, n), model(copy)),
            ceil_log2(p) * (kAlpha + n * kBeta + n * kGamma) + n * copy)
            << "p=" << p << " n=" << n << " copy=" << copy;
      }
    }
  }
}

// ---- every registry algorithm's formula ---------------------------------------------------

// What a formula may refer to.
struct Env {
  Rank p = 0;
  Rank root = 0;
  Count n = 0;                // the message (bcast, (all)reduce, (ex)scan) or all blocks' total
  Count m = 0;                // the uniform block
  std::vector<Count> counts;  // v-variants: blocks (alltoallv: the p x p matrix)
  Time copy = 0;
  std::int64_t log = 0;  // ceil(log2 p)
  Count block(Rank q) const { return counts.empty() ? m : counts[static_cast<std::size_t>(q)]; }
  Count sum_except(Rank skip) const {
    Count s = 0;
    for (Rank q = 0; q < p; ++q) s += q == skip ? 0 : block(q);
    return s;
  }
};

enum class Relation { kExact, kLowerBound, kUpperBound };

struct Formula {
  Relation relation = Relation::kExact;
  bool needs_power_of_two = false;
  bool needs_divisible = false;  // p | n
  bool needs_nonempty = false;   // no empty block
  bool copy_free = false;        // the formula holds for copy = 0 only
  bool uniform_only = false;     // written in terms of a uniform block m
  std::function<Time(const Env&)> cost;
};

Time a(std::int64_t k) { return static_cast<Time>(k) * kAlpha; }
Time b(std::int64_t k) { return static_cast<Time>(k) * kBeta; }
Time g(std::int64_t k) { return static_cast<Time>(k) * kGamma; }

// The scan and exscan algorithms' header formulas (one port, no overlap, full duplex), n =
// each rank's vector; exact for every copy rate.
Time scan_linear(Rank p, Count n, Time copy) {
  if (p == 1) return n * copy;
  return (p - 1) * (a(1) + b(n) + g(n)) + (p == 2 ? n * std::max(0.0, copy - kGamma) : 0);
}
Time scan_doubling(Rank p, Count n, Time copy) {
  if (p == 1) return n * copy;
  // Rank 0's copy delays its step-1 send to rank 2 by n·max(0, copy − γ); the delay reaches
  // the last step along ranks 2, 6, 14, ..., 2^L − 2, so only if that rank exists.
  const std::int64_t log = ceil_log2(p);
  const bool late = p >= (std::int64_t{1} << log) - 1;
  return log * (a(1) + b(n) + g(n)) + (late ? n * std::max(0.0, copy - kGamma) : 0);
}
Time exscan_linear(Rank p, Count n, Time copy) {
  if (p <= 2) return (p - 1) * (a(1) + b(n));
  return (p - 1) * (a(1) + b(n)) + (p - 2) * g(n) + n * copy;
}
Time exscan_doubling(Rank p, Count n, Time copy) {
  const std::int64_t log = ceil_log2(p);
  if (p <= 3) return log * (a(1) + b(n)) + (p == 3 ? g(n) : 0);
  const bool both_at_step_before_last = p > 3 * (std::int64_t{1} << (log - 2));
  return log * (a(1) + b(n)) + n * copy + (2 * log - 2 - (both_at_step_before_last ? 0 : 1)) * g(n);
}

// scatterv/gatherv over a flat tree: every non-empty non-root block costs one message; the
// root copies its own block.
Formula linear_tree_v() {
  return {.cost = [](const Env& e) {
    Time t = e.block(e.root) * e.copy;
    for (Rank q = 0; q < e.p; ++q) {
      if (q != e.root && e.block(q) > 0) t += a(1) + b(e.block(q));
    }
    return t;
  }};
}

// scatterv/gatherv over a binomial tree: the closed form holds for regular blocks; irregular
// blocks follow Träff's tree recursion (TreeRecursion below).
Formula binomial_tree_v() {
  return {.needs_power_of_two = true,
          .needs_nonempty = true,
          .copy_free = true,
          .uniform_only = true,
          .cost = [](const Env& e) { return a(e.log) + b(e.sum_except(e.root)); }};
}

// n·copy (the input into the output), then the bucket ring: 2(p-1)α + 2(p-1)·(n/p)β +
// (p-1)·(n/p)γ.
Formula torus_ring_allreduce() {
  return {.needs_divisible = true, .cost = [](const Env& e) {
            const Count piece = e.n / e.p;
            return e.n * e.copy + a(2 * (e.p - 1)) + b(2 * (e.p - 1) * piece) +
                   g((e.p - 1) * piece);
          }};
}

// Träff's trees (optimal, adaptive, oblivious, binary): the one-port lower bound — the root
// receives every other block through its port and copies its own without overlap. (Their
// exact times are tested against the planners' Definition 2 in tests/algorithms/.)
Formula traff_tree_bound() {
  return {.relation = Relation::kLowerBound,
          .cost = [](const Env& e) { return b(e.sum_except(e.root)) + e.block(e.root) * e.copy; }};
}

// ---- tree families (issue 3): slot counts from the trees' definitions, written out here.
// bcast over the heap-ordered binary tree: rank x−1 is floor(log2 x) hops deep and waits one
// extra slot on every hop to a second child (a 1 bit of x below its leading bit).
std::int64_t heap_bcast_slots(Rank p) {
  std::int64_t w = 0;
  for (std::int64_t x = 1; x <= p; ++x) {
    std::int64_t bits = 0;
    for (std::int64_t y = x; y > 1; y /= 2) bits += 1 + (y % 2);
    w = std::max(w, bits);
  }
  return w;
}
// reduce over the heap-ordered binary tree, smaller child (2v+2) first: a rank's partial is
// ready after t = max(t, ready(child)) + 1 over its children in that order.
std::int64_t heap_reduce_slots(Rank p, std::int64_t v = 0) {
  std::int64_t t = 0;
  for (const std::int64_t c : {2 * v + 2, 2 * v + 1}) {
    if (c < p) t = std::max(t, heap_reduce_slots(p, c)) + 1;
  }
  return t;
}
std::int64_t ceil_log(Rank p, std::int64_t k) {
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < p; reach *= k) ++rounds;
  return rounds;
}
// Steps of one segment through the double binary trees (bcast/double_binary's header):
// 2·floor(log2(p−1)), one more when p − 1 ≡ 2 (mod 4) or p − 1 = 2^k − 1; p = 1, 2, 3: 0, 1, 2.
std::int64_t two_tree_depth(Rank p) {
  if (p <= 3) return p - 1;
  std::int64_t levels = 0;
  for (Rank q = p - 1; q > 1; q /= 2) ++levels;
  const Rank q = p - 1;
  return 2 * levels + (q % 4 == 2 || (q & (q + 1)) == 0 ? 1 : 0);
}
// A pipeline with `slots` unpipelined slots and `fanout` messages per segment on its
// busiest rank, minimized over every segment count S in [1, n] (exhaustive search here;
// the builders search near the analytic optimum): per segment α + ceil(n/S)·c.
Time best_pipeline(const Env& e, std::int64_t slots, std::int64_t fanout, Time c) {
  if (e.n == 0 || e.p == 1) return 0;
  Time best = -1;
  for (Count s = 1; s <= e.n; ++s) {
    const Count largest = (e.n + s - 1) / s;
    const Time t = static_cast<Time>(slots - fanout) * (kAlpha + largest * c) +
                   static_cast<Time>(fanout) * (static_cast<Time>(s) * kAlpha + e.n * c);
    if (best < 0 || t < best) best = t;
  }
  return best;
}

// Hybrids over logical grids (Chan et al.): every ordered factorization of p into at most
// 8 factors >= 2 ({p} included), and for tree-shaped hybrids every kinds pattern (l: scatter
// + allgather / reduce-scatter + gather, s: MST); "auto" picks the least formula.
void factorizations(std::int64_t rest, std::vector<std::int64_t>& prefix,
                    std::vector<std::vector<std::int64_t>>& out) {
  if (rest == 1) {
    out.push_back(prefix);
    return;
  }
  if (prefix.size() == 8) return;
  for (std::int64_t f = 2; f <= rest; ++f) {
    if (rest % f != 0) continue;
    prefix.push_back(f);
    factorizations(rest / f, prefix, out);
    prefix.pop_back();
  }
}
std::int64_t log2_exact(std::int64_t d) { return ceil_log2(static_cast<Rank>(d)); }
// Σ_l [log2(d)α + (d-1)/d·sβ + (d-1)(α + s/d·(β + γ))] + Σ_s log2(d)(α + s(β + γ)), with
// γ only when reducing; s shrinks by d after every long dimension.
Time tree_hybrid(const std::vector<std::int64_t>& dims, std::uint32_t short_mask, Count n,
                 bool reduce) {
  Time t = 0;
  Count s = n;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    if ((short_mask >> i) & 1) {
      t += log2_exact(d) * (a(1) + b(s) + (reduce ? g(s) : 0));
    } else {
      t += a(log2_exact(d)) + b((d - 1) * (s / d)) + (d - 1) * (a(1) + b(s / d));
      if (reduce) t += g((d - 1) * (s / d));
      s /= d;
    }
  }
  return t;
}
Time best_tree_hybrid(Rank p, Count n, bool reduce) {
  std::vector<std::vector<std::int64_t>> all;
  std::vector<std::int64_t> prefix;
  factorizations(p, prefix, all);
  Time best = -1;
  for (const auto& dims : all) {
    for (std::uint32_t mask = 0; mask < (1u << dims.size()); ++mask) {
      const Time t = tree_hybrid(dims, mask, n, reduce);
      if (best < 0 || t < best) best = t;
    }
  }
  return best;
}
// The 2-D options over every c x r = p; `kinds` 0: ss, 1: ls, 2: ll.
Time best_2d_option(Rank p, Count n, int kinds) {
  Time best = -1;
  for (std::int64_t c = 1; c <= p; ++c) {
    if (p % c != 0) continue;
    const std::int64_t r = p / c;
    Time t = 0;
    if (kinds == 0) t = (log2_exact(c) + log2_exact(r)) * (a(1) + b(n));
    if (kinds == 1) {
      t = a(log2_exact(p) + c - 1) + b((2 * (c - 1) * n + log2_exact(r) * n) / c);
    }
    if (kinds == 2) t = a(log2_exact(p) + r + c - 2) + b(2 * (p - 1) * (n / p));
    if (best < 0 || t < best) best = t;
  }
  return best;
}
// Ring hybrids: Σ(d_i - 1) is least for the prime factorization.
std::int64_t prime_factor_steps(Rank p) {
  std::int64_t steps = 0;
  std::int64_t rest = p;
  for (std::int64_t f = 2; f <= rest; ++f) {
    while (rest % f == 0) {
      steps += f - 1;
      rest /= f;
    }
  }
  return steps;
}

// The node-aware algorithms under a model without a placement: one rank per node, so the
// phase between the nodes is the whole call, run by the flat algorithm of `flat_kind` auto
// chose for it (recorded in the schedule's parameters as `phase`=name) on the same blocks,
// and the one-rank phases copy each rank's `copied` elements into or out of the hand-off
// areas (all ranks alike: the whole schedule shifts by that copy; gather(v) and scatter(v)
// use a one-rank node's own buffers as its hand-off, and copy nothing).
Time one_rank_per_node(std::string_view name, CollectiveKind kind, CollectiveKind flat_kind,
                       std::string_view phase, Count copied, const Env& e) {
  const CostModel m = model(e.copy);
  const auto spec = takes_counts(kind)
                        ? make_spec_v(kind, e.p, e.counts, e.root)
                        : make_spec(kind, e.p, count_is_message(kind) ? e.n : e.m, e.root);
  const Schedule s = algorithms::build(name, spec, {}, m);
  const auto params = algorithms::Params::parse(s.params);
  const std::string flat = fmt::format("{}/{}", collective_name(flat_kind), params.get(phase));
  const auto cells =
      static_cast<std::size_t>(flat_kind == CollectiveKind::kAlltoallv ? e.p * e.p : e.p);
  const auto flat_spec =
      flat_kind == kind
          ? spec
          : make_spec_v(flat_kind, e.p,
                        takes_counts(kind) ? e.counts : std::vector<Count>(cells, e.m), e.root);
  return static_cast<Time>(copied) * e.copy + makespan(flat, flat_spec, m);
}

// The formulas of algorithms.def, with its names for the symbols. Where the string there is
// wrong, the correct formula is used and the comment says so (see the report in the docs).
const std::map<std::string, Formula>& formulas() {
  static const std::map<std::string, Formula> table{
      {"bcast/linear", {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.n)); }}},
      {"bcast/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("bcast/node_aware", CollectiveKind::kBcast,
                                       CollectiveKind::kBcast, "inter", 0, e);
            }}},
      {"reduce/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("reduce/node_aware", CollectiveKind::kReduce,
                                       CollectiveKind::kReduce, "inter", e.n, e);
            }}},
      {"allreduce/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("allreduce/node_aware", CollectiveKind::kAllreduce,
                                       CollectiveKind::kAllreduce, "inter", e.n, e);
            }}},
      {"allreduce/node_multileader",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("allreduce/node_multileader", CollectiveKind::kAllreduce,
                                       CollectiveKind::kAllreduce, "inter", 2 * e.n, e);
            }}},
      {"scatter/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("scatter/node_aware", CollectiveKind::kScatter,
                                       CollectiveKind::kScatterv, "inter", 0, e);
            }}},
      {"scatterv/node_aware",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return one_rank_per_node("scatterv/node_aware", CollectiveKind::kScatterv,
                                       CollectiveKind::kScatterv, "inter", 0, e);
            }}},
      {"gather/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("gather/node_aware", CollectiveKind::kGather,
                                       CollectiveKind::kGatherv, "inter", 0, e);
            }}},
      {"gatherv/node_aware",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return one_rank_per_node("gatherv/node_aware", CollectiveKind::kGatherv,
                                       CollectiveKind::kGatherv, "inter", 0, e);
            }}},
      {"allgather/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("allgather/node_aware", CollectiveKind::kAllgather,
                                       CollectiveKind::kAllgatherv, "inter", e.block(0), e);
            }}},
      {"allgatherv/node_aware",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return one_rank_per_node("allgatherv/node_aware", CollectiveKind::kAllgatherv,
                                       CollectiveKind::kAllgatherv, "inter", e.block(0), e);
            }}},
      {"reduce_scatter/node_aware",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return one_rank_per_node("reduce_scatter/node_aware", CollectiveKind::kReduceScatter,
                                       CollectiveKind::kReduceScatter, "inter", e.n + e.block(0),
                                       e);
            }}},
      {"reduce_scatter_block/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("reduce_scatter_block/node_aware",
                                       CollectiveKind::kReduceScatterBlock,
                                       CollectiveKind::kReduceScatter, "inter", e.n + e.m, e);
            }}},
      // alltoall(v): the rank's send buffer is copied twice (gathered, packed by node) and
      // its receive buffer twice (unpacked by rank, scattered) around the flat exchange.
      {"alltoall/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("alltoall/node_aware", CollectiveKind::kAlltoall,
                                       CollectiveKind::kAlltoallv, "inter", 4 * e.p * e.m, e);
            }}},
      {"alltoallv/node_aware",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return one_rank_per_node("alltoallv/node_aware", CollectiveKind::kAlltoallv,
                                       CollectiveKind::kAlltoallv, "inter", 4 * e.p * e.counts[0],
                                       e);
            }}},
      {"barrier/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("barrier/node_aware", CollectiveKind::kBarrier,
                                       CollectiveKind::kBarrier, "inter", 0, e);
            }}},
      {"bcast/binomial", {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n)); }}},
      // Theorem 4's ordered trees: homogeneously the optimum is the binomial time (the lower
      // bound of one port, reached by halving the range around the root).
      {"bcast/optimal_ordered", {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n)); }}},
      {"bcast/scatter_ring_allgather",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .copy_free = true,
        .cost = [](const Env& e) { return a(e.log + e.p - 1) + b(2 * (e.p - 1) * (e.n / e.p)); }}},
      {"bcast/scatter_doubling_allgather",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .copy_free = true,
        .cost = [](const Env& e) { return a(2 * e.log) + b(2 * (e.p - 1) * (e.n / e.p)); }}},
      {"bcast/hybrid_2d_mst",
       {.copy_free = true, .cost = [](const Env& e) { return best_2d_option(e.p, e.n, 0); }}},
      {"bcast/hybrid_2d_scatter_mst",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .copy_free = true,
        .cost = [](const Env& e) { return best_2d_option(e.p, e.n, 1); }}},
      {"bcast/hybrid_2d_scatter",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .copy_free = true,
        .cost = [](const Env& e) { return best_2d_option(e.p, e.n, 2); }}},
      {"bcast/hybrid",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .copy_free = true,
        .cost = [](const Env& e) { return best_tree_hybrid(e.p, e.n, false); }}},
      {"reduce/linear",
       {.cost = [](const Env& e) { return e.n * e.copy + (e.p - 1) * (a(1) + b(e.n) + g(e.n)); }}},
      {"reduce/binomial",
       {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n) + g(e.n)) + e.n * e.copy; }}},
      // No local copy for p >= 2 (the first partial is received into the accumulator).
      {"reduce/optimal_ordered",
       {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n) + g(e.n)); }}},
      // Built for the default model (no overlap: planned with d' = 0, c' = d + c, where
      // Canon-Antoniu's optimum is ceil(log2 p)·c'), run here without overlap.
      {"reduce/greedy_overlap",
       {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n) + g(e.n)); }}},
      // Without overlap "auto" takes one segment: reduce/greedy_overlap's cost.
      {"reduce/greedy_segmented",
       {.cost = [](const Env& e) { return e.log * (a(1) + b(e.n) + g(e.n)); }}},
      // The d = c optimal tree, timed without overlap (d' = 0, c' = α + nβ + nγ).
      {"reduce/fibonacci",
       {.cost =
            [](const Env& e) {
              return algorithms::planners::fibonacci_strategy(e.p, {0, a(1) + b(e.n) + g(e.n)})
                  .length;
            }}},
      {"reduce/rabenseifner",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return e.n * e.copy + a(2 * e.log) + b(2 * (e.p - 1) * piece) + g((e.p - 1) * piece);
            }}},
      {"reduce/bucket",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return e.n * e.copy + (e.p - 1) * (a(1) + b(piece) + g(piece)) + a(e.log) +
                     b((e.p - 1) * piece);
            }}},
      {"reduce/hybrid",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .cost = [](const Env& e) { return e.n * e.copy + best_tree_hybrid(e.p, e.n, true); }}},
      {"scatter/linear",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      {"scatter/binomial",
       {.needs_power_of_two = true,
        .copy_free = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m); }}},
      {"scatterv/linear", linear_tree_v()},
      // One port (the model here): the LPT lists are one list, linear's sum in size order.
      {"scatterv/lpt_star", linear_tree_v()},
      {"scatter/lpt_star",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      {"scatterv/binomial", binomial_tree_v()},
      {"gather/linear",
       {.cost = [](const Env& e) { return e.m * e.copy + (e.p - 1) * (a(1) + b(e.m)); }}},
      {"gather/binomial",
       {.needs_power_of_two = true,
        .copy_free = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m); }}},
      {"gatherv/linear", linear_tree_v()},
      {"gatherv/lpt_star", linear_tree_v()},
      {"gather/lpt_star",
       {.cost = [](const Env& e) { return e.m * e.copy + (e.p - 1) * (a(1) + b(e.m)); }}},
      {"gatherv/binomial", binomial_tree_v()},
      {"scatter/optimal", traff_tree_bound()},
      {"scatter/adaptive_binomial", traff_tree_bound()},
      {"scatter/oblivious_binomial", traff_tree_bound()},
      {"scatter/binary_optimal", traff_tree_bound()},
      {"scatterv/optimal", traff_tree_bound()},
      {"scatterv/adaptive_binomial", traff_tree_bound()},
      {"scatterv/oblivious_binomial", traff_tree_bound()},
      {"scatterv/binary_optimal", traff_tree_bound()},
      {"gather/optimal", traff_tree_bound()},
      {"gather/adaptive_binomial", traff_tree_bound()},
      {"gather/oblivious_binomial", traff_tree_bound()},
      {"gather/binary_optimal", traff_tree_bound()},
      {"gatherv/optimal", traff_tree_bound()},
      {"gatherv/adaptive_binomial", traff_tree_bound()},
      {"gatherv/oblivious_binomial", traff_tree_bound()},
      {"gatherv/binary_optimal", traff_tree_bound()},
      {"gatherv/two_block", traff_tree_bound()},
      {"scatterv/two_block", traff_tree_bound()},
      {"allgather/linear",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      {"allgather/ring",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      {"allgather/recursive_doubling",
       {.needs_power_of_two = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m) + e.m * e.copy; }}},
      {"allgather/bruck",
       {.cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m) + (e.m + e.n) * e.copy; }}},
      {"allgatherv/recursive_doubling",
       {.needs_power_of_two = true,
        .uniform_only = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m) + e.m * e.copy; }}},
      {"allgatherv/bruck",
       {.uniform_only = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m) + (e.m + e.n) * e.copy; }}},
      {"allgather/hybrid",
       {.cost =
            [](const Env& e) {
              return a(prime_factor_steps(e.p)) + b((e.p - 1) * e.m) + e.m * e.copy;
            }}},
      {"allgatherv/hybrid",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return a(prime_factor_steps(e.p)) + b((e.p - 1) * e.m) + e.m * e.copy;
            }}},
      // All p circulant broadcasts at once (allgather/circulant.cc): with equal blocks every
      // piece crosses p − 1 edges once, so the β term is the ring's whatever S, and auto
      // takes S = 1: q rounds. (Copies: the packed rounds' elements twice, which depend on
      // the schedule's rounds; tests/sim/circulant_allgather_test.cc checks them and the
      // irregular blocks against the estimate's replay.)
      {"allgather/circulant",
       {.copy_free = true, .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m); }}},
      {"allgatherv/circulant",
       {.copy_free = true,
        .uniform_only = true,
        .cost = [](const Env& e) { return a(e.log) + b((e.p - 1) * e.m); }}},
      {"reduce_scatter/hybrid",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return a(prime_factor_steps(e.p)) + b((e.p - 1) * e.m) + g((e.p - 1) * e.m) +
                     (e.n + e.m) * e.copy;
            }}},
      {"reduce_scatter_block/hybrid",
       {.cost =
            [](const Env& e) {
              return a(prime_factor_steps(e.p)) + b((e.p - 1) * e.m) + g((e.p - 1) * e.m) +
                     (e.n + e.m) * e.copy;
            }}},
      {"allreduce/ring_segmented",  // one segment under this model (no overlap)
       {.needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return a(2 * (e.p - 1)) + b(2 * (e.p - 1) * piece) + g((e.p - 1) * piece) +
                     e.n * e.copy;
            }}},
      {"allreduce/hybrid",
       {.needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return a(2 * prime_factor_steps(e.p)) + b(2 * (e.p - 1) * piece) +
                     g((e.p - 1) * piece) + e.n * e.copy;
            }}},
      {"allgather/gather_then_bcast",
       {.needs_power_of_two = true,
        .copy_free = true,
        .cost =
            [](const Env& e) {
              // 2·log2(p)·α + (log2(p) + (p-1)/p)·nβ with n = p·m
              return a(2 * e.log) + b(e.log * e.n + (e.p - 1) * e.m);
            }}},
      {"allgatherv/linear",
       {.relation = Relation::kLowerBound,  // "roughly"
        .copy_free = true,
        .cost =
            [](const Env& e) {
              Count most = 0;
              for (Rank r = 0; r < e.p; ++r) most = std::max(most, e.sum_except(r));
              return a(e.p - 1) + b(most);
            }}},
      {"allgatherv/ring",
       {.copy_free = true,
        .cost =
            [](const Env& e) {
              // (p-1)α + β·Σ_steps (max block in flight); every block is in flight in every
              // step, so the sum is (p-1)·max_q m_q.
              Count most = 0;
              for (Rank q = 0; q < e.p; ++q) most = std::max(most, e.block(q));
              return a(e.p - 1) + b((e.p - 1) * most);
            }}},
      // Exact for regular blocks only, as gatherv/binomial.
      {"allgatherv/gather_then_bcast",
       {.needs_power_of_two = true,
        .needs_nonempty = true,
        .copy_free = true,
        .uniform_only = true,
        .cost = [](const Env& e) { return a(2 * e.log) + b(e.sum_except(0) + e.log * e.n); }}},
      {"reduce_scatter/linear",
       {.cost =
            [](const Env& e) {
              // Linear reduce of the whole vector to rank 0, then linear scatterv from rank 0.
              Time t = e.n * e.copy + (e.p - 1) * (a(1) + b(e.n) + g(e.n)) + e.block(0) * e.copy;
              for (Rank q = 1; q < e.p; ++q) t += e.block(q) > 0 ? a(1) + b(e.block(q)) : 0;
              return t;
            }}},
      {"reduce_scatter/ring",
       {.uniform_only = true,
        .cost =
            [](const Env& e) {
              return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + (e.p - 1) * e.m * e.copy;
            }}},
      {"reduce_scatter/recursive_halving",
       {.needs_power_of_two = true,
        .uniform_only = true,
        .cost =
            [](const Env& e) {
              return a(e.log) + b((e.p - 1) * e.m) + g((e.p - 1) * e.m) + (e.n + e.m) * e.copy;
            }}},
      {"reduce_scatter/pairwise",
       {.relation = Relation::kUpperBound,  // ranks run ahead of the lockstep
        .uniform_only = true,
        .cost =
            [](const Env& e) {
              return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + g(e.m) + e.m * e.copy;
            }}},
      {"reduce_scatter/reduce_then_scatter",
       {.needs_power_of_two = true,
        .copy_free = true,
        .uniform_only = true,
        .cost =
            [](const Env& e) {
              return a(2 * e.log) + b(e.log * e.n + (e.p - 1) * e.m) + g(e.log * e.n);
            }}},
      {"reduce_scatter_block/linear",
       {.cost =
            [](const Env& e) {
              return e.n * e.copy + (e.p - 1) * (a(1) + b(e.n) + g(e.n)) +
                     (e.m > 0 ? (e.p - 1) * (a(1) + b(e.m)) : 0) + e.m * e.copy;
            }}},
      // Reproducible reductions: p-1 exchange steps of raw blocks, then p-1 left-fold
      // reductions of m elements after copying the first operand; allreduce and reduce
      // add p-1 steps of folded pieces (ring allgather, or p-1 receives at the root).
      {"reduce_scatter_block/reproducible",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + e.m * e.copy; }}},
      {"reduce_scatter/reproducible",
       {.uniform_only = true,
        .cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + e.m * e.copy; }}},
      {"allreduce/reproducible",
       {.needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return (e.p - 1) * (a(2) + b(2 * piece) + g(piece)) + piece * e.copy;
            }}},
      {"reduce/reproducible",
       {.needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return (e.p - 1) * (a(2) + b(2 * piece) + g(piece)) + piece * e.copy;
            }}},
      {"reduce_scatter_block/ring",
       {.cost =
            [](const Env& e) {
              return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + (e.p - 1) * e.m * e.copy;
            }}},
      {"reduce_scatter_block/recursive_halving",
       {.needs_power_of_two = true,
        .cost =
            [](const Env& e) {
              return a(e.log) + b((e.p - 1) * e.m) + g((e.p - 1) * e.m) + (e.n + e.m) * e.copy;
            }}},
      {"reduce_scatter_block/pairwise",
       {.relation = Relation::kUpperBound,  // ranks run ahead of the lockstep
        .cost =
            [](const Env& e) {
              return (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + g(e.m) + e.m * e.copy;
            }}},
      {"reduce_scatter_block/reduce_then_scatter",
       {.needs_power_of_two = true,
        .copy_free = true,
        .cost =
            [](const Env& e) {
              return a(2 * e.log) + b(e.log * e.n + (e.p - 1) * e.m) + g(e.log * e.n);
            }}},
      {"allreduce/linear",
       {.cost =
            [](const Env& e) {
              return e.n * e.copy + (e.p - 1) * (a(1) + b(e.n) + g(e.n)) +
                     (e.p - 1) * (a(1) + b(e.n));
            }}},
      {"allreduce/ring",
       {.needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return a(2 * (e.p - 1)) + b(2 * (e.p - 1) * piece) + g((e.p - 1) * piece) +
                     (e.p - 1) * piece * e.copy;
            }}},
      {"allreduce/reduce_then_bcast",
       {.copy_free = true,
        .cost = [](const Env& e) { return a(2 * e.log) + e.log * (b(2 * e.n) + g(e.n)); }}},
      // Torus algorithms without a topology: a 1-D bucket ring in rank order (issue 6).
      {"allreduce/multicolor_bucket", torus_ring_allreduce()},
      {"allreduce/dimension_wise", torus_ring_allreduce()},
      {"allreduce/ring_snake", torus_ring_allreduce()},
      // Two rings on one port: at least as long as one ring on half the data.
      {"allreduce/bidirectional_ring",
       {.relation = Relation::kLowerBound,
        .cost =
            [](const Env& e) {
              const Count half = e.n / 2 / e.p;
              return e.n * e.copy + a(2 * (e.p - 1)) + b(2 * (e.p - 1) * half) +
                     g((e.p - 1) * half);
            }}},
      {"reduce_scatter_block/multicolor_bucket",
       {.cost =
            [](const Env& e) {
              return e.n * e.copy + (e.p - 1) * (a(1) + b(e.m) + g(e.m)) + e.m * e.copy;
            }}},
      {"allgather/multicolor_bucket",
       {.cost =
            [](const Env& e) {
              return e.m * e.copy + (e.p - 1) * (a(1) + b(e.m)) + e.n * e.copy;
            }}},
      {"allreduce/greedy_overlap",
       {.cost = [](const Env& e) { return a(2 * e.log) + e.log * (b(2 * e.n) + g(e.n)); }}},
      {"allreduce/recursive_doubling",
       {.cost =
            [](const Env& e) {
              // floor(log2 p) butterfly steps; the fold and hand-back for the extra ranks.
              const std::int64_t steps = power_of_two(e.p) ? e.log : e.log - 1;
              const Time fold = power_of_two(e.p) ? 0 : (a(1) + b(e.n) + g(e.n)) + (a(1) + b(e.n));
              return e.n * e.copy + steps * (a(1) + b(e.n) + g(e.n)) + fold;
            }}},
      {"allreduce/rabenseifner",
       {.needs_power_of_two = true,
        .needs_divisible = true,
        .cost =
            [](const Env& e) {
              const Count piece = e.n / e.p;
              return e.n * e.copy + a(2 * e.log) + b(2 * (e.p - 1) * piece) + g((e.p - 1) * piece);
            }}},
      {"alltoall/linear",
       {.relation = Relation::kLowerBound,
        .cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      {"alltoall/pairwise",
       {.cost = [](const Env& e) { return (e.p - 1) * (a(1) + b(e.m)) + e.m * e.copy; }}},
      // ">= (p-1)α + β·max_r Σ_q m_rq" fails with empty blocks (they cost no α). A sound
      // bound: the busiest send or receive port, counting non-empty messages only.
      {"alltoallv/linear",
       {.relation = Relation::kLowerBound,
        .copy_free = true,
        .cost =
            [](const Env& e) {
              Time most = 0;
              for (Rank r = 0; r < e.p; ++r) {
                Time sent = 0;
                Time received = 0;
                for (Rank q = 0; q < e.p; ++q) {
                  const Count out = e.counts[static_cast<std::size_t>(r * e.p + q)];
                  const Count in = e.counts[static_cast<std::size_t>(q * e.p + r)];
                  if (q != r && out > 0) sent += a(1) + b(out);
                  if (q != r && in > 0) received += a(1) + b(in);
                }
                most = std::max({most, sent, received});
              }
              return most;
            }}},
      // "roughly": an upper bound (steps are not barriers, so ranks run ahead).
      {"alltoallv/pairwise",
       {.relation = Relation::kUpperBound,
        .copy_free = true,
        .cost =
            [](const Env& e) {
              // Σ_s (α + β·max block of step s): in step s rank r sends to r+s.
              Time t = 0;
              for (Rank s = 1; s < e.p; ++s) {
                Count most = 0;
                for (Rank r = 0; r < e.p; ++r) {
                  most =
                      std::max(most, e.counts[static_cast<std::size_t>(r * e.p + (r + s) % e.p)]);
                }
                t += a(1) + b(most);
              }
              return t;
            }}},
      {"bcast/binary",
       {.cost = [](const Env& e) { return heap_bcast_slots(e.p) * (a(1) + b(e.n)); }}},
      {"bcast/knomial",  // radix 4 (the default)
       {.relation = Relation::kUpperBound,
        .cost = [](const Env& e) { return ceil_log(e.p, 4) * 3 * (a(1) + b(e.n)); }}},
      {"bcast/pipelined_chain",
       {.cost = [](const Env& e) { return best_pipeline(e, e.p - 1, 1, kBeta); }}},
      {"bcast/pipelined_binary",
       {.cost =
            [](const Env& e) {
              return best_pipeline(e, heap_bcast_slots(e.p), e.p > 2 ? 2 : 1, kBeta);
            }}},
      // Two-tree step schedules (exact): D(p) − 1 fill steps of the largest segment, then
      // the root's S messages; S minimizes that (segment=auto).
      {"bcast/double_binary",
       {.cost = [](const Env& e) { return best_pipeline(e, two_tree_depth(e.p), 1, kBeta); }}},
      // Träff–Ripke circulant: S − 1 + q rounds, the larger blocks last (q − 1 fill rounds of
      // the largest block, then the root's S messages).
      {"bcast/circulant",
       {.cost = [](const Env& e) { return best_pipeline(e, ceil_log2(e.p), 1, kBeta); }}},
      {"reduce/circulant",
       {.copy_free = true,
        .cost = [](const Env& e) { return best_pipeline(e, ceil_log2(e.p), 1, kBeta + kGamma); }}},
      {"allreduce/circulant",  // reduce to rank 0, then bcast, the same S for both
       {.copy_free = true,
        .cost =
            [](const Env& e) {
              if (e.n == 0 || e.p == 1) return Time{0};
              const std::int64_t q = ceil_log2(e.p);
              Time best = -1;
              for (Count s = 1; s <= e.n; ++s) {
                const Count largest = (e.n + s - 1) / s;
                const Time t = static_cast<Time>(q - 1) * (a(2) + b(2 * largest) + g(largest)) +
                               a(2 * s) + b(2 * e.n) + g(e.n);
                if (best < 0 || t < best) best = t;
              }
              return best;
            }}},
      {"reduce/double_binary",
       {.copy_free = true,
        .cost =
            [](const Env& e) { return best_pipeline(e, two_tree_depth(e.p), 1, kBeta + kGamma); }}},
      {"allreduce/double_binary",  // reduce to rank 0, then bcast, the same S for both
       {.copy_free = true,
        .cost =
            [](const Env& e) {
              if (e.n == 0 || e.p == 1) return Time{0};
              const std::int64_t d = two_tree_depth(e.p);
              Time best = -1;
              for (Count s = 1; s <= e.n; ++s) {
                const Count largest = (e.n + s - 1) / s;
                const Time t = static_cast<Time>(d - 1) * (a(2) + b(2 * largest) + g(largest)) +
                               a(2 * s) + b(2 * e.n) + g(e.n);
                if (best < 0 || t < best) best = t;
              }
              return best;
            }}},
      {"reduce/binary",
       {.cost =
            [](const Env& e) {
              return heap_reduce_slots(e.p) * (a(1) + b(e.n) + g(e.n)) + e.n * e.copy;
            }}},
      {"reduce/knomial",  // radix 4 (the default)
       {.relation = Relation::kUpperBound,
        .cost =
            [](const Env& e) {
              return ceil_log(e.p, 4) * 3 * (a(1) + b(e.n) + g(e.n)) + e.n * e.copy;
            }}},
      {"reduce/pipelined_chain",
       {.copy_free = true,
        .cost = [](const Env& e) { return best_pipeline(e, e.p - 1, 1, kBeta + kGamma); }}},
      {"reduce/pipelined_binary",
       {.copy_free = true,
        .cost =
            [](const Env& e) {
              return best_pipeline(e, heap_reduce_slots(e.p), e.p > 2 ? 2 : 1, kBeta + kGamma);
            }}},
      {"alltoall/bruck",
       {.copy_free = true,
        .cost =
            [](const Env& e) {
              Time t = 0;
              for (std::int64_t bit = 1; bit < e.p; bit *= 2) {
                std::int64_t blocks = 0;
                for (std::int64_t i = 1; i < e.p; ++i) blocks += (i & bit) != 0 ? 1 : 0;
                t += a(1) + b(blocks * e.m);
              }
              return e.m == 0 ? 0 : t;
            }}},
      // scan, exscan: n is each rank's vector (the message). See ScanFormulas below.
      {"scan/linear", {.cost = [](const Env& e) { return scan_linear(e.p, e.n, e.copy); }}},
      {"scan/recursive_doubling",
       {.cost = [](const Env& e) { return scan_doubling(e.p, e.n, e.copy); }}},
      {"exscan/linear", {.cost = [](const Env& e) { return exscan_linear(e.p, e.n, e.copy); }}},
      {"exscan/recursive_doubling",
       {.cost = [](const Env& e) { return exscan_doubling(e.p, e.n, e.copy); }}},
      // One rank per run: the scan copies its input (a scan of one rank), the runs' exscan
      // is the whole call, and every rank but 0 then combines its prefix (nγ); an exscan's
      // runs of one rank take the prefix straight into their output.
      {"scan/node_aware",
       {.cost =
            [](const Env& e) {
              const CostModel m = model(e.copy);
              const auto spec = make_spec(CollectiveKind::kScan, e.p, e.n);
              const auto params = algorithms::Params::parse(
                  algorithms::build("scan/node_aware", spec, {}, m).params);
              const std::string inter = fmt::format("exscan/{}", params.get("inter"));
              const Time combine = e.p > 1 ? static_cast<Time>(e.n) * kGamma : 0;
              return static_cast<Time>(e.n) * e.copy +
                     makespan(inter, make_spec(CollectiveKind::kExscan, e.p, e.n), m) + combine;
            }}},
      {"exscan/node_aware",
       {.cost =
            [](const Env& e) {
              return one_rank_per_node("exscan/node_aware", CollectiveKind::kExscan,
                                       CollectiveKind::kExscan, "inter", 0, e);
            }}},
      {"barrier/linear", {.cost = [](const Env& e) { return 2 * (e.p - 1) * (a(1) + b(1)); }}},
      {"barrier/dissemination", {.cost = [](const Env& e) { return e.log * (a(1) + b(1)); }}},
  };
  return table;
}

TEST(RegistryFormulas, EveryAlgorithmHasOne) {
  for (const auto& info : algorithms::all_algorithms()) {
    EXPECT_TRUE(formulas().contains(std::string(info.name)))
        << info.name << " (cost: " << info.cost << ") has no formula in closed_form_test.cc";
  }
}

// The specs a formula is checked on: for v-variants, uniform blocks and irregular positive
// blocks (and blocks with zeros where the formula allows them).
std::vector<CollectiveSpec> specs_for(CollectiveKind kind, Rank p, const Formula& f) {
  std::vector<CollectiveSpec> specs;
  if (kind == CollectiveKind::kBarrier) {
    specs.push_back(make_spec(kind, p, 0));
    return specs;
  }
  if (!takes_counts(kind)) {
    for (const Count c : {1, 37, 560}) {  // 560 = 5 * 7 * 16: divisible by every p below
      const bool per_block = !count_is_message(kind);
      if (f.needs_divisible && !per_block && c % p != 0) continue;
      specs.push_back(make_spec(kind, p, c));
    }
    return specs;
  }
  const std::size_t cells = kind == CollectiveKind::kAlltoallv
                                ? static_cast<std::size_t>(p) * static_cast<std::size_t>(p)
                                : static_cast<std::size_t>(p);
  std::vector<Count> uniform(cells, 5);
  std::vector<Count> irregular(cells);
  std::vector<Count> with_zeros(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    irregular[i] = 1 + static_cast<Count>((i * 7) % 5) * 3;
    with_zeros[i] = i % 3 == 1 ? 0 : irregular[i];
  }
  specs.push_back(make_spec_v(kind, p, uniform));
  if (f.uniform_only) return specs;
  specs.push_back(make_spec_v(kind, p, irregular));
  if (!f.needs_nonempty) specs.push_back(make_spec_v(kind, p, with_zeros));
  return specs;
}

TEST(RegistryFormulas, MatchTheSimulator) {
  for (const auto& info : algorithms::all_algorithms()) {
    const auto it = formulas().find(std::string(info.name));
    if (it == formulas().end()) continue;
    const Formula& f = it->second;
    for (const Rank p : {4, 7, 16, 64}) {
      if (f.needs_power_of_two && !power_of_two(p)) continue;
      for (CollectiveSpec spec : specs_for(info.collective, p, f)) {
        if (info.why_not(spec, algorithms::resolve_params(info, {}))) continue;
        Env e;
        e.p = p;
        e.root = spec.root;
        e.counts = spec.counts;
        e.m = spec.count;
        e.log = ceil_log2(p);
        if (count_is_message(info.collective)) {
          e.n = spec.count;
        } else if (spec.counts.empty()) {
          e.n = p * spec.count;
        } else {
          e.n = std::accumulate(spec.counts.begin(), spec.counts.end(), Count{0});
          e.m = spec.counts[0];
        }
        for (const Time copy : {0.0, 1.0}) {
          if (copy > 0 && f.copy_free) continue;
          e.copy = copy;
          const Time expected = f.cost(e);
          const Time actual = makespan(info.name, spec, model(copy));
          const std::string where =
              std::string(info.name) + " p=" + std::to_string(p) +
              " count=" + std::to_string(spec.count) + " counts[0..1]=" +
              (spec.counts.empty()
                   ? std::string("-")
                   : std::to_string(spec.counts[0]) + "," + std::to_string(spec.counts[1])) +
              " copy=" + std::to_string(copy) + " (formula: " + std::string(info.cost) + ")";
          if (f.relation == Relation::kExact) {
            EXPECT_EQ(actual, expected) << where;
          } else if (f.relation == Relation::kLowerBound) {
            EXPECT_GE(actual, expected) << where;
          } else {
            EXPECT_LE(actual, expected) << where;
          }
        }
      }
    }
  }
}

// Irregular blocks on the binomial gather and scatter trees, in Träff's model (docs/math/
// gather-scatter-trees.md §2), computed from the schedule's recorded tree:
//   scatter: a node that holds its subtree's data at time R sends to its children in order,
//            child i receiving at R + Σ_{j<=i} (α + β|T_j|);
//   gather:  a node receives from its children one at a time; a child can send once its own
//            subtree is gathered (C(child)); one port serves them in order of C (earliest
//            release first, ties by rank), C(v) = fold of t = max(t, C(c)) + α + β|T_c|.
class TreeRecursion {
 public:
  TreeRecursion(const TreeShape& tree, std::vector<Count> counts)
      : tree_(tree), counts_(std::move(counts)) {}
  Count size(Rank v) const {
    Count s = counts_[static_cast<std::size_t>(v)];
    for (const Rank c : tree_.children[static_cast<std::size_t>(v)]) s += size(c);
    return s;
  }
  Time scatter(Rank v, Time held) const {
    Time t = held;
    Time last = held;
    for (const Rank c : tree_.children[static_cast<std::size_t>(v)]) {
      t += kAlpha + kBeta * size(c);
      last = std::max(last, scatter(c, t));
    }
    return std::max(last, t);
  }
  Time gather(Rank v) const {
    std::vector<std::pair<Time, Rank>> ready;
    for (const Rank c : tree_.children[static_cast<std::size_t>(v)])
      ready.emplace_back(gather(c), c);
    std::sort(ready.begin(), ready.end());
    Time t = 0;
    for (const auto& [done, c] : ready) t = std::max(t, done) + kAlpha + kBeta * size(c);
    return t;
  }

 private:
  const TreeShape& tree_;
  std::vector<Count> counts_;
};

TEST(ClosedForm, IrregularBinomialTrees) {
  for (const Rank p : {4, 7, 13, 16}) {
    std::vector<Count> counts(static_cast<std::size_t>(p));
    for (std::size_t i = 0; i < counts.size(); ++i)
      counts[i] = 1 + static_cast<Count>((i * 7) % 5) * 3;
    for (const auto kind : {CollectiveKind::kScatterv, CollectiveKind::kGatherv}) {
      const auto spec = make_spec_v(kind, p, counts);
      const Schedule s = algorithms::build(std::string(collective_name(kind)) + "/binomial", spec);
      ASSERT_TRUE(s.tree.has_value());
      const TreeRecursion tree(*s.tree, counts);
      const Time expected = kind == CollectiveKind::kScatterv ? tree.scatter(0, 0) : tree.gather(0);
      EXPECT_EQ(simulate(s, model()).makespan, expected) << collective_name(kind) << " p=" << p;
    }
  }
}

// The scan and exscan formulas at every p up to 70, not only the registry grid's p: the
// exscan doubling's γ terms depend on where p lies between powers of two, and copy rates
// above γ (5 > 3) move rank 0's copy in scan onto the critical path.
TEST(ScanFormulas, MatchTheSimulatorAtEveryP) {
  for (Rank p = 1; p <= 70; ++p) {
    for (const Count n : {1, 10}) {
      for (const Time copy : {0.0, 1.0, 5.0}) {
        const std::string where =
            "p=" + std::to_string(p) + " n=" + std::to_string(n) + " copy=" + std::to_string(copy);
        const auto scan = make_spec(CollectiveKind::kScan, p, n);
        const auto exscan = make_spec(CollectiveKind::kExscan, p, n);
        EXPECT_EQ(makespan("scan/linear", scan, model(copy)), scan_linear(p, n, copy)) << where;
        EXPECT_EQ(makespan("scan/recursive_doubling", scan, model(copy)), scan_doubling(p, n, copy))
            << where;
        EXPECT_EQ(makespan("exscan/linear", exscan, model(copy)), exscan_linear(p, n, copy))
            << where;
        EXPECT_EQ(makespan("exscan/recursive_doubling", exscan, model(copy)),
                  exscan_doubling(p, n, copy))
            << where;
      }
    }
  }
}

}  // namespace
}  // namespace optcoll
