// SPDX-License-Identifier: Apache-2.0
// File: tori and meshes (issue 6): topology parsing, mappings and routes; the simulator's
// link layer on hand-computed cases; the multicolor bucket algorithms and their baselines
// against the lower bounds and formulas of docs/math/torus-bucket.md; torus schedules verified
// and run on threads.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"
#include "optcoll/model/topology.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

CostModel torus_model(std::string_view topology, Time alpha = 0, Time gamma = 0) {
  CostModel m;
  m.alpha = alpha;
  m.beta = 1;
  m.gamma = gamma;
  m.copy = 0;
  return with_topology(m, parse_topology(topology));
}

Time run(std::string_view algorithm, const CollectiveSpec& spec, const CostModel& m,
         const algorithms::Params& params = {}) {
  const auto result = simulate(algorithms::build(algorithm, spec, params, m), m);
  EXPECT_EQ(result.status, SimStatus::kOk) << algorithm << ": " << result.deadlock;
  return result.makespan;
}

// ---- topology ------------------------------------------------------------------------------

TEST(Topology, ParsesKindsDimensionsAndOptions) {
  const Topology t = parse_topology("torus:4x8x16:uni:snake");
  EXPECT_EQ(t.kind, TopologyKind::kTorus);
  EXPECT_EQ(t.dims, (std::vector<int>{4, 8, 16}));
  EXPECT_EQ(t.links, LinkMode::kUnidirectional);
  EXPECT_TRUE(t.snake);
  EXPECT_EQ(t.size(), 512);
  EXPECT_EQ(to_string(t), "torus:4x8x16:uni:snake");
  const Topology mesh = parse_topology("mesh:5");
  EXPECT_EQ(mesh.kind, TopologyKind::kMesh);
  EXPECT_EQ(mesh.links, LinkMode::kBidirectional);
  EXPECT_FALSE(mesh.snake);
  EXPECT_EQ(parse_topology(to_string(t)), t);
}

