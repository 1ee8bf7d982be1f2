// SPDX-License-Identifier: Apache-2.0
// File: gatherv/two_block and scatterv/two_block (planners/two_block.h): the planned cost
// against the simulator (copy = 0, copy = beta, random copy, pair matrices), the schedules
// against the verifier, Lemma 2 against the exact non-ordered optimum and the ordered DP, and
// the split on two-size, many-size and one-size problems.
#include "optcoll/algorithms/planners/two_block.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/distributions.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"

namespace optcoll::algorithms::planners {
namespace {

std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

CostModel model_of(const GatherProblem& pb, Duplex duplex) {
  CostModel model;
  model.alpha = pb.alpha;
  model.beta = pb.beta;
  model.copy = pb.copy;
  model.ports = 1;
  model.duplex = duplex;
  model.overlap = false;
  return model;
}

std::vector<Count> counts_of(const GatherProblem& pb) {
  std::vector<Count> counts;
  for (const Time m : pb.sizes) counts.push_back(static_cast<Count>(m));
  return counts;
}

// Simulated makespan of `name` ("gatherv/two_block", ...) on pb's blocks at `root`; the
// schedule must verify.
Time simulated(const std::string& name, const GatherProblem& pb, Rank root,
               const CostModel& model) {
  const auto kind =
      name.rfind("gatherv", 0) == 0 ? CollectiveKind::kGatherv : CollectiveKind::kScatterv;
  const auto spec = make_spec_v(kind, pb.nranks(), counts_of(pb), root);
  const auto schedule = build(name, spec, {}, model);
  const auto report = verify(schedule);
  EXPECT_TRUE(report.ok()) << name << ": " << report.summary();
  const auto result = simulate(schedule, model);
  EXPECT_EQ(result.status, SimStatus::kOk) << name;
  return result.makespan;
}

// Block sizes of one of three kinds: two distinct sizes, a handful of sizes with zeros, or
// anything in [0, 40].
std::vector<Time> random_sizes(std::mt19937_64& rng, Rank p, int kind) {
  std::vector<Time> sizes;
  const Time small = static_cast<Time>(rng() % 4);
  const Time large = small + 1 + static_cast<Time>(rng() % 60);
  for (Rank i = 0; i < p; ++i) {
    switch (kind) {
      case 0:
        sizes.push_back(rng() % 4 == 0 ? large : small);
        break;
      case 1: {
        const Time choices[] = {0, 2, 5, 30};
        sizes.push_back(choices[rng() % 4]);
        break;
      }
      default:
        sizes.push_back(static_cast<Time>(rng() % 41));
    }
  }
  return sizes;
}

TEST(TwoBlock, SimulatorMatchesThePlan) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 90; ++trial) {
    const Rank p = 1 + trial % 19;
    GatherProblem pb;
    pb.sizes = random_sizes(rng, p, trial % 3);
    pb.alpha = static_cast<Time>(rng() % 40);
    pb.beta = static_cast<Time>(1 + rng() % 3);
    const int copy_kind = trial % 5;  // 0, 1: copy = 0; 2, 3: copy = beta; 4: in between
    pb.copy = copy_kind < 2 ? 0 : copy_kind < 4 ? pb.beta : static_cast<Time>(rng() % 3);
    pb.copy = std::min(pb.copy, pb.beta);
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const auto model = model_of(pb, trial % 2 == 0 ? Duplex::kFull : Duplex::kHalf);
    const auto plan = two_block_plan(pb, root);
    EXPECT_EQ(plan.tree.shape.root, root);
    for (const std::string name : {"gatherv/two_block", "scatterv/two_block"}) {
      EXPECT_EQ(simulated(name, pb, root, model), plan.tree.cost)
          << name << " trial " << trial << " p " << p << " root " << root;
    }
  }
}

