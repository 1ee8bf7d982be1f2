// SPDX-License-Identifier: Apache-2.0
// File: optcoll export's choices and files (optcoll/plan/rules_export.h,
// library_algorithms.h): the table names only algorithms the libraries have (Open MPI's ids
// as `ompi_info --param coll tuned --level 9` of Open MPI 4.1 lists them, copied below) and
// registry relatives that exist; at every grid size the rule in force names the library
// algorithm whose relative plan() predicts fastest (recomputed here); rules merge, start at
// 0 and follow the library's keys; a table decides by its measured times at its p only; bad
// options are errors; the Open MPI file has the structure coll/tuned reads (tests/export runs
// Open MPI on it).
#include "optcoll/plan/rules_export.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"

namespace optcoll {
namespace {

using enum CollectiveKind;

// Open MPI 4.1's algorithm enumerators per collective ("Valid values" of ompi_info).
const std::map<CollectiveKind, std::map<int, std::string>> kOmpiValid = {
    {kAllgather,
     {{1, "linear"},
      {2, "bruck"},
      {3, "recursive_doubling"},
      {4, "ring"},
      {5, "neighbor"},
      {6, "two_proc"}}},
    {kAllgatherv, {{1, "default"}, {2, "bruck"}, {3, "ring"}, {4, "neighbor"}, {5, "two_proc"}}},
    {kAllreduce,
     {{1, "basic_linear"},
      {2, "nonoverlapping"},
      {3, "recursive_doubling"},
      {4, "ring"},
      {5, "segmented_ring"},
      {6, "rabenseifner"}}},
    {kAlltoall,
     {{1, "linear"}, {2, "pairwise"}, {3, "modified_bruck"}, {4, "linear_sync"}, {5, "two_proc"}}},
    {kAlltoallv, {{1, "basic_linear"}, {2, "pairwise"}}},
    {kBarrier,
     {{1, "linear"},
      {2, "double_ring"},
      {3, "recursive_doubling"},
      {4, "bruck"},
      {5, "two_proc"},
      {6, "tree"}}},
    {kBcast,
     {{1, "basic_linear"},
      {2, "chain"},
      {3, "pipeline"},
      {4, "split_binary_tree"},
      {5, "binary_tree"},
      {6, "binomial"},
      {7, "knomial"},
      {8, "scatter_allgather"},
      {9, "scatter_allgather_ring"}}},
    {kReduce,
     {{1, "linear"},
      {2, "chain"},
      {3, "pipeline"},
      {4, "binary"},
      {5, "binomial"},
      {6, "in-order_binary"},
      {7, "rabenseifner"}}},
    {kReduceScatter,
     {{1, "non-overlapping"}, {2, "recursive_halving"}, {3, "ring"}, {4, "butterfly"}}},
    {kReduceScatterBlock,
     {{1, "basic_linear"}, {2, "recursive_doubling"}, {3, "recursive_halving"}, {4, "butterfly"}}},
    {kGather, {{1, "basic_linear"}, {2, "binomial"}, {3, "linear_sync"}}},
    {kScatter, {{1, "basic_linear"}, {2, "binomial"}, {3, "linear_nb"}}},
    {kExscan, {{1, "linear"}, {2, "recursive_doubling"}}},
    {kScan, {{1, "linear"}, {2, "recursive_doubling"}}},
};

TEST(LibraryAlgorithms, OpenMpiEntriesNameAlgorithmsTunedHasAndRelativesTheRegistryHas) {
  int entries = 0;
  for (const auto& a : library_algorithms()) {
    const auto* info = algorithms::find_algorithm(a.registry);
    ASSERT_NE(info, nullptr) << a.registry;
    EXPECT_EQ(info->collective, a.kind) << a.registry;
    EXPECT_NO_THROW(algorithms::resolve_params(*info, algorithms::Params::parse(a.params)));
    if (a.param == LibraryParam::kSegmentAsBytes) {
      EXPECT_TRUE(algorithms::resolve_params(*info, {}).has("segment")) << a.registry;
    }
    if (a.library != MpiLibrary::kOpenMpi) continue;
    ++entries;
    const auto valid = kOmpiValid.find(a.kind);
    ASSERT_NE(valid, kOmpiValid.end()) << collective_name(a.kind);
    const auto id = valid->second.find(a.id);
    ASSERT_NE(id, valid->second.end()) << a.registry << " id " << a.id;
    EXPECT_EQ(id->second, a.name) << a.registry;
    EXPECT_GE(ompi_collective_id(a.kind), 0);
  }
  EXPECT_GE(entries, 40);
  EXPECT_EQ(ompi_collective_id(kGatherv), -1);
  EXPECT_EQ(ompi_collective_id(kScatterv), -1);
}

TEST(LibraryAlgorithms, OpenMpiMessageKeysAreWhatCollTunedCompares) {
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kAllreduce, 8, 1024), 1024u);
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kBcast, 8, 64), 64u);
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kAllgather, 8, 64), 512u);  // p x block
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kAlltoall, 4, 100),
            400u);  // p x block per pair
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kReduceScatterBlock, 16, 8),
            128u);  // rcount x p
  EXPECT_EQ(library_message_key(MpiLibrary::kOpenMpi, kAllgatherv, 3, 10),
            30u);  // the sum of the blocks
  for (const auto kind : {kGather, kScatter, kScan, kExscan, kAlltoallv, kBarrier}) {
    EXPECT_FALSE(library_message_key(MpiLibrary::kOpenMpi, kind, 8, 1024).has_value())
        << collective_name(kind);
  }
}

