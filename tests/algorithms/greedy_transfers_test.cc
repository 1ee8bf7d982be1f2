// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's Algorithm 2 (at most K transfers at once, planners/greedy_transfers.h)
// against an exhaustive search over schedules of the paper's model written here (n <= 8, every
// K, d and c in {1, 2, 3, 5}), the examples of issue 33 (n = 20 and 50), and
// reduce/greedy_overlap's and allreduce/greedy_overlap's transfers=K: verified, simulated to
// exactly the planner's length with every send at its fixed start time, never more than K
// transfers at once, the algorithm recorded, and no other algorithm run where Algorithm 2
// cannot be.
#include "optcoll/algorithms/planners/greedy_transfers.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/concurrency.h"

namespace optcoll::algorithms::planners {
namespace {

// ---- exhaustive search in the paper's model ----------------------------------------------
//
// The model (report §3 and §6.1): n machines hold one element each at time 0; a transfer
// takes d and holds one port at each end (one port per machine); a machine reduces what it
// receives into its accumulator, one element at a time in arrival order, each reduction c,
// while it may already receive the next element; once it has reduced all it will receive it
// sends its accumulator, once; at most K transfers are in progress at any instant.
//
// A schedule is its transfers in order of start time. Each is placed at the earliest time,
// no earlier than the previous start, at which its sender has no transfer in progress and has
// finished reducing, its receiver's port is free, and fewer than K transfers are in progress.
// Placing every transfer that early loses nothing: in any schedule, moving the transfers, in
// order of start, each to the earliest such time moves nothing later (every arrival, hence
// every end of reduction, only gets earlier, and a transfer that starts earlier also ends
// earlier, so it is in progress at no instant where it was not already). So the least
// makespan over every choice of (sender, receiver) at every step is the optimum. A state is
// taken relative to the last start (times already past are 0) and memoised; machines in the
// same state are interchangeable, so each distinct pair of states is tried once.
class ExhaustiveSearch {
 public:
  ExhaustiveSearch(Time d, Time c, int limit) : d_(d), c_(c), limit_(limit) {}

  Time optimum(int n) {
    return best(std::vector<Machine>(static_cast<std::size_t>(n), Machine{0, 0}), {});
  }

 private:
  struct Machine {
    Time reduced = 0;  // when its last reduction so far ends
    Time port = 0;     // when its port is free again
    bool operator<(const Machine& o) const {
      return reduced != o.reduced ? reduced < o.reduced : port < o.port;
    }
    bool operator==(const Machine& o) const = default;
  };

  // Least makespan from a state, counted from its time 0. `alive`: the machines that have
  // not sent, sorted; `ends`: the ends of the transfers in progress, sorted.
  Time best(std::vector<Machine> alive, std::vector<Time> ends) {
    if (alive.size() == 1) return alive[0].reduced;  // the sink: its last reduction
    std::vector<Time> key;
    for (const Machine& m : alive) {
      key.push_back(m.reduced);
      key.push_back(m.port);
    }
    key.push_back(-1);
    key.insert(key.end(), ends.begin(), ends.end());
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    // The K-th latest end among those in progress frees a slot for one more.
    const auto limit = static_cast<std::size_t>(limit_);
    const Time slot = ends.size() >= limit ? ends[ends.size() - limit] : 0;
    Time result = std::numeric_limits<Time>::infinity();
    for (std::size_t u = 0; u < alive.size(); ++u) {
      if (u > 0 && alive[u] == alive[u - 1]) continue;
      for (std::size_t v = 0; v < alive.size(); ++v) {
        if (v == u || (v > 0 && v - 1 != u && alive[v] == alive[v - 1])) continue;
        const Time start = std::max({alive[u].reduced, alive[u].port, alive[v].port, slot});
        std::vector<Machine> next;
        for (std::size_t i = 0; i < alive.size(); ++i) {
          if (i == u) continue;  // it sent: it takes no further part
          Machine m = alive[i];
          if (i == v) {
            m.port = start + d_;
            m.reduced = std::max(m.reduced, start + d_) + c_;
          }
          next.push_back({std::max<Time>(0, m.reduced - start), std::max<Time>(0, m.port - start)});
        }
        std::sort(next.begin(), next.end());
        std::vector<Time> later;
        for (const Time e : ends) {
          if (e > start) later.push_back(e - start);
        }
        later.push_back(d_);
        std::sort(later.begin(), later.end());
        result = std::min(result, start + best(std::move(next), std::move(later)));
      }
    }
    memo_.emplace(std::move(key), result);
    return result;
  }