TEST(TwoBlock, SimulatorMatchesThePlanUnderPairCosts) {
  // The class trees are planned with alpha and beta, but the plan is priced with the matrices
  // (scatter: parent -> child), as the simulator prices it.
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 30; ++trial) {
    const Rank p = 2 + trial % 12;
    const auto n = at(p);
    CostModel model;
    model.copy = static_cast<Time>(trial % 2);
    model.duplex = trial % 3 == 0 ? Duplex::kFull : Duplex::kHalf;
    model.pair_nranks = p;
    for (std::size_t q = 0; q < n * n; ++q) {
      model.pair_alpha.push_back(static_cast<Time>(rng() % 30));
      model.pair_beta.push_back(static_cast<Time>(1 + rng() % 4));
    }
    const auto sizes = random_sizes(rng, p, trial % 3);
    std::vector<Count> counts;
    for (const Time m : sizes) counts.push_back(static_cast<Count>(m));
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    for (const auto kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
      const auto spec = make_spec_v(kind, p, counts, root);
      const auto direction =
          kind == CollectiveKind::kGatherv ? TreeDirection::kGather : TreeDirection::kScatter;
      const auto pb = gather_problem(Layout(spec), model, spec.elem_bytes, direction);
      const auto schedule =
          build(std::string(collective_name(kind)) + "/two_block", spec, {}, model);
      const auto result = simulate(schedule, model);
      ASSERT_EQ(result.status, SimStatus::kOk);
      EXPECT_EQ(result.makespan, two_block_plan(pb, root).tree.cost)
          << collective_name(kind) << " trial " << trial;
    }
  }
}

TEST(TwoBlock, PerByteModels) {
  // Units are bytes: planned (in bytes) == simulated.
  std::mt19937_64 rng(46);
  for (int trial = 0; trial < 30; ++trial) {
    const Rank p = 1 + trial % 13;
    CostModel model;
    model.alpha = static_cast<Time>(rng() % 50);
    model.beta = 1;
    model.copy = static_cast<Time>(trial % 2);
    model.per_byte = true;
    model.duplex = Duplex::kHalf;
    std::vector<Count> counts;
    for (const Time m : random_sizes(rng, p, trial % 3)) counts.push_back(static_cast<Count>(m));
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    for (const auto kind : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
      const auto spec = make_spec_v(kind, p, counts, root);
      const auto direction =
          kind == CollectiveKind::kGatherv ? TreeDirection::kGather : TreeDirection::kScatter;
      const auto pb = gather_problem(Layout(spec), model, spec.elem_bytes, direction);
      const auto result = simulate(
          build(std::string(collective_name(kind)) + "/two_block", spec, {}, model), model);
      ASSERT_EQ(result.status, SimStatus::kOk);
      EXPECT_EQ(result.makespan, two_block_plan(pb, root).tree.cost)
          << collective_name(kind) << " trial " << trial;
    }
  }
}

// Lemma 2's instance: b_L at rank j (the root), b_S elsewhere.
GatherProblem lemma_two(Rank p, Rank j, Time b_small, Time b_large, Time alpha, Time beta,
                        Time copy) {
  GatherProblem pb{std::vector<Time>(at(p), b_small), alpha, beta, copy};
  pb.sizes[at(j)] = b_large;
  return pb;
}

Time ceil_log2(Rank n) {
  Time k = 0;
  while ((Rank{1} << static_cast<int>(k)) < n) ++k;
  return k;
}

// The ops of `schedule` on `rank` that are a SendSlices / RecvSlices.
template <typename A>
std::vector<A> slice_ops(const Schedule& schedule, Rank rank) {
  std::vector<A> found;
  for (const Op& op : schedule.ranks[at(rank)].ops) {
    if (const auto* a = std::get_if<A>(&op.action)) found.push_back(*a);
  }
  return found;
}

