// SPDX-License-Identifier: Apache-2.0
// File: tuning tables (optcoll/plan/tuning.h): the file format and its bad input, and the
// tuned choice: only at the measured p and backend, within the measured sizes, the fastest
// applicable run at a grid size, log-log interpolation between sizes (expected values worked
// out by hand below), exact counts for the v-kinds; and plan_tuned saying who decided.
#include "optcoll/plan/tuning.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

TunedRun run(std::string algorithm, double seconds, std::string variant = "") {
  return TunedRun{std::move(algorithm), std::move(variant), "", seconds, -1};
}

TuningPoint point(CollectiveKind kind, std::uint64_t bytes, std::vector<TunedRun> runs) {
  TuningPoint p;
  p.kind = kind;
  p.bytes = bytes;
  p.runs = std::move(runs);
  return p;
}

// allreduce at p = 4 on threads: at 8 B recursive doubling 1 us, ring 10 us; at 8 KiB
// recursive doubling 100 us, ring 10 us. Between them (log-log lines) they cross where
// log(t) is equal: rd goes 1 -> 100 (x100), ring stays 10, over log2 sizes 3 -> 13, so rd
// reaches 10 halfway in log size, at 2^8 = 256 B.
TuningTable allreduce_table() {
  TuningTable t;
  t.backend = "threads";
  t.nranks = 4;
  t.registry = registry_fingerprint();
  t.points.push_back(
      point(CollectiveKind::kAllreduce, 8,
            {run("allreduce/recursive_doubling", 1e-6), run("allreduce/ring", 1e-5)}));
  t.points.push_back(
      point(CollectiveKind::kAllreduce, 8192,
            {run("allreduce/recursive_doubling", 1e-4), run("allreduce/ring", 1e-5)}));
  return t;
}

CollectiveSpec allreduce_bytes(Rank p, Count bytes) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, p, bytes / 8);
  spec.elem_bytes = 8;
  return spec;
}

TEST(Tuning, BytesPerRankAsTheGridCountsThem) {
  CollectiveSpec allreduce = allreduce_bytes(4, 64);
  EXPECT_EQ(tuning_bytes(allreduce), 64u);
  CollectiveSpec allgather = make_spec(CollectiveKind::kAllgather, 4, 10);  // 10 per rank
  allgather.elem_bytes = 8;
  EXPECT_EQ(tuning_bytes(allgather), 80u);
  CollectiveSpec gatherv = make_spec_v(CollectiveKind::kGatherv, 4, {1, 2, 3, 6});
  gatherv.elem_bytes = 8;
  EXPECT_EQ(tuning_bytes(gatherv), 24u);  // mean block 3 elements
  EXPECT_NE(counts_fingerprint(gatherv), 0u);
  EXPECT_NE(counts_fingerprint(gatherv),
            counts_fingerprint(make_spec_v(CollectiveKind::kGatherv, 4, {1, 2, 6, 3})));
  EXPECT_EQ(counts_fingerprint(allreduce), 0u);
}

TEST(Tuning, GridSizesTakeTheFastestRun) {
  const TuningTable t = allreduce_table();
  const auto at8 = tuned_choice(t, allreduce_bytes(4, 8));
  ASSERT_TRUE(at8.choice) << at8.reason;
  EXPECT_EQ(at8.choice->algorithm, "allreduce/recursive_doubling");
  EXPECT_FALSE(at8.choice->interpolated);
  EXPECT_DOUBLE_EQ(at8.choice->seconds, 1e-6);
  const auto at8k = tuned_choice(t, allreduce_bytes(4, 8192));
  ASSERT_TRUE(at8k.choice);
  EXPECT_EQ(at8k.choice->algorithm, "allreduce/ring");
}

TEST(Tuning, BetweenGridSizesTheLogLogLinesDecide) {
  const TuningTable t = allreduce_table();
  // 128 B: rd at 10^(-6 + 2 * (7-3)/10) = 10^-5.2 = 6.3 us < ring's 10 us.
  const auto at128 = tuned_choice(t, allreduce_bytes(4, 128));
  ASSERT_TRUE(at128.choice);
  EXPECT_EQ(at128.choice->algorithm, "allreduce/recursive_doubling");
  EXPECT_TRUE(at128.choice->interpolated);
  EXPECT_NEAR(at128.choice->seconds, std::pow(10.0, -5.2), 1e-9);
  EXPECT_EQ(at128.choice->grid_bytes, 8u);  // nearer 8 than 8192 in log size
  // 512 B: rd at 10^(-6 + 2 * 6/10) = 10^-4.8 = 15.8 us > ring's 10 us.
  const auto at512 = tuned_choice(t, allreduce_bytes(4, 512));
  ASSERT_TRUE(at512.choice);
  EXPECT_EQ(at512.choice->algorithm, "allreduce/ring");
  EXPECT_NEAR(at512.choice->seconds, 1e-5, 1e-12);
}