TEST(Topology, BadTextNamesTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"ring:8", "unknown kind"},          {"torus", "no dimensions"},
      {"torus:", "no dimensions"},         {"torus:8x", "not a number"},
      {"torus:8xax8", "not a number"},     {"torus:0x4", "less than 1"},
      {"torus:4:tri", "unknown"},          {"torus:4:uni:bi", "repeated"},
      {"torus:4:snake:snake", "repeated"}, {"mesh:65536x65536", "2^31"},
  };
  for (const auto& [text, message] : cases) {
    try {
      parse_topology(text);
      ADD_FAILURE() << text << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(Topology, ValidateAndTheModelNameEachLimit) {
  auto message = [](const std::function<void()>& call, ErrorCode code) {
    try {
      call();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  auto topology = [](std::vector<int> dims) {
    Topology t;
    t.dims = std::move(dims);
    return t;
  };
  const auto kIA = ErrorCode::kInvalidArgument;
  EXPECT_PRED2(has, message([&] { validate(topology({})); }, kIA), "topology has no dimensions");
  EXPECT_PRED2(has, message([&] { validate(topology(std::vector<int>(17, 2))); }, kIA),
               "topology has 17 dimensions; at most 16 are supported");
  EXPECT_PRED2(has,
               message(
                   [&] {
                     validate(topology({4, 0}));
                   },
                   kIA),
               "topology dimension sizes must be at least 1, got 0");
  EXPECT_PRED2(has,
               message(
                   [&] {
                     validate(topology({65536, 65536}));
                   },
                   kIA),
               "topology has more than 2^31 - 1 nodes");
  CostModel model;
  model.topology = parse_topology("torus:4x4");
  EXPECT_PRED2(has, message([&] { validate_for(model, 8); }, kIA),
               "has 16 nodes but the collective has 8 ranks");
  EXPECT_PRED2(has,
               message([&] { parse_cost_model_json(R"({"topology": 5})"); }, ErrorCode::kParse),
               "model: topology must be a string");
  EXPECT_PRED2(has, message([&] { parse_topology("torus:4x0"); }, kIA),
               "bad topology \"torus:4x0\": dimension 0 is less than 1; expected torus:");
}

TEST(Topology, RowMajorCoordinatesLastDimensionFastest) {
  const Topology t = parse_topology("torus:2x3x4");
  EXPECT_EQ(t.coords(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(t.coords(1), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(t.coords(4), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(t.coords(23), (std::vector<int>{1, 2, 3}));
  for (Rank r = 0; r < t.size(); ++r) EXPECT_EQ(t.rank_at(t.coords(r)), r);
  // (1,2,3) + e_2 wraps to (1,2,0) = 20 on the torus; a mesh has nothing there.
  EXPECT_EQ(t.neighbour(23, 2, +1), 20);
  EXPECT_EQ(t.neighbour(0, 0, -1), 12);
  EXPECT_EQ(parse_topology("mesh:2x3x4").neighbour(23, 2, +1), kNoRank);
  EXPECT_EQ(parse_topology("mesh:2x3x4").neighbour(22, 2, +1), 23);
}

// Hops between two coordinates: per dimension the shorter way round (torus) or straight.
int hops(const Topology& t, Rank a, Rank b) {
  const auto x = t.coords(a);
  const auto y = t.coords(b);
  int h = 0;
  for (std::size_t q = 0; q < x.size(); ++q) {
    const int d = std::abs(x[q] - y[q]);
    h += t.kind == TopologyKind::kTorus ? std::min(d, t.dims[q] - d) : d;
  }
  return h;
}

TEST(Topology, SnakeIsAHamiltonianCycleOnATorusWithEvenFirstDimension) {
  for (const char* text : {"torus:8x8x8:snake", "torus:4x8x16:snake", "torus:2x3x5:snake"}) {
    const Topology t = parse_topology(text);
    std::set<std::vector<int>> seen;
    for (Rank r = 0; r < t.size(); ++r) {
      seen.insert(t.coords(r));
      EXPECT_EQ(t.rank_at(t.coords(r)), r) << text;
      EXPECT_EQ(hops(t, r, (r + 1) % t.size()), 1) << text << " rank " << r;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(t.size())) << text;
  }
}

TEST(Topology, RoutesAreShortestAndDimensionOrdered) {
  const Topology torus = parse_topology("torus:4x6");
  const Topology mesh = parse_topology("mesh:4x6");
  std::vector<std::int64_t> links;
  for (Rank a = 0; a < torus.size(); ++a) {
    for (Rank b = 0; b < torus.size(); ++b) {
      links.clear();
      torus.route(a, b, links);
      EXPECT_EQ(static_cast<int>(links.size()), hops(torus, a, b));
      links.clear();
      mesh.route(a, b, links);
      EXPECT_EQ(static_cast<int>(links.size()), hops(mesh, a, b));
      for (const auto l : links) EXPECT_LT(l, mesh.link_count());
    }
  }
  // (0,0) -> (3,5): dimension 0 first, the wrap way on the torus: links (0,0)-(3,0) then
  // (3,0)-(3,5): in the bidirectional numbering 2 (node N + q) + 1 from the lower node.
  links.clear();
  torus.route(0, torus.rank_at({3, 5}), links);
  const std::int64_t n3_0 = torus.rank_at({3, 0});
  const std::int64_t n3_5 = torus.rank_at({3, 5});
  EXPECT_EQ(links, (std::vector<std::int64_t>{2 * (n3_0 * 2 + 0) + 1, 2 * (n3_5 * 2 + 1) + 1}));
}

// ---- the simulator's link layer, by hand ----------------------------------------------------

// Rank `from` sends m elements of its input to `to` (allgather spec: any slices will do).
struct Transfers {
  explicit Transfers(Rank p) : b(make_spec(CollectiveKind::kAllgather, p, 10), "hand") {}
  Transfers& add(Rank from, Rank to) {
    b.transfer(from, to, {Buf::kInput, 0, 10}, {Buf::kOutput, 10 * from, 10});
    return *this;
  }
  ScheduleBuilder b;
};

Time hand(Transfers& t, std::string_view topology) {
  const auto result = simulate(std::move(t.b).finish(), torus_model(topology));
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

TEST(LinkLayer, TransfersSharingALinkWait) {
  // Line 0-1-2-3: 0->2 and 1->3 both need link 1->2; 10 elements each, beta = 1.
  Transfers t(4);
  t.add(0, 2).add(1, 3);
  EXPECT_EQ(hand(t, "mesh:4:bi"), 20);
}

TEST(LinkLayer, DisjointRoutesDoNotWait) {
  Transfers t(4);
  t.add(0, 1).add(2, 3).add(3, 2);
  EXPECT_EQ(hand(t, "mesh:4:bi"), 10);
}

TEST(LinkLayer, HalfDuplexChannelsCarryOneDirectionAtATime) {
  Transfers bi(4);
  bi.add(0, 1).add(1, 0);
  EXPECT_EQ(hand(bi, "mesh:4:bi"), 10);
  Transfers uni(4);
  uni.add(0, 1).add(1, 0);
  EXPECT_EQ(hand(uni, "mesh:4:uni"), 20);
}

TEST(LinkLayer, WrapLinksShortenRoutesAndAvoidConflicts) {
  // On the line 0-1-2-3, 0->3 crosses link 1->2, which 1->2 needs too; on the ring 0->3 is
  // one wrap hop.
  Transfers mesh(4);
  mesh.add(0, 3).add(1, 2);
  EXPECT_EQ(hand(mesh, "mesh:4:bi"), 20);
  Transfers torus(4);
  torus.add(0, 3).add(1, 2);
  EXPECT_EQ(hand(torus, "torus:4:bi"), 10);
}

TEST(LinkLayer, ThreeTransfersOnOneLinkRunOneAfterAnother) {
  // 0->3, 1->3 and 2->3 all end on link 2->3 (full duplex ports: 3 receives need 3 ports;
  // N = 1 gives 2, so the third also waits for a port): 10, 20, 30.
  Transfers t(4);
  t.add(0, 3).add(1, 3).add(2, 3);
  EXPECT_EQ(hand(t, "mesh:4:bi"), 30);
}

TEST(LinkLayer, ModelFilesCarryTheTopology) {
  const CostModel m = torus_model("mesh:2x3:uni:snake", 5);
  const CostModel back = parse_cost_model_json(cost_model_to_json(m));
  EXPECT_EQ(back, m);
  EXPECT_THROW(validate_for(m, 7), Error);
  EXPECT_THROW(parse_cost_model_json(R"({"topology": "torus:3y3"})"), Error);
}

// ---- the algorithms against the bounds of docs/math/torus-bucket.md -------------------------

TEST(TorusBucket, SymmetricMulticolorReachesTheLowerBoundExactly) {
  // 4x4x4 (N = 3, p = 64), alpha = 0, beta = 1: the bandwidth bound (p-1)/p·nβ/(2N)
  // bidirectional, /N unidirectional; allreduce twice that. m = 6 per block: n = 384.
  const Rank p = 64;
  for (const bool bi : {true, false}) {
    const CostModel m = torus_model(bi ? "torus:4x4x4:bi" : "torus:4x4x4:uni");
    const double channels = bi ? 2.0 * 3 * p : 3.0 * p;
    const double rs = (p - 1) * 384.0 / channels;  // (p-1)/p·n·p/channels
    const auto rs_spec = make_spec(CollectiveKind::kReduceScatterBlock, p, 6);
    EXPECT_EQ(run("reduce_scatter_block/multicolor_bucket", rs_spec, m), rs) << bi;
    EXPECT_EQ(run("allgather/multicolor_bucket", make_spec(CollectiveKind::kAllgather, p, 6), m),
              rs)
        << bi;
    const auto ar_spec = make_spec(CollectiveKind::kAllreduce, p, 384);
    EXPECT_EQ(run("allreduce/multicolor_bucket", ar_spec, m), 2 * rs) << bi;
    EXPECT_EQ(link_lower_bound(Layout(rs_spec), m), rs);
    EXPECT_EQ(link_lower_bound(Layout(ar_spec), m), 2 * rs);
  }
}

TEST(TorusBucket, AsymmetricMulticolorWithinFormulaTwoAboveTheBound) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << "a p = 512 simulation: release build only";
  // 4x8x16 bidirectional, m = 6 (n = 3072): bound (p-1)/p·n/(2N) = 511; formula (2)'s
  // bandwidth term (d_l-1)/d_l·n/(2N)·(d_s^N-1)/d_s^N·d_s/(d_s-1) = 15/16·512·63/64·4/3 = 630.
  const CostModel m = torus_model("torus:4x8x16:bi");
  const auto spec = make_spec(CollectiveKind::kReduceScatterBlock, 512, 6);
  const Time t = run("reduce_scatter_block/multicolor_bucket", spec, m);
  EXPECT_GT(t, 511);
  EXPECT_LE(t, 630);
  EXPECT_EQ(link_lower_bound(Layout(spec), m), 511);
}

TEST(TorusBucket, AsymmetricMulticolorAllreduceWithinTwiceFormulaTwo) {
  // Allreduce, n = 12288 on 4x8x16 bidirectional: bound 2·511/512·n/6 = 4088; formula (2)
  // doubled: 2·15/16·(n/6)·63/64·4/3 = 5040. Phase synchronisation keeps the colours apart.
  const CostModel m = torus_model("torus:4x8x16:bi");
  const auto spec = make_spec(CollectiveKind::kAllreduce, 512, 12288);
  const Time t = run("allreduce/multicolor_bucket", spec, m);
  EXPECT_GT(t, 4088);
  EXPECT_LE(t, 5040);
  EXPECT_EQ(lower_bound(Layout(spec), m), 4088);
}

TEST(TorusBucket, SnakeRingHasLinkLoadOneAndRankOrderRingContendsOnAMesh) {
  // Bucket reduce-scatter over all 512 ranks, m = 64: conflict-free it takes (p-1)·m = 32704.
  const auto spec = make_spec(CollectiveKind::kReduceScatterBlock, 512, 64);
  const Time free = 511.0 * 64;
  EXPECT_EQ(run("reduce_scatter_block/ring", spec, torus_model("torus:8x8x8:uni:snake")), free);
  EXPECT_EQ(run("reduce_scatter_block/ring", spec, torus_model("torus:8x8x8:uni")), free);
  // On a mesh the row-end returns cross whole rows: a slowdown well beyond the load factor 2
  // (docs/math/torus-bucket.md §5: 4.96x with half-duplex links).
  const Time mesh = run("reduce_scatter_block/ring", spec, torus_model("mesh:8x8x8:uni"));
  EXPECT_GT(mesh, 2 * free);
  // The snake allreduce ring: conflict-free on the torus whatever the mapping.
  const auto ar = make_spec(CollectiveKind::kAllreduce, 512, 512 * 8);
  EXPECT_EQ(run("allreduce/ring_snake", ar, torus_model("torus:8x8x8:uni")), 2 * 511.0 * 8);
}

TEST(TorusBucket, BaselinesTakeTheirShareOfTheLinks) {
  // 4x4x4 bidirectional, alpha = 0, n = 64·48: a single ring (p-1)/p·n·2 (allreduce), two
  // counter-rotating rings half that, dimension-wise with both directions (p-1)/p·n.
  const Rank p = 64;
  const Count n = 64 * 48;
  const CostModel m = torus_model("torus:4x4x4:bi");
  const auto spec = make_spec(CollectiveKind::kAllreduce, p, n);
  const Time ring = 2.0 * (p - 1) * n / p;
  EXPECT_EQ(run("allreduce/ring_snake", spec, m), ring);
  EXPECT_EQ(run("allreduce/bidirectional_ring", spec, m), ring / 2);
  EXPECT_EQ(run("allreduce/dimension_wise", spec, m), ring / 2);
  EXPECT_EQ(run("allreduce/multicolor_bucket", spec, m), ring / 6);
}

// Jain & Sabharwal §4, "Parallelization with multi-cores": with the colours (colour-directions)
// divided over c cores of a node, the computation term (p-1)/p·nγ of formulas (2)-(5) is
// shared by the cores: the busiest core reduces ceil(S/c) of the S streams' equal shares,
// (p-1)/p·nγ·ceil(S/c)/S (γ/c when c divides S: the paper's N and 2N cores). Coded here from
// the paper's terms, not from the schedule: bandwidth (p-1)/p·nβ/S (symmetric torus, S = 2N
// bidirectional, N unidirectional; allreduce twice) plus that computation term, added as
// the formulas add them (no overlap).
double paper_multicore_formula(bool allreduce, Rank p, Count n, int streams, int cores,
                               double gamma) {
  const double share = (p - 1.0) / p * static_cast<double>(n);
  const double busiest = static_cast<double>((streams + cores - 1) / cores) / streams;
  return (allreduce ? 2 : 1) * share / streams + share * gamma * busiest;
}

TEST(TorusBucket, MulticoreColourDivisionMatchesThePaperFormula) {
  // 4x4x4, alpha = 0, beta = 1, gamma = 5, no overlap; n = 384 = 6·p, so that every stream's
  // chunks are whole in every phase. The schedules verify; c cores change only their time.
  const Rank p = 64;
  const Count n = 384;
  for (const bool bi : {true, false}) {
    const int streams = bi ? 6 : 3;
    CostModel m = torus_model(bi ? "torus:4x4x4:bi" : "torus:4x4x4:uni", 0, 5);
    m.overlap = false;
    const Schedule rs =
        algorithms::build("reduce_scatter_block/multicolor_bucket",
                          make_spec(CollectiveKind::kReduceScatterBlock, p, n / p), {}, m);
    const Schedule ar = algorithms::build("allreduce/multicolor_bucket",
                                          make_spec(CollectiveKind::kAllreduce, p, n), {}, m);
    ASSERT_TRUE(verify(rs).ok()) << bi;
    ASSERT_TRUE(verify(ar).ok()) << bi;
    for (const int c : {1, 2, 3, 4, 6, 8}) {
      m.cores_per_rank = c;
      EXPECT_EQ(simulate(rs, m).makespan, paper_multicore_formula(false, p, n, streams, c, 5))
          << bi << " c " << c;
      EXPECT_EQ(simulate(ar, m).makespan, paper_multicore_formula(true, p, n, streams, c, 5))
          << bi << " c " << c;
    }
  }
}

TEST(TorusBucket, OneCorePerColourDirectionHidesNothingButTheSharing) {
  // With overlap and c = 2N cores (one colour-direction each, bidirectional) every stream's
  // ring step is its own chain α + mβ + mγ: the same time as the formula without overlap.
  // One core with overlap: the reductions of six streams share it, but transfers run beside
  // them, so it lies between the 2N-core time and the one-core formula.
  const Rank p = 64;
  const Count n = 384;
  CostModel m = torus_model("torus:4x4x4:bi", 0, 5);
  const auto ar = make_spec(CollectiveKind::kAllreduce, p, n);
  m.cores_per_rank = 6;
  EXPECT_EQ(run("allreduce/multicolor_bucket", ar, m),
            paper_multicore_formula(true, p, n, 6, 6, 5));
  m.cores_per_rank = 1;
  const Time one = run("allreduce/multicolor_bucket", ar, m);
  EXPECT_GT(one, paper_multicore_formula(true, p, n, 6, 6, 5));
  EXPECT_LE(one, paper_multicore_formula(true, p, n, 6, 1, 5));
}

TEST(TorusBucket, DimensionWiseMeetsTheKnownFormulaOnlyWhenItsPhasesArePipelined) {
  // The paper's "known results" (Figure 2, Chan et al. 2006): allreduce 2(d_l-1)/d_l·nβ,
  // unidirectional. Phases in sequence (pieces = 1) move 2(p-1)/p·n: the first phase's
  // 2(d_1-1)/d_1·n plus the later phases' share of the rest. With the phases pipelined
  // (pieces = 8: a piece goes on to the next dimension while the next piece takes the first
  // one) only the first dimension's load counts, 2(d_1-1)/d_1·n: the known formula when the
  // longest dimension comes first, less otherwise. alpha = 0, n = 15360.
  const Count n = 15360;
  for (const char* dims : {"4x4", "4x2", "2x4", "5x3", "3x5"}) {
    const CostModel m = torus_model(std::string("torus:") + dims + ":uni");
    const Rank p = m.topology->size();
    const double d1 = m.topology->dims[0];
    const auto spec = make_spec(CollectiveKind::kAllreduce, p, n);
    EXPECT_EQ(run("allreduce/dimension_wise", spec, m), 2.0 * (p - 1) / p * n) << dims;
    EXPECT_EQ(run("allreduce/dimension_wise", spec, m, algorithms::Params::parse("pieces=8")),
              2 * (d1 - 1) / d1 * n)
        << dims;
  }
}

TEST(TorusBucket, PipelinedPiecesKeepTheResultAndCostStartUps) {
  const CostModel m = torus_model("torus:4x4x4:bi", 10);
  const auto spec = make_spec(CollectiveKind::kAllreduce, 64, 64 * 48);
  const Time one = run("allreduce/multicolor_bucket", spec, m);
  const Time four =
      run("allreduce/multicolor_bucket", spec, m, algorithms::Params::parse("pieces=4"));
  EXPECT_GT(four, one);  // alpha > 0, gamma = 0: pieces only add start-ups here
}

// ---- torus schedules verify and run on threads ---------------------------------------------

TEST(TorusBucket, SchedulesVerifyAndRunOnThreads) {
  using namespace testing;  // NOLINT(google-build-using-namespace)
  // ThreadSanitizer leaves out the 64-rank tori (64 threads: 100 s of its stage, run as one
  // case); the release and AddressSanitizer builds run them.
  const std::vector<std::string> topologies =
      testing::kThreadSanitizedBuild
          ? std::vector<std::string>{"torus:2x3x5:bi", "mesh:3x4:uni", "torus:2x2x2x2:bi"}
          : std::vector<std::string>{"torus:4x4x4:bi", "torus:4x4x4:uni:snake", "torus:2x3x5:bi",
                                     "mesh:3x4:uni", "torus:2x2x2x2:bi"};
  const std::vector<std::pair<std::string, CollectiveKind>> algorithms_{
      {"allreduce/multicolor_bucket", CollectiveKind::kAllreduce},
      {"allreduce/dimension_wise", CollectiveKind::kAllreduce},
      {"allreduce/ring_snake", CollectiveKind::kAllreduce},
      {"allreduce/bidirectional_ring", CollectiveKind::kAllreduce},
      {"reduce_scatter_block/multicolor_bucket", CollectiveKind::kReduceScatterBlock},
      {"allgather/multicolor_bucket", CollectiveKind::kAllgather}};
  const Datatype type = Datatype::int64();
  const ReduceOp op = ReduceOp::builtin("sum", type);
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  for (const auto& text : topologies) {
    const CostModel m = torus_model(text);
    const Rank p = m.topology->size();
    for (const auto& [name, kind] : algorithms_) {
      for (const Count count : {0, 1, 7, 5 * p}) {
        if (testing::kSanitizedBuild && (count == 0 || count == 7)) continue;  // time budget
        for (const char* params : {"", "pieces=2", "directions=1"}) {
          if (name.find("ring") != std::string::npos && std::string(params) == "directions=1") {
            continue;
          }
          const auto spec = make_spec(kind, p, count);
          const std::string where =
              text + " " + name + " count " + std::to_string(count) + " " + params;
          const Schedule schedule =
              algorithms::build(name, spec, algorithms::Params::parse(params), m);
          const auto report = verify(schedule);
          ASSERT_TRUE(report.ok()) << where;
          EXPECT_EQ(simulate(schedule, m).status, SimStatus::kOk) << where;
          const auto inputs = make_contributions(spec, type.bytes, fill_integers<std::int64_t>(7));
          const auto expected =
              reference_outputs(spec, type.bytes, inputs, combine_sum<std::int64_t>());
          const auto outputs = run_schedule(shared_world(p), schedule, type, op, inputs, options);
          for (Rank r = 0; r < p; ++r) {
            const auto i = static_cast<std::size_t>(r);
            ASSERT_EQ(first_difference(outputs[i], expected[i], type.bytes), "")
                << where << " rank " << r;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace optcoll