TEST(TwoBlock, LemmaTwoSpecExample) {
  // Spec §7: alpha = 10, beta = copy = 1, b_S = 3, b_L = 200, p = 7. The ordered optimum is
  // 228 at j = 0 and 238 at j = 3 and 6; the non-ordered optimum is 228 everywhere, and
  // two_block reaches it everywhere (the small class's one message lands in place, over
  // several slices where the root's block splits the small ones).
  for (const auto& [j, ordered, two_block] :
       std::vector<std::tuple<Rank, Time, Time>>{{0, 228, 228}, {6, 238, 228}, {3, 238, 228}}) {
    const auto pb = lemma_two(7, j, 3, 200, 10, 1, 1);
    EXPECT_EQ(optimal_tree(pb, j).cost, ordered) << j;
    EXPECT_EQ(unordered_optimal_cost(pb, j), 228) << j;
    const auto plan = two_block_plan(pb, j);
    EXPECT_EQ(plan.tree.cost, two_block) << j;
    const auto model = model_of(pb, Duplex::kHalf);
    EXPECT_EQ(simulated("gatherv/two_block", pb, j, model), two_block) << j;
    EXPECT_EQ(simulated("scatterv/two_block", pb, j, model), two_block) << j;
    if (j == 3) {
      // The small blocks are two runs of the root's buffer (ranks 0-2 at out[0:+9], ranks
      // 4-6 at out[209:+9]): TWO_Gatherv's derived-datatype receive, one RecvSlices of 18
      // elements (scatter: one SendSlices from the same two runs of its input).
      const auto spec = make_spec_v(CollectiveKind::kGatherv, 7, counts_of(pb), j);
      const auto gather = build("gatherv/two_block", spec, {}, model);
      const auto received = slice_ops<RecvSlices>(gather, j);
      ASSERT_EQ(received.size(), 1u);
      EXPECT_EQ(received[0].peer, plan.sub_root);
      EXPECT_EQ(received[0].dst,
                (std::vector<Slice>{{Buf::kOutput, 0, 9}, {Buf::kOutput, 209, 9}}));
      auto scatter_spec = spec;
      scatter_spec.kind = CollectiveKind::kScatterv;
      const auto scatter = build("scatterv/two_block", scatter_spec, {}, model);
      const auto sent = slice_ops<SendSlices>(scatter, j);
      ASSERT_EQ(sent.size(), 1u);
      EXPECT_EQ(sent[0].src, (std::vector<Slice>{{Buf::kInput, 0, 9}, {Buf::kInput, 209, 9}}));
      // No copy at the root but its own block's.
      std::size_t copies = 0;
      for (const Op& op : gather.ranks[at(j)].ops)
        copies += std::holds_alternative<Copy>(op.action);
      EXPECT_EQ(copies, 1u);
    }
    EXPECT_EQ(plan.threshold, 200);
    ASSERT_NE(plan.sub_root, kNoRank);
    // The small class reaches the root in one message: the sub-root is the root's only child.
    EXPECT_EQ(plan.tree.shape.children[static_cast<std::size_t>(j)],
              std::vector<Rank>{plan.sub_root});
  }
}

TEST(TwoBlock, LemmaTwoBoundAnywhere) {
  // Wherever Lemma 2's condition holds, wherever the large block sits (either end or inside,
  // where the small class lands in two runs): two_block's simulated time is exactly
  // copy·b_L + alpha + beta(p-1)b_S, TWO_Gatherv's time and the exact non-ordered optimum.
  std::mt19937_64 rng(43);
  int checked = 0;
  for (int trial = 0; trial < 400 && checked < 60; ++trial) {
    const Rank p = 3 + static_cast<Rank>(rng() % 8);
    const Time alpha = static_cast<Time>(rng() % 20);
    const Time beta = static_cast<Time>(1 + rng() % 3);
    const Time copy = beta;  // the lemma's gamma <= beta; copy = beta hides the most
    const Time b_small = static_cast<Time>(1 + rng() % 5);
    const Time b_large = static_cast<Time>(b_small + 1 + rng() % 300);
    if (ceil_log2(p - 1) * alpha + beta * (p - 2) * b_small + copy * b_small > copy * b_large)
      continue;
    const Rank j = trial % 3 == 0   ? 0
                   : trial % 3 == 1 ? p - 1
                                    : 1 + static_cast<Rank>(rng() % (p - 2));
    const auto pb = lemma_two(p, j, b_small, b_large, alpha, beta, copy);
    const Time lemma = copy * b_large + alpha + beta * (p - 1) * b_small;
    const auto model = model_of(pb, Duplex::kHalf);
    EXPECT_EQ(simulated("gatherv/two_block", pb, j, model), lemma) << p << " " << j;
    EXPECT_EQ(simulated("scatterv/two_block", pb, j, model), lemma) << p << " " << j;
    EXPECT_EQ(unordered_optimal_cost(pb, j), lemma) << p << " " << j;
    // Lemma 2's comparison: below Proposition 1's time for one tree over all ranks (strictly:
    // ceil(log2 p) >= 2 latencies), and never above the adaptive tree itself (which for some
    // p, e.g. 5 with j = 4, is the same tree).
    EXPECT_LE(lemma, ceil_log2(p) * alpha + beta * (p - 1) * b_small + copy * b_large);
    if (alpha > 0) {
      EXPECT_LT(lemma, ceil_log2(p) * alpha + beta * (p - 1) * b_small + copy * b_large);
    }
    EXPECT_LE(lemma, adaptive_binomial_tree(pb, j).cost) << p << " " << j;
    ++checked;
  }
  EXPECT_GE(checked, 45);
}

