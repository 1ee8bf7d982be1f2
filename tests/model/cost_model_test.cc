// SPDX-License-Identifier: Apache-2.0
// File: tests of the cost model: arithmetic, validation, model files, lower bounds.
#include "optcoll/model/cost_model.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

TEST(CostModel, TransferCopyReduceTimes) {
  CostModel m;
  m.alpha = 10;
  m.beta = 2;
  m.gamma = 3;
  m.copy = 1;
  EXPECT_EQ(m.transfer_time(0, 1, 5, 4), 20.0);
  EXPECT_EQ(m.transfer_time(0, 1, 0, 4), 0.0);  // empty messages cost nothing
  EXPECT_EQ(m.copy_time(5, 4), 5.0);
  EXPECT_EQ(m.reduce_time(5, 4), 15.0);
  m.per_byte = true;
  EXPECT_EQ(m.transfer_time(0, 1, 5, 8), 10.0 + 2 * 40);
}

TEST(CostModel, PairMatricesReplaceAlphaBeta) {
  CostModel m;
  m.pair_nranks = 2;
  m.pair_alpha = {0, 7, 9, 0};
  m.pair_beta = {0, 1, 3, 0};
  EXPECT_EQ(m.transfer_time(0, 1, 10, 4), 17.0);
  EXPECT_EQ(m.transfer_time(1, 0, 10, 4), 39.0);
  EXPECT_NO_THROW(validate_for(m, 2));
  EXPECT_THROW(validate_for(m, 3), Error);
}

void expect_invalid_model(const CostModel& m, const std::string& fragment) {
  try {
    validate(m);
    FAIL() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CostModel, RejectsNanNegativeAndBadPorts) {
  CostModel m;
  m.alpha = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_model(m, "alpha is NaN");
  m = CostModel{};
  m.beta = -1;
  expect_invalid_model(m, "beta is negative");
  m = CostModel{};
  m.gamma = std::numeric_limits<double>::infinity();
  expect_invalid_model(m, "gamma is infinite");
  m = CostModel{};
  m.ports = 0;
  expect_invalid_model(m, "ports must be at least 1");
  m = CostModel{};
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 1};
  m.pair_beta = {0, 1, 1, 0};
  expect_invalid_model(m, "pair matrices");
}

// docs/errors.md: the pair-matrix checks of validate() and validate_for().
TEST(CostModel, RejectsInconsistentPairMatrices) {
  CostModel m;
  m.pair_nranks = -1;
  expect_invalid_model(m, "model pair matrices have negative size");
  m = CostModel{};
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 1};
  m.pair_beta = {0, 1, 1, 0};
  expect_invalid_model(m, "model pair matrices must both be 2 x 2 (4 cells), got 3 and 4");
  m.pair_alpha = {0, 1, 1, 0};
  validate(m);  // consistent now
  try {
    validate_for(m, 3);
    FAIL() << "a 2 x 2 model accepted for 3 ranks";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(
        std::string(e.what()).find("model pair matrices are 2 x 2 but the collective has 3 ranks"),
        std::string::npos)
        << e.what();
  }
}

TEST(CostModelJson, RoundTrip) {
  CostModel m;
  m.alpha = 1.5e-6;
  m.beta = 2e-10;
  m.gamma = 3;
  m.copy = 0.25;
  m.ports = 2;
  m.duplex = Duplex::kHalf;
  m.overlap = true;
  m.per_byte = true;
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 2, 0};
  m.pair_beta = {0, 3, 4, 0};
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  m.shared_send_min_bytes = 16384;
  EXPECT_NE(cost_model_to_json(m).find("\"shared_send_min_bytes\": 16384"), std::string::npos);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  EXPECT_FALSE(parse_cost_model_json("{}").shared_send_min_bytes.has_value());
  m.send_gap = 2.5e-7;
  EXPECT_NE(cost_model_to_json(m).find("\"send_gap\": 2.5e-07"), std::string::npos)
      << cost_model_to_json(m);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  EXPECT_FALSE(parse_cost_model_json("{}").send_gap.has_value());
  m.receive_gap = 3.5e-7;
  EXPECT_NE(cost_model_to_json(m).find("\"receive_gap\": 3.5e-07"), std::string::npos)
      << cost_model_to_json(m);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  EXPECT_FALSE(parse_cost_model_json("{}").receive_gap.has_value());
  // Provenance is read and checked, and changes nothing in the model.
  EXPECT_EQ(parse_cost_model_json("{\"alpha\": 3, \"calibrated_ranks\": 4, \"source\": \"x\"}"),
            parse_cost_model_json("{\"alpha\": 3}"));
}