TEST(Tuning, NeverOutsideTheMeasuredPSizesOrBackend) {
  const TuningTable t = allreduce_table();
  const auto other_p = tuned_choice(t, allreduce_bytes(8, 64));
  EXPECT_FALSE(other_p.choice);
  EXPECT_NE(other_p.reason.find("measured at p = 4, not 8"), std::string::npos) << other_p.reason;
  const auto above = tuned_choice(t, allreduce_bytes(4, 16384));
  EXPECT_FALSE(above.choice);
  EXPECT_NE(above.reason.find("outside the measured 8 .. 8192 B"), std::string::npos);
  const auto mpi = tuned_choice(t, allreduce_bytes(4, 64), "mpi");
  EXPECT_FALSE(mpi.choice);
  EXPECT_NE(mpi.reason.find("threads backend, not mpi"), std::string::npos) << mpi.reason;
  EXPECT_TRUE(tuned_choice(t, allreduce_bytes(4, 64), "threads").choice);
  const auto bcast = tuned_choice(t, make_spec(CollectiveKind::kBcast, 4, 8));
  EXPECT_FALSE(bcast.choice);
  EXPECT_NE(bcast.reason.find("no bcast point"), std::string::npos);
}

TEST(Tuning, AnInapplicableRunIsPassedOver) {
  // A reproducible allreduce: recursive doubling does not combine in rank order; the table's
  // next best applicable run is taken (or none).
  TuningTable t = allreduce_table();
  t.points[0].runs.push_back(run("allreduce/reproducible", 5e-6));
  CollectiveSpec spec = allreduce_bytes(4, 8);
  spec.reproducible = true;
  const auto choice = tuned_choice(t, spec);
  ASSERT_TRUE(choice.choice) << choice.reason;
  EXPECT_EQ(choice.choice->algorithm, "allreduce/reproducible");
  spec = allreduce_bytes(4, 8192);
  spec.reproducible = true;
  const auto none = tuned_choice(t, spec);
  EXPECT_FALSE(none.choice);
  EXPECT_NE(none.reason.find("no algorithm measured near"), std::string::npos) << none.reason;
}

TEST(Tuning, VKindsOnlyWithTheirOwnCounts) {
  TuningTable t = allreduce_table();
  CollectiveSpec measured = make_spec_v(CollectiveKind::kGatherv, 4, {1, 100, 1, 1});
  measured.elem_bytes = 8;
  TuningPoint p = point(CollectiveKind::kGatherv, tuning_bytes(measured),
                        {run("gatherv/linear", 1e-6), run("gatherv/binomial", 2e-6)});
  p.counts = "spikes";
  p.counts_fingerprint = counts_fingerprint(measured);
  t.points.push_back(p);
  const auto same = tuned_choice(t, measured);
  ASSERT_TRUE(same.choice) << same.reason;
  EXPECT_EQ(same.choice->algorithm, "gatherv/linear");
  CollectiveSpec other = make_spec_v(CollectiveKind::kGatherv, 4, {100, 1, 1, 1});
  other.elem_bytes = 8;
  const auto different = tuned_choice(t, other);
  EXPECT_FALSE(different.choice);
  EXPECT_NE(different.reason.find("no gatherv point with these counts"), std::string::npos);
}

TEST(Tuning, FileRoundTripAndVariants) {
  TuningTable t = allreduce_table();
  t.source = "a test";
  t.points[0].runs.push_back(run("allreduce/double_binary", 3e-6, "segment=half"));
  const TuningTable back = parse_tuning_json(tuning_to_json(t));
  EXPECT_EQ(back.backend, "threads");
  EXPECT_EQ(back.nranks, 4);
  EXPECT_EQ(back.source, "a test");
  EXPECT_TRUE(back.warnings.empty());
  ASSERT_EQ(back.points.size(), 2u);
  ASSERT_EQ(back.points[0].runs.size(), 3u);
  EXPECT_EQ(back.points[0].runs[2].variant, "segment=half");
  EXPECT_DOUBLE_EQ(back.points[1].runs[0].seconds, 1e-4);
  // A segment variant is the builder's own choice halved or doubled.
  const auto& info = algorithms::lookup("bcast/pipelined_chain", CollectiveKind::kBcast);
  const CollectiveSpec spec = make_spec(CollectiveKind::kBcast, 8, 100000);
  const CostModel model = reference_cluster_model();
  const auto chosen = algorithms::Params::parse(algorithms::build(info, spec, {}, model).params);
  const auto half = variant_params(info, spec, model, "segment=half");
  const auto twice = variant_params(info, spec, model, "segment=double");
  EXPECT_EQ(half.get_int("segment"), std::max<std::int64_t>(1, chosen.get_int("segment") / 2));
  EXPECT_EQ(twice.get_int("segment"), chosen.get_int("segment") * 2);
  EXPECT_EQ(variant_params(info, spec, model, "").get("segment"), "auto");
  EXPECT_THROW(variant_params(info, spec, model, "radix=4"), Error);
  const auto variants =
      tuning_variants(algorithms::lookup("bcast/knomial", CollectiveKind::kBcast));
  EXPECT_EQ(variants.front(), "");
  EXPECT_NE(std::find(variants.begin(), variants.end(), "radix=8"), variants.end());
}