TEST(LibraryAlgorithms, RestrictionsFollowTheLibrarysFallbacks) {
  const auto find = [](std::string_view registry) {
    for (const auto& a : library_algorithms()) {
      if (a.library == MpiLibrary::kOpenMpi && a.registry == registry) return &a;
    }
    return static_cast<const LibraryAlgorithm*>(nullptr);
  };
  const auto* rd = find("allgather/recursive_doubling");
  ASSERT_NE(rd, nullptr);
  EXPECT_TRUE(library_runs_as_named(*rd, make_spec(kAllgather, 8, 1)));
  EXPECT_FALSE(library_runs_as_named(*rd, make_spec(kAllgather, 6, 1)));
  const auto* ring = find("allreduce/ring");
  ASSERT_NE(ring, nullptr);
  EXPECT_FALSE(library_runs_as_named(*ring, make_spec(kAllreduce, 4, 3)));
  EXPECT_TRUE(library_runs_as_named(*ring, make_spec(kAllreduce, 4, 4)));
}

// The grid sizes the export uses with these options.
std::vector<std::uint64_t> sizes(std::uint64_t min, std::uint64_t max, std::uint64_t factor) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b = min; b <= max; b *= factor) out.push_back(b);
  return out;
}

// The rule in force for `bytes` per rank: the last of (kind, p) with from_bytes <= bytes.
const LibraryRule* rule_for(const LibraryRules& rules, CollectiveKind kind, Rank p,
                            std::uint64_t bytes) {
  const LibraryRule* found = nullptr;
  for (const auto& r : rules.rules) {
    if (r.kind == kind && r.nranks == p && r.from_bytes <= bytes) found = &r;
  }
  return found;
}

// The least predicted time of `a`'s registry relative for `spec`: its defaults, and where
// the library takes a segment size, the planner's segment halved and doubled too (the
// documented variants), each planned from scratch.
std::optional<double> relative_time(const LibraryAlgorithm& a, const CollectiveSpec& spec,
                                    const CostModel& model) {
  if (!library_runs_as_named(a, spec)) return std::nullopt;
  const auto& info = algorithms::lookup(a.registry, spec.kind);
  const auto params = algorithms::Params::parse(a.params);
  if (algorithms::why_not(info, spec, params)) return std::nullopt;
  const Plan defaults = plan(spec, model, a.registry, params);
  double best = defaults.predicted_time;
  if (a.param == LibraryParam::kSegmentAsBytes) {
    const auto segment = defaults.params.get_int("segment");
    for (const auto s : {segment / 2, segment * 2}) {
      if (s < 1) continue;
      auto p = params;
      p.set("segment", std::to_string(s));
      if (algorithms::why_not(info, spec, p)) continue;
      best = std::min(best, plan(spec, model, a.registry, p).predicted_time);
    }
  }
  return best;
}