TEST(TwoBlock, OneSizeIsOneTree) {
  // Equal blocks (zeros included): one class, the faster of the adaptive binomial tree and the
  // optimal DP's tree.
  for (const Time m : {0, 7}) {
    for (Rank p = 1; p <= 9; ++p) {
      for (Rank root = 0; root < p; ++root) {
        const GatherProblem pb{std::vector<Time>(at(p), m), 5, 1, 1};
        const auto plan = two_block_plan(pb, root);
        EXPECT_EQ(plan.sub_root, kNoRank);
        EXPECT_EQ(plan.tree.cost,
                  std::min(adaptive_binomial_tree(pb, root).cost, optimal_tree(pb, root).cost));
      }
    }
  }
}

// Two classes joined: the large blocks form one class and the small ones the other; no
// rank's parent is in the other class except the sub-root's, which is the root; and the root
// receives exactly one message from the other class.
void expect_joined_classes(const GatherProblem& pb, Rank root, const TwoBlockPlan& plan,
                           const std::string& where) {
  const Rank p = pb.nranks();
  ASSERT_NE(plan.sub_root, kNoRank) << where;
  const auto parents = plan.tree.shape.parents();
  int crossing = 0;
  for (Rank r = 0; r < p; ++r) {
    EXPECT_EQ(plan.large[at(r)], pb.sizes[at(r)] >= plan.threshold) << where << " rank " << r;
    if (r == root) continue;
    const Rank parent = parents[at(r)];
    if (plan.large[at(parent)] != plan.large[at(r)]) {
      ++crossing;
      EXPECT_EQ(r, plan.sub_root) << where;
      EXPECT_EQ(parent, root) << where;
    }
  }
  EXPECT_EQ(crossing, 1) << where;
  EXPECT_NE(plan.large[at(plan.sub_root)], plan.large[at(root)]) << where;
}

TEST(TwoBlock, SplitIsTheClassOfEachBlock) {
  std::mt19937_64 rng(45);
  int splits = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Rank p = 2 + trial % 20;
    GatherProblem pb;
    pb.sizes = random_sizes(rng, p, 0);
    pb.alpha = static_cast<Time>(rng() % 60);
    pb.copy = static_cast<Time>(trial % 2);
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const Time large = *std::max_element(pb.sizes.begin(), pb.sizes.end());
    const Time small = *std::min_element(pb.sizes.begin(), pb.sizes.end());
    if (large == small) continue;
    const std::string where = "trial " + std::to_string(trial);
    for (const auto kind : {TreeKind::kAdaptiveBinomial, TreeKind::kOptimal}) {
      expect_joined_classes(pb, root, two_block_join(pb, root, large, kind), where);
    }
    const auto plan = two_block_plan(pb, root);
    if (plan.sub_root == kNoRank) continue;
    ++splits;
    EXPECT_EQ(plan.threshold, large) << where;
    expect_joined_classes(pb, root, plan, where);
  }
  EXPECT_GE(splits, 20);
}