TEST(Tuning, BadFilesNameTheEntry) {
  auto expect_parse_error = [](const std::string& text, const std::string& fragment) {
    try {
      parse_tuning_json(text);
      FAIL() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const std::string head = R"({"format": "optcoll-tuning-1", "backend": "threads", "nranks": 4,
                               "registry": ")" +
                           registry_fingerprint() + R"(", "points": )";
  expect_parse_error("{", "tuning table is not valid JSON");
  expect_parse_error("[]", "must hold a JSON object");
  expect_parse_error(R"({"format": "other"})", "format \"other\" is not \"optcoll-tuning-1\"");
  expect_parse_error(head + "5}", "\"points\" must be an array");
  expect_parse_error(head + R"([{"collective": "allscatter", "bytes": 8, "runs": []}]})",
                     "points[0]: unknown collective \"allscatter\"");
  expect_parse_error(head + R"([{"collective": "bcast", "bytes": -8, "runs": []}]})",
                     "points[0]: \"bytes\" must be a non-negative integer");
  expect_parse_error(head + R"([{"collective": "bcast", "bytes": 8, "runs": [
                                   {"algorithm": "bcast/linear", "seconds": -1}]}]})",
                     "points[0].runs[0]: \"seconds\" must be a positive time");
  expect_parse_error(head + R"([{"collective": "bcast", "bytes": 8, "runs": [
                                   {"algorithm": "bcast/linear", "seconds": 1e-6,
                                    "variant": "radix=99"}]}]})",
                     "points[0].runs[0]: unknown variant \"radix=99\"");
  expect_parse_error(R"({"format": "optcoll-tuning-1", "backend": "gpu", "nranks": 4})",
                     "unknown backend \"gpu\"");
  // An algorithm this registry lacks is set aside with a warning naming the entry; another
  // registry's fingerprint is a warning too.
  const TuningTable t = parse_tuning_json(
      R"({"format": "optcoll-tuning-1", "backend": "threads", "nranks": 4, "registry": "x",
          "points": [{"collective": "bcast", "bytes": 8, "runs": [
            {"algorithm": "bcast/teleport", "seconds": 1e-6},
            {"algorithm": "bcast/linear", "seconds": 2e-6}]}]})");
  ASSERT_EQ(t.warnings.size(), 2u);
  EXPECT_NE(t.warnings[0].find("another registry"), std::string::npos) << t.warnings[0];
  EXPECT_NE(t.warnings[1].find("points[0].runs[0]: algorithm \"bcast/teleport\""),
            std::string::npos)
      << t.warnings[1];
  ASSERT_EQ(t.points[0].runs.size(), 1u);
  EXPECT_EQ(t.points[0].runs[0].algorithm, "bcast/linear");
}

TEST(Tuning, PlanTunedSaysWhoDecided) {
  const TuningTable t = allreduce_table();
  const CostModel model = reference_cluster_model();
  const Plan tuned = plan_tuned(allreduce_bytes(4, 8192), model, t, "threads");
  EXPECT_EQ(tuned.algorithm, "allreduce/ring");
  EXPECT_NE(tuned.decided_by.find("the tuning table: allreduce/ring"), std::string::npos)
      << tuned.decided_by;
  const Plan model_only = plan_tuned(allreduce_bytes(8, 8192), model, t, "threads");
  EXPECT_EQ(model_only.algorithm, plan(allreduce_bytes(8, 8192), model).algorithm);
  EXPECT_NE(model_only.decided_by.find("the model (the tuning table has no choice here"),
            std::string::npos)
      << model_only.decided_by;
}

}  // namespace
}  // namespace optcoll