  Time d_;
  Time c_;
  int limit_;
  std::map<std::vector<Time>, Time> memo_;
};

Time exhaustive(int n, Time d, Time c, int limit) {
  return ExhaustiveSearch(d, c, limit).optimum(n);
}

TEST(GreedyTransfersExhaustive, SearchReproducesKnownOptima) {
  // Without a binding limit the optimum is Algorithm 1's, tabulated independently in
  // docs/math/reduction-overlap.md §1.6 and §3: (d, c) = (1, 1), n = 8: 5 (the Fibonacci
  // tree); (1, 2), n = 6: 8 and n = 8: 9; (1, 5), n = 8: 18.
  EXPECT_EQ(exhaustive(8, 1, 1, 7), 5);
  EXPECT_EQ(exhaustive(6, 1, 2, 5), 8);
  EXPECT_EQ(exhaustive(8, 1, 2, 7), 9);
  EXPECT_EQ(exhaustive(8, 1, 5, 7), 18);
  // One transfer at a time, n = 5, d = 1, c = 2: the header's example by hand, 7 (and no
  // schedule of 6: the sink's last element cannot arrive before 4, ...).
  EXPECT_EQ(exhaustive(5, 1, 2, 1), 7);
  // K = 1, n = 3: two transfers one after the other and two reductions: d + max(d, c) + c.
  EXPECT_EQ(exhaustive(3, 1, 5, 1), 1 + 5 + 5);
  EXPECT_EQ(exhaustive(3, 5, 1, 1), 5 + 5 + 1);
}

// Algorithm 2 is optimal under the limit (the report's Thm 7) on every case searched: the
// exhaustive search found no shorter schedule.
TEST(GreedyTransfersExhaustive, EqualsTheOptimumUpToEight) {
  for (const Time d : {1, 2, 3, 5}) {
    for (const Time c : {1, 2, 3, 5}) {
      for (int n = 2; n <= 8; ++n) {
        for (int limit = 1; limit < n; ++limit) {
          EXPECT_EQ(greedy_transfers(n, {d, c}, limit).length, exhaustive(n, d, c, limit))
              << "n=" << n << " K=" << limit << " d=" << d << " c=" << c;
        }
      }
    }
  }
}

// ---- through the registry ------------------------------------------------------------------

// The model greedy_overlap plans for: d = α + nβ, c = nγ (reduction_costs); one element, so
// d = alpha and c = gamma.
CostModel unit_overlap(Time d, Time c) {
  CostModel m;
  m.alpha = d;
  m.beta = 0;
  m.gamma = c;
  m.ports = 1;
  m.duplex = Duplex::kHalf;
  m.overlap = true;
  return m;
}

Schedule reduce_with(const std::string& params, Rank p, const CostModel& model, Rank root = 0,
                     bool commutative = true, CollectiveKind kind = CollectiveKind::kReduce) {
  auto spec = make_spec(kind, p, 1, root);
  spec.commutative = commutative;
  const std::string name =
      kind == CollectiveKind::kReduce ? "reduce/greedy_overlap" : "allreduce/greedy_overlap";
  return build(name, spec, Params::parse(params), model);
}

// Issue 33's measurements: transfers=K with d < c ran Algorithm 3 (17, 41, 30); an independent
// implementation of Algorithm 2 gives 13, 27, 20.
TEST(GreedyTransfersRegistry, IssueExamples) {
  struct Example {
    Rank n;
    Time c;
    int k;
    Time algorithm2;
    Time algorithm3;
  };
  for (const Example& e :
       {Example{20, 2, 3, 13, 17}, Example{20, 5, 3, 27, 41}, Example{50, 2, 4, 20, 30}}) {
    const auto model = unit_overlap(1, e.c);
    const auto limited = reduce_with("transfers=" + std::to_string(e.k), e.n, model);
    EXPECT_EQ(limited.params, "transfers=" + std::to_string(e.k) + ",reducers=0,greedy=2");
    EXPECT_EQ(simulate(limited, model).makespan, e.algorithm2) << e.n << " c=" << e.c;
    const auto reducers = reduce_with("reducers=" + std::to_string(e.k), e.n, model);
    EXPECT_EQ(reducers.params, "transfers=0,reducers=" + std::to_string(e.k) + ",greedy=3");
    EXPECT_EQ(simulate(reducers, model).makespan, e.algorithm3) << e.n << " c=" << e.c;
  }
}

// Every schedule verifies and runs on the simulator exactly as Algorithm 2 fixed it: the
// makespan is its length, every send starts at its release time (the fixed start), and no
// more than K transfers are ever in progress. Then the same without the release times: sent
// as soon as possible, the same tree runs more than K transfers at once somewhere.
TEST(GreedyTransfersRegistry, SchedulesRunAtTheirFixedTimes) {
  SimOptions trace;
  trace.trace = true;
  bool as_soon_as_possible_exceeds = false;
  for (const auto& [d, c] : {std::pair<Time, Time>{1, 2}, {1, 5}, {2, 3}, {1, 1}, {3, 1}}) {
    const auto model = unit_overlap(d, c);
    for (const Rank p : {2, 3, 5, 8, 13, 20, 33, 64}) {
      for (const int k : {1, 2, 3, 5, 8}) {
        const Time length = greedy_transfers(p, {d, c}, k).length;
        const auto schedule = reduce_with("transfers=" + std::to_string(k), p, model);
        const auto report = verify(schedule);
        ASSERT_TRUE(report.ok()) << p << " K=" << k << ": " << report.diagnostics.front().message;
        const auto result = simulate(schedule, model, trace);
        ASSERT_EQ(result.status, SimStatus::kOk) << result.deadlock;
        EXPECT_EQ(result.makespan, length) << "p=" << p << " K=" << k << " d=" << d << " c=" << c;
        EXPECT_LE(testing::most_concurrent_transfers(schedule, result), k) << p << " K=" << k;
        for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
          const auto& ops = schedule.ranks[r].ops;
          for (std::size_t i = 0; i < ops.size(); ++i) {
            if (!std::holds_alternative<Send>(ops[i].action)) continue;
            EXPECT_EQ(result.timing[r][i].start, ops[i].not_before)
                << "p=" << p << " K=" << k << " rank " << r << " op " << i;
          }
        }
        Schedule free = schedule;
        for (auto& program : free.ranks) {
          for (auto& op : program.ops) op.not_before = 0;
        }
        const auto asap = simulate(free, model, trace);
        if (testing::most_concurrent_transfers(free, asap) > k) as_soon_as_possible_exceeds = true;
      }
    }
  }
  EXPECT_TRUE(as_soon_as_possible_exceeds);
}

// Roots other than 0 and non-commutative operators: still verified, the reduction as long as
// Algorithm 2 says (plus one message where the sink cannot sit at the root in rank order);
// allreduce adds its binomial broadcast, ceil(log2 p)·d.
TEST(GreedyTransfersRegistry, RootsOperatorsAndAllreduce) {
  const auto model = unit_overlap(1, 3);
  for (const Rank p : {4, 7, 16, 31}) {
    for (const int k : {1, 2, 4}) {
      const Time length = greedy_transfers(p, {1, 3}, k).length;
      const std::string params = "transfers=" + std::to_string(k);
      for (const Rank root : {0, p / 2, p - 1}) {
        for (const bool commutative : {true, false}) {
          const auto schedule = reduce_with(params, p, model, root, commutative);
          EXPECT_TRUE(verify(schedule).ok()) << p << " root " << root;
          const Time t = simulate(schedule, model).makespan;
          EXPECT_TRUE(t == length || (!commutative && t == length + 1))
              << p << " K=" << k << " root " << root << ": " << t << " vs " << length;
        }
      }
      const auto all = reduce_with(params, p, model, 0, true, CollectiveKind::kAllreduce);
      EXPECT_TRUE(verify(all).ok()) << p;
      std::int64_t log = 0;
      while ((Rank{1} << log) < p) ++log;
      EXPECT_EQ(simulate(all, model).makespan, length + static_cast<Time>(log)) << p;
      EXPECT_EQ(all.params, params + ",reducers=0,greedy=2");
    }
  }
}

std::pair<ErrorCode, std::string> failure(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ErrorCode::kInternal, "no error"};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// No substitution: transfers=K without overlap (where the paper's reduction makes transfers
// take no time) is refused with the reason, not run as another algorithm; a greedy parameter
// that does not fit the limits is a why_not.
TEST(GreedyTransfersRegistry, RefusesWhatItCannotHonour) {
  CostModel plain = unit_overlap(1, 2);
  plain.overlap = false;
  for (const auto kind : {CollectiveKind::kReduce, CollectiveKind::kAllreduce}) {
    const auto [code, what] = failure([&] { reduce_with("transfers=2", 8, plain, 0, true, kind); });
    EXPECT_EQ(code, ErrorCode::kNotApplicable) << what;
    EXPECT_PRED2(contains, what,
                 "transfers=2 (Canon & Antoniu's Algorithm 2) needs a model where reduction "
                 "overlaps communication (overlap)");
  }
  EXPECT_EQ(reduce_with("reducers=2", 8, plain).params, "transfers=0,reducers=2,greedy=3");
  const auto model = unit_overlap(1, 2);
  EXPECT_EQ(reduce_with("", 8, model).params, "transfers=0,reducers=0,greedy=1");
  EXPECT_EQ(reduce_with("transfers=3,greedy=2", 8, model).params,
            "transfers=3,reducers=0,greedy=2");
  const auto [code, what] = failure([&] { reduce_with("transfers=3,greedy=3", 8, model); });
  EXPECT_EQ(code, ErrorCode::kNotApplicable) << what;
  EXPECT_PRED2(contains, what, "greedy=3 does not fit transfers=3, reducers=0");
  EXPECT_PRED2(contains, failure([&] { reduce_with("greedy=2", 8, model); }).second,
               "greedy=2 does not fit transfers=0, reducers=0");
  EXPECT_PRED2(contains, failure([&] { reduce_with("greedy=alg2", 8, model); }).second,
               "greedy must be auto, 1, 2 or 3, got 'alg2'");
  // The recorded parameters build the same schedule again.
  const auto first = reduce_with("transfers=3", 20, model);
  EXPECT_EQ(build("reduce/greedy_overlap", make_spec(CollectiveKind::kReduce, 20, 1),
                  Params::parse(first.params), model),
            first);
}

}  // namespace
}  // namespace optcoll::algorithms::planners