TEST(CostModelJson, RejectsMalformedFiles) {
  auto expect_code = [](std::string_view text, ErrorCode code, const std::string& fragment) {
    try {
      parse_cost_model_json(text);
      FAIL() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_code("{\"alpha\": 1", ErrorCode::kParse, "not valid JSON");
  expect_code("[1, 2]", ErrorCode::kParse, "JSON object");
  // A number too large for a double (found by fuzz_model_json: nlohmann throws out_of_range).
  expect_code("{\"alpha\": 1e70333}", ErrorCode::kParse, "not valid JSON");
  expect_code("{\"alpah\": 1}", ErrorCode::kParse, "unknown field \"alpah\"");
  expect_code("{\"alpha\": \"fast\"}", ErrorCode::kParse, "alpha must be a number");
  expect_code("{\"alpha\": -1}", ErrorCode::kInvalidArgument, "alpha is negative");
  expect_code("{\"duplex\": \"both\"}", ErrorCode::kParse, "duplex");
  expect_code("{\"ports\": 1.5}", ErrorCode::kParse, "ports must be an integer");
  expect_code("{\"shared_send_min_bytes\": true}", ErrorCode::kParse,
              "model: shared_send_min_bytes must be an integer");
  expect_code("{\"shared_send_min_bytes\": -1}", ErrorCode::kInvalidArgument,
              "model parameter shared_send_min_bytes must be >= 0, got -1");
  expect_code("{\"send_gap\": \"short\"}", ErrorCode::kParse, "send_gap must be a number");
  expect_code("{\"send_gap\": -1e-7}", ErrorCode::kInvalidArgument,
              "model parameter send_gap is negative");
  expect_code("{\"receive_gap\": [1]}", ErrorCode::kParse, "receive_gap must be a number");
  expect_code("{\"receive_gap\": -1e-7}", ErrorCode::kInvalidArgument,
              "model parameter receive_gap is negative");
  expect_code("{\"calibrated_ranks\": 0}", ErrorCode::kParse,
              "model: calibrated_ranks must be a positive integer");
  expect_code("{\"calibrated_ranks\": \"four\"}", ErrorCode::kParse,
              "model: calibrated_ranks must be a positive integer");
  expect_code("{\"pair_alpha\": [[0,1],[1,0]]}", ErrorCode::kInvalidArgument, "given together");
  // docs/errors.md: one line per model-file error not provoked above.
  expect_code("{\"overlap\": 1}", ErrorCode::kParse, "model: overlap must be true or false");
  expect_code("{\"ports\": 0}", ErrorCode::kInvalidArgument,
              "model parameter ports must be in 1..1024, got 0");
  expect_code("{\"pair_alpha\": 5, \"pair_beta\": [[0]]}", ErrorCode::kParse,
              "model: pair_alpha must be an array of rows");
  expect_code("{\"pair_alpha\": [1, 2], \"pair_beta\": [[0]]}", ErrorCode::kParse,
              "model: pair_alpha must be an array of rows");
  expect_code("{\"pair_alpha\": [[0, \"x\"]], \"pair_beta\": [[0]]}", ErrorCode::kParse,
              "model: pair_alpha holds a non-number");
  expect_code("{\"pair_alpha\": [[0]], \"pair_beta\": [[0, 1], [1, 0]]}",
              ErrorCode::kInvalidArgument, "model: pair_alpha and pair_beta differ in size");
  expect_code("{\"pair_alpha\": [[0, 1], [1, 0]], \"pair_beta\": [[0, -1], [1, 0]]}",
              ErrorCode::kInvalidArgument, "model parameter pair_beta[0][1] is negative (-1)");
  expect_code("{\"pair_alpha\": [[0,1],[1]], \"pair_beta\": [[0,1],[1,0]]}",
              ErrorCode::kInvalidArgument, "square");
}

TEST(LowerBound, BcastIsMaxOfLatencyAndBandwidth) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  // p = 8: 3 latencies; bandwidth: every rank receives n.
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 300.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 1000)), m), 1000.0);
  m.ports = 3;  // information reaches 4x as many ranks per latency
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 16, 10)), m), 200.0);
  // Shared sends: the root reaches every rank in one latency (identical sends share its
  // port); a reduction still needs its p - 1 sources to reach one rank through its ports.
  m.ports = 1;
  m.shared_send_min_bytes = 0;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 100.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 300.0);
}