TEST(RulesExport, EveryGridSizeGetsTheLibraryAlgorithmWhoseRelativeIsPredictedFastest) {
  const CostModel model = reference_cluster_model();
  ExportOptions o;
  o.nranks = {4, 8};
  o.kinds = {kAllreduce, kBcast, kAllgather};
  o.min_bytes = 8;
  o.max_bytes = std::uint64_t{1} << 20;
  o.factor = 8;
  const LibraryRules rules = choose_library_rules(o, model, nullptr);
  std::set<std::string> chosen_names;
  for (const auto kind : o.kinds) {
    for (const Rank p : o.nranks) {
      for (const auto bytes : sizes(o.min_bytes, o.max_bytes, o.factor)) {
        CollectiveSpec spec = make_spec(kind, p, static_cast<Count>(bytes / 8));
        spec.elem_bytes = 8;
        double best = 1e300;
        for (const auto& a : library_algorithms()) {
          if (a.library != MpiLibrary::kOpenMpi || a.kind != kind) continue;
          if (const auto t = relative_time(a, spec, model)) best = std::min(best, *t);
        }
        const LibraryRule* rule = rule_for(rules, kind, p, bytes);
        ASSERT_NE(rule, nullptr) << collective_name(kind) << " p " << p << " " << bytes;
        chosen_names.insert(std::string(rule->algorithm->name));
        const auto chosen = relative_time(*rule->algorithm, spec, model);
        ASSERT_TRUE(chosen.has_value()) << rule->algorithm->registry << " at " << bytes;
        EXPECT_LE(*chosen, best * (1 + 1e-9)) << collective_name(kind) << " p " << p << " " << bytes
                                              << " B: " << rule->algorithm->registry;
      }
    }
  }
  EXPECT_GE(chosen_names.size(), 3u) << "the grid should need several algorithms";
}

TEST(RulesExport, RulesStartAtZeroChangeAtGeometricMidpointsAndNeverRepeat) {
  ExportOptions o;
  o.nranks = {16};
  o.kinds = {kAllreduce};
  o.min_bytes = 8;
  o.max_bytes = std::uint64_t{8} << 20;
  o.factor = 4;
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), nullptr);
  ASSERT_GE(rules.rules.size(), 2u);
  EXPECT_EQ(rules.rules.front().from_bytes, 0u);
  EXPECT_EQ(rules.rules.front().from_key, 0u);
  const auto grid = sizes(8, std::uint64_t{8} << 20, 4);
  for (std::size_t i = 1; i < rules.rules.size(); ++i) {
    const auto& r = rules.rules[i];
    EXPECT_GT(r.from_bytes, rules.rules[i - 1].from_bytes);
    EXPECT_FALSE(r.algorithm->id == rules.rules[i - 1].algorithm->id &&
                 r.segment_bytes == rules.rules[i - 1].segment_bytes);
    // from = floor(sqrt(a * 4a)) = 2a for grid neighbours a, 4a.
    EXPECT_TRUE(std::find(grid.begin(), grid.end(), r.from_bytes / 2) != grid.end())
        << r.from_bytes;
    EXPECT_EQ(r.from_key, r.from_bytes);  // allreduce: the key is the message
  }
}

TEST(RulesExport, SizeBlindCollectivesGetOneRulePerCommunicatorSize) {
  ExportOptions o;
  o.nranks = {4, 9};
  o.kinds = {kGather, kScan, kBarrier, kAlltoallv};
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), nullptr);
  std::map<std::pair<CollectiveKind, Rank>, int> count;
  for (const auto& r : rules.rules) ++count[{r.kind, r.nranks}];
  EXPECT_EQ(count.size(), 8u);
  for (const auto& [key, n] : count) EXPECT_EQ(n, 1) << collective_name(key.first);
}

// Open MPI's gather rule ignores the size: one rule, the algorithm least in geometric mean
// of its ratio to each size's best. Linear wins at 8 B by 1.1x, binomial at 1 MiB by 4x
// (log 1.1 < log 4): binomial, although linear wins at two of the three sizes.
TEST(RulesExport, ASizeBlindRuleTakesTheLeastGeometricMeanRatio) {
  TuningTable table;
  table.backend = "mpi";
  table.nranks = 4;
  const auto point = [](std::uint64_t bytes, double linear, double binomial) {
    TuningPoint pt;
    pt.kind = kGather;
    pt.bytes = bytes;
    pt.runs = {{"gather/linear", "", "", linear, -1}, {"gather/binomial", "", "", binomial, -1}};
    return pt;
  };
  table.points = {point(8, 1.0e-6, 1.1e-6), point(4096, 2.0e-6, 2.1e-6),
                  point(1 << 20, 4.0e-3, 1.0e-3)};
  ExportOptions o;
  o.nranks = {4};
  o.kinds = {kGather};
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), &table);
  ASSERT_EQ(rules.rules.size(), 1u);
  EXPECT_EQ(rules.rules[0].algorithm->name, "binomial");
  // Without the large size linear is least everywhere.
  table.points.pop_back();
  const LibraryRules small = choose_library_rules(o, reference_cluster_model(), &table);
  ASSERT_EQ(small.rules.size(), 1u);
  EXPECT_EQ(small.rules[0].algorithm->name, "basic_linear");
}