TEST(TwoBlock, NeverWorseThanOneTree) {
  // One class is a candidate (with both trees), so the plan is never slower than the adaptive
  // binomial tree or the optimal ordered tree.
  std::mt19937_64 rng(44);
  for (int trial = 0; trial < 200; ++trial) {
    const Rank p = 1 + trial % 30;
    GatherProblem pb;
    pb.sizes = random_sizes(rng, p, trial % 3);
    pb.alpha = static_cast<Time>(rng() % 100);
    pb.beta = 1;
    pb.copy = static_cast<Time>(rng() % 2);
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const auto plan = two_block_plan(pb, root);
    EXPECT_LE(plan.tree.cost, adaptive_binomial_tree(pb, root).cost) << trial;
    EXPECT_LE(plan.tree.cost, optimal_tree(pb, root).cost) << trial;
    // And it is a valid gather tree: at least the lower bound.
    Time bound = pb.copy * pb.sizes[at(root)];
    for (Rank r = 0; r < p; ++r) bound += r == root ? 0 : pb.beta * pb.sizes[at(r)];
    EXPECT_GE(plan.tree.cost, bound) << trial;
  }
}

TEST(TwoBlock, NeverSlowerThanOptimalSimulated) {
  // Simulated, gatherv and scatterv alike, under homogeneous models with copy in [0, beta]:
  // two_block never takes longer than the optimal ordered tree, also where its segments land
  // at the root in several runs (RecvSlices / SendSlices).
  std::mt19937_64 rng(46);
  int several_runs = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const Rank p = 2 + trial % 14;
    GatherProblem pb;
    pb.sizes = random_sizes(rng, p, trial % 3);
    pb.alpha = static_cast<Time>(rng() % 80);
    pb.beta = 1;
    pb.copy = static_cast<Time>(rng() % 2);
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const auto model = model_of(pb, trial % 2 == 0 ? Duplex::kHalf : Duplex::kFull);
    for (const char* kind : {"gatherv", "scatterv"}) {
      const std::string name(kind);
      EXPECT_LE(simulated(name + "/two_block", pb, root, model),
                simulated(name + "/optimal", pb, root, model))
          << name << " trial " << trial;
    }
    const auto spec = make_spec_v(CollectiveKind::kGatherv, p, counts_of(pb), root);
    several_runs +=
        slice_ops<RecvSlices>(build("gatherv/two_block", spec, {}, model), root).empty() ? 0 : 1;
  }
  EXPECT_GE(several_runs, 5);
}

TEST(TwoBlock, ComparedWithOptimal) {
  // Spikes and Skewed (Träff's distributions), p = 200, b = 100, root 0 and p/2, alpha 100 and
  // 1000, copy 0 and beta: the two-class join at the large blocks' threshold (best of the two
  // kinds of class trees), the plan (which may be one tree), and the optimal ordered tree
  // (gatherv/optimal), all simulated. Which is faster depends on the instance: only the table
  // is printed (gatherv/two_block's header), and the theorem by construction is asserted
  // (the plan is never slower than gatherv/optimal's tree under a homogeneous model).
  const Rank p = 200;
  for (const auto d : {Distribution::kSpikes, Distribution::kSkewed}) {
    const auto counts = distribution_counts(d, p, 100);
    for (const Time alpha : {100, 1000}) {
      for (const Time copy : {0, 1}) {
        for (const Rank root : {Rank{0}, p / 2}) {
          GatherProblem pb;
          for (const Count c : counts) pb.sizes.push_back(static_cast<Time>(c));
          pb.alpha = alpha;
          pb.beta = 1;
          pb.copy = copy;
          const auto model = model_of(pb, Duplex::kHalf);
          const Time two = simulated("gatherv/two_block", pb, root, model);
          const Time opt = simulated("gatherv/optimal", pb, root, model);
          const Time large = *std::max_element(pb.sizes.begin(), pb.sizes.end());
          const Time joined =
              std::min(two_block_join(pb, root, large, TreeKind::kAdaptiveBinomial).tree.cost,
                       two_block_join(pb, root, large, TreeKind::kOptimal).tree.cost);
          EXPECT_EQ(two, two_block_plan(pb, root).tree.cost);
          EXPECT_LE(two, opt);
          std::printf(
              "%-6s alpha %4.0f copy %.0f root %3d: two classes %6.0f  two_block %6.0f  "
              "optimal %6.0f\n",
              std::string(distribution_name(d)).c_str(), alpha, copy, root, joined, two, opt);
        }
      }
    }
  }
}

}  // namespace
}  // namespace optcoll::algorithms::planners