// A gap frees one end's port early. A send gap (CostModel::send_gap): the root of a bcast can
// start all its sends within one latency, so only the fan-in side bounds the latency; a
// reduction's sources still reach one rank through its receive ports. A receive gap
// (receive_gap): a root can take in any number of messages within one latency, so only the
// fan-out side bounds it (a bcast still needs log2(8) = 3 rounds); a reduction has one.
TEST(LowerBound, AGapLeavesOnlyTheOtherSidesLatency) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.send_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 100.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 300.0);
  m.send_gap.reset();
  m.receive_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 300.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 100.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kGather, 8, 10)), m), 100.0);
  // Both gaps: one latency for either.
  m.send_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 100.0);
}

// The port time of either end: the gap plus the data, never more than the whole transfer;
// without a gap, the whole transfer.
TEST(CostModel, PortTimeIsTheGapPlusTheDataAtMostTheTransfer) {
  using PortTime = Time (CostModel::*)(Rank, Rank, Count, std::size_t) const;
  const std::vector<std::pair<std::optional<Time> CostModel::*, PortTime>> ends{
      {&CostModel::send_gap, &CostModel::send_port_time},
      {&CostModel::receive_gap, &CostModel::receive_port_time}};
  for (const auto& [gap, port_time] : ends) {
    CostModel m;
    m.alpha = 100;
    m.beta = 1;
    EXPECT_EQ((m.*port_time)(0, 1, 10, 8), 110.0);
    m.*gap = 5;
    EXPECT_EQ((m.*port_time)(0, 1, 10, 8), 15.0);
    EXPECT_EQ(m.transfer_time(0, 1, 10, 8), 110.0);
    m.*gap = 500;
    EXPECT_EQ((m.*port_time)(0, 1, 10, 8), 110.0);
    EXPECT_EQ((m.*port_time)(0, 1, 0, 8), 0.0);
  }
}

TEST(LowerBound, GathervCountsOnlyNonEmptyBlocks) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  // Two non-root blocks must reach the root: 2 latencies (3 ranks involved), 5 elements.
  const Layout layout(make_spec_v(CollectiveKind::kGatherv, 8, {0, 2, 0, 3, 0, 0, 0, 4}, 7));
  EXPECT_EQ(lower_bound(layout, m), 200.0);
  EXPECT_EQ(lower_bound(Layout(make_spec_v(CollectiveKind::kGatherv, 4, {0, 0, 0, 9}, 3)), m), 0.0);
}

TEST(LowerBound, NoneForNonHomogeneousModels) {
  CostModel m;
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 1, 0};
  m.pair_beta = {0, 1, 1, 0};
  EXPECT_FALSE(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 2, 1)), m).has_value());
}

}  // namespace
}  // namespace optcoll