TEST(RulesExport, ATuningTableDecidesByItsMeasuredTimesAtItsP) {
  TuningTable table;
  table.backend = "mpi";
  table.nranks = 4;
  const auto point = [](std::uint64_t bytes, double ring, double rd, double rabenseifner) {
    TuningPoint pt;
    pt.kind = kAllreduce;
    pt.bytes = bytes;
    pt.runs = {{"allreduce/ring", "", "", ring, -1},
               {"allreduce/recursive_doubling", "", "", rd, -1},
               {"allreduce/rabenseifner", "", "", rabenseifner, -1},
               {"allreduce/hybrid", "", "", 1e-9, -1}};  // no Open MPI relative: ignored
    return pt;
  };
  table.points = {point(8, 5e-6, 1e-6, 3e-6), point(4096, 9e-6, 8e-6, 7e-6),
                  point(1 << 20, 1e-3, 2e-3, 1.5e-3)};
  ExportOptions o;
  o.nranks = {4};
  o.kinds = {kAllreduce};
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), &table);
  ASSERT_EQ(rules.rules.size(), 3u);
  EXPECT_EQ(rules.rules[0].algorithm->name, "recursive_doubling");
  EXPECT_EQ(rules.rules[0].from_bytes, 0u);
  EXPECT_EQ(rules.rules[1].algorithm->name, "rabenseifner");
  EXPECT_EQ(rules.rules[1].from_bytes, 181u);  // floor(sqrt(8 * 4096))
  EXPECT_EQ(rules.rules[2].algorithm->name, "ring");
  EXPECT_EQ(rules.rules[2].from_bytes, 65536u);  // sqrt(4096 * 2^20)
  EXPECT_EQ(rules.rules[2].decided_by, "tuning table");
  EXPECT_DOUBLE_EQ(rules.rules[2].runner_up, 1.5e-3);

  o.nranks = {8};
  EXPECT_THROW(choose_library_rules(o, reference_cluster_model(), &table), Error);
}

// Library timings as measure_library.py writes them: allgather at p = 6 with Open MPI's
// algorithms; recursive doubling (3) is fastest everywhere but needs a power of two.
std::string allgather_timings(Rank p, std::string_view library = "openmpi") {
  const auto runs = [](double linear, double bruck, double rd, double ring) {
    return fmt::format(
        R"([{{"algorithm": "linear", "id": 1, "seconds": {}}},
            {{"algorithm": "bruck", "id": 2, "seconds": {}}},
            {{"algorithm": "recursive_doubling", "id": 3, "seconds": {}}},
            {{"algorithm": "ring", "id": 4, "seconds": {}}}])",
        linear, bruck, rd, ring);
  };
  return fmt::format(
      R"({{"format": "optcoll-library-timings-1", "library": "{}", "nranks": {},
          "source": "test", "points": [
          {{"collective": "allgather", "bytes": 4096, "runs": {}}},
          {{"collective": "allgather", "bytes": 8, "runs": {}}},
          {{"collective": "allgather", "bytes": 1048576, "runs": {}}}]}})",
      library, p, runs(9e-6, 8e-6, 1e-6, 7e-6), runs(5e-6, 2e-6, 1e-6, 3e-6),
      runs(1e-3, 4e-3, 1e-4, 2e-3));
}

TEST(RulesExport, LibraryTimingsDecideByTheFastestAlgorithmThatRunsAsNamed) {
  const LibraryTimings timings = parse_library_timings_json(allgather_timings(6));
  EXPECT_EQ(timings.nranks, 6);
  ASSERT_EQ(timings.points.size(), 3u);
  EXPECT_EQ(timings.points[0].runs[2].algorithm->name, "recursive_doubling");
  ExportOptions o;
  o.nranks = {6};
  o.kinds = {kAllgather};
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), nullptr, &timings);
  // Points sorted by size; recursive doubling never (6 is no power of two).
  ASSERT_EQ(rules.rules.size(), 3u);
  EXPECT_EQ(rules.rules[0].algorithm->name, "bruck");
  EXPECT_EQ(rules.rules[0].from_bytes, 0u);
  EXPECT_DOUBLE_EQ(rules.rules[0].seconds, 2e-6);
  EXPECT_DOUBLE_EQ(rules.rules[0].runner_up, 3e-6);
  EXPECT_EQ(rules.rules[1].algorithm->name, "ring");
  EXPECT_EQ(rules.rules[1].from_bytes, 181u);  // floor(sqrt(8 * 4096))
  EXPECT_EQ(rules.rules[2].algorithm->name, "linear");
  EXPECT_EQ(rules.rules[2].from_bytes, 65536u);  // sqrt(4096 * 2^20)
  for (const auto& rule : rules.rules) {
    EXPECT_EQ(rule.decided_by, "library timings");
    EXPECT_EQ(rule.segment_bytes, 0u);  // measured with the library's default segments
  }
  // At a power of two recursive doubling runs as named, and wins everywhere: one rule.
  const LibraryTimings at8 = parse_library_timings_json(allgather_timings(8));
  o.nranks = {8};
  const LibraryRules rules8 = choose_library_rules(o, reference_cluster_model(), nullptr, &at8);
  ASSERT_EQ(rules8.rules.size(), 1u);
  EXPECT_EQ(rules8.rules[0].algorithm->name, "recursive_doubling");
}

TEST(RulesExport, OpenMpisOwnDecisionGivesWayOnlyToAnAlgorithmFasterByTheMargin) {
  // allreduce at p = 4: the default, then recursive doubling 5% faster (8 B: a near tie, the
  // default stays) and 50% faster (4 KiB: it replaces the default).
  const std::string text = R"({"format": "optcoll-library-timings-1", "library": "openmpi",
      "nranks": 4, "points": [
      {"collective": "allreduce", "bytes": 8, "runs": [
        {"algorithm": "default", "id": 0, "seconds": 1.05e-6},
        {"algorithm": "recursive_doubling", "id": 3, "seconds": 1.0e-6}]},
      {"collective": "allreduce", "bytes": 4096, "runs": [
        {"algorithm": "default", "id": 0, "seconds": 3e-6},
        {"algorithm": "recursive_doubling", "id": 3, "seconds": 2e-6}]}]})";
  const LibraryTimings timings = parse_library_timings_json(text);
  EXPECT_EQ(timings.points[0].runs[0].algorithm, &open_mpi_default(kAllreduce));
  ExportOptions o;
  o.nranks = {4};
  o.kinds = {kAllreduce};
  LibraryRules rules = choose_library_rules(o, reference_cluster_model(), nullptr, &timings);
  ASSERT_EQ(rules.rules.size(), 2u);
  EXPECT_EQ(rules.rules[0].algorithm->id, 0);
  EXPECT_DOUBLE_EQ(rules.rules[0].runner_up, 1.0e-6);
  EXPECT_EQ(rules.rules[1].algorithm->name, "recursive_doubling");
  const std::string file = to_ompi_rules(rules, "test");
  EXPECT_NE(file.find("0 0 0 0 # Open MPI's own decision"), std::string::npos) << file;
  EXPECT_NE(file.find("181 3 0 0 # recursive_doubling"), std::string::npos) << file;
  // A margin of 0: the least time decides alone.
  o.default_margin = 0;
  rules = choose_library_rules(o, reference_cluster_model(), nullptr, &timings);
  ASSERT_EQ(rules.rules.size(), 1u);
  EXPECT_EQ(rules.rules[0].algorithm->name, "recursive_doubling");
  // MPICH's timings have no "default".
  std::string mpich = text;
  mpich.replace(mpich.find("openmpi"), 7, "mpich");
  EXPECT_THROW(parse_library_timings_json(mpich), Error);
}

TEST(RulesExport, LibraryTimingsOfAnotherPOrLibraryOrWithUnknownEntriesAreErrors) {
  const auto parse_error = [](const std::string& text) {
    try {
      parse_library_timings_json(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string text = allgather_timings(6);
  const auto replaced = [&](std::string_view from, std::string_view to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_NE(parse_error(replaced(R"("ring", "id": 4)", R"("ring", "id": 5)"))
                .find("no allgather algorithm \"ring\" with id 5"),
            std::string::npos);
  EXPECT_NE(parse_error(replaced(R"("bruck")", R"("brook")")).find("point 0, run 1"),
            std::string::npos);
  EXPECT_NE(parse_error(replaced(R"("allgather", "bytes": 8,)", R"("allgatherx", "bytes": 8,)"))
                .find("unknown collective"),
            std::string::npos);
  EXPECT_NE(parse_error(replaced("\"seconds\": 9e-06", "\"seconds\": 0")).find("positive"),
            std::string::npos);
  EXPECT_NE(parse_error(replaced("\"openmpi\"", "\"lam\"")).find("unknown library"),
            std::string::npos);
  EXPECT_NE(parse_error(replaced("optcoll-library-timings-1", "x")).find("format"),
            std::string::npos);
  EXPECT_NE(parse_error("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parse_error(replaced("\"nranks\": 6", "\"nranks\": 1")).find("2 ranks or more"),
            std::string::npos);

  const LibraryTimings timings = parse_library_timings_json(text);
  ExportOptions o;
  o.kinds = {kAllgather};
  o.nranks = {8};
  EXPECT_THROW(choose_library_rules(o, reference_cluster_model(), nullptr, &timings), Error);
  o.nranks = {6};
  o.library = MpiLibrary::kMpich;
  try {
    choose_library_rules(o, reference_cluster_model(), nullptr, &timings);
    ADD_FAILURE() << "Open MPI's timings accepted for MPICH";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Open MPI 4.1's, not MPICH 4.0's"), std::string::npos);
  }
}

TEST(RulesExport, BadOptionsAreErrorsNamingTheProblem) {
  const CostModel model = reference_cluster_model();
  const auto message = [&](ExportOptions o) {
    try {
      choose_library_rules(o, model, nullptr);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ExportOptions o;
  EXPECT_NE(message(o).find("no p"), std::string::npos);
  o.nranks = {1};
  EXPECT_NE(message(o).find("2 ranks or more"), std::string::npos);
  o.nranks = {8, 4};
  EXPECT_NE(message(o).find("ascending"), std::string::npos);
  o.nranks = {4};
  o.min_bytes = 100;
  o.max_bytes = 10;
  EXPECT_NE(message(o).find("min <= max"), std::string::npos);
  o.max_bytes = 1000;
  o.factor = 1;
  EXPECT_NE(message(o).find("factor"), std::string::npos);
  o.factor = 2;
  o.kinds = {kGatherv};
  EXPECT_NE(message(o).find("no selection rules for gatherv"), std::string::npos);
}

// The numbers of an Open MPI rules file, comments dropped.
std::vector<long> numbers(const std::string& text) {
  std::vector<long> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line.substr(0, line.find('#')));
    long v = 0;
    while (fields >> v) out.push_back(v);
  }
  return out;
}

TEST(RulesExport, TheOpenMpiFileHasCollTunedsStructure) {
  ExportOptions o;
  o.nranks = {4, 8};
  o.kinds = {kAllreduce, kBcast};
  o.max_bytes = std::uint64_t{1} << 20;
  const LibraryRules rules = choose_library_rules(o, reference_cluster_model(), nullptr);
  const auto v = numbers(to_ompi_rules(rules, "a test"));
  std::size_t i = 0;
  ASSERT_EQ(v.at(i++), 2);
  std::size_t rules_seen = 0;
  for (const int expected_id : {2, 7}) {  // allreduce, bcast: ascending ids
    EXPECT_EQ(v.at(i++), expected_id);
    ASSERT_EQ(v.at(i++), 2);  // communicator sizes
    for (const long p : {4L, 8L}) {
      EXPECT_EQ(v.at(i++), p);
      const long n = v.at(i++);
      ASSERT_GE(n, 1);
      long previous_key = -1;
      for (long m = 0; m < n; ++m) {
        const long key = v.at(i++);
        const long alg = v.at(i++);
        EXPECT_EQ(v.at(i++), 0);  // fan-in/out
        const long segment = v.at(i++);
        if (m == 0) {
          EXPECT_EQ(key, 0);
        }
        EXPECT_GT(key, previous_key);
        previous_key = key;
        EXPECT_GE(alg, 1);
        EXPECT_GE(segment, 0);
        ++rules_seen;
      }
    }
  }
  EXPECT_EQ(i, v.size());
  EXPECT_EQ(rules_seen, rules.rules.size());
}

}  // namespace
}  // namespace optcoll
