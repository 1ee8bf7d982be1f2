// SPDX-License-Identifier: Apache-2.0
// File: tests of the cost model: arithmetic, validation, model files, lower bounds.
#include "optcoll/model/cost_model.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
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
  expect_invalid_model(m, "model parameter ports must be in 1..1024, got 0");
  m = CostModel{};
  m.pair_nranks = 2;
  m.pair_alpha = {0, 1, 1};
  m.pair_beta = {0, 1, 1, 0};
  expect_invalid_model(m, "pair matrices");
}

// docs/errors.md: the pair-matrix checks of validate() and validate_for().
TEST(CostModel, AHandshakeDelaysMessagesAboveTheEagerLimit) {
  CostModel m;
  m.alpha = 10;
  m.beta = 2;
  m.rendezvous_alpha = 100;
  EXPECT_EQ(m.transfer_time(0, 1, 1000, 8), 10.0 + 2 * 1000);  // rendezvous_bytes unset
  m.rendezvous_bytes = 64;                                     // more than 64 B waits
  EXPECT_EQ(m.transfer_time(0, 1, 8, 8), 10.0 + 2 * 8);        // 64 B: eager
  EXPECT_EQ(m.transfer_time(0, 1, 9, 8), 10.0 + 100 + 2 * 9);  // 72 B: waits
  EXPECT_EQ(m.transfer_time(0, 1, 0, 8), 0.0);
  // From rendezvous_max_bytes on, messages within a node go by another protocol.
  m.rendezvous_max_bytes = 800;
  EXPECT_EQ(m.handshake_time(0, 1, 799), 100.0);
  EXPECT_EQ(m.handshake_time(0, 1, 800), 0.0);
  // Between nodes every message above the limit waits.
  m.placement = Placement{{0, 0, 1}};
  EXPECT_EQ(m.handshake_time(0, 1, 4096), 0.0);
  EXPECT_EQ(m.handshake_time(0, 2, 4096), 100.0);
  EXPECT_EQ(m.handshake_time(0, 2, 64), 0.0);
}

TEST(CostModel, RejectsAnEmptyHandshakeBand) {
  CostModel m;
  m.rendezvous_bytes = 4096;
  m.rendezvous_max_bytes = 4096;
  expect_invalid_model(m, "rendezvous_max_bytes (4096) must exceed rendezvous_bytes (4096)");
  m.rendezvous_max_bytes = 4097;
  EXPECT_NO_THROW(validate(m));
}

// A message that waits for the handshake within a node moves at rendezvous_beta: above
// rendezvous_bytes, below rendezvous_max_bytes; the others, and those between nodes, at
// their own rate. Without rendezvous_bytes it would describe nothing: refused.
TEST(CostModel, MessagesPastTheHandshakeMoveAtTheirOwnRate) {
  CostModel m;  // per element, 1 byte each below
  m.alpha = 10;
  m.beta = 1;
  m.rendezvous_beta = 4;
  expect_invalid_model(m, "rendezvous_beta needs rendezvous_bytes");
  m.rendezvous_bytes = 100;
  m.rendezvous_alpha = 50;
  m.rendezvous_max_bytes = 1000;
  validate(m);
  EXPECT_DOUBLE_EQ(m.transfer_time(0, 1, 100, 1), 10 + 100);           // eager
  EXPECT_DOUBLE_EQ(m.transfer_time(0, 1, 101, 1), 10 + 50 + 4 * 101);  // past the handshake
  EXPECT_DOUBLE_EQ(m.transfer_time(0, 1, 1000, 1), 10 + 1000);         // the channel's
  m.receive_gap = 2;  // the port's share of it likewise
  EXPECT_DOUBLE_EQ(m.receive_port_time(0, 1, 101, 1), 2 + 4 * 101);
  m.placement = Placement{{0, 1}};  // between nodes: the network's rate, with the handshake
  m.inter_beta = 7;
  EXPECT_DOUBLE_EQ(m.transfer_time(0, 1, 101, 1), 10 + 50 + 7 * 101);
}

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
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 16384;
  EXPECT_NE(cost_model_to_json(m).find("\"send_mode\": \"shared\""), std::string::npos);
  EXPECT_NE(cost_model_to_json(m).find("\"send_mode_min_bytes\": 16384"), std::string::npos);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  EXPECT_EQ(parse_cost_model_json("{}").send_mode, SendMode::kPort);
  // The old key reads as shared sends from that size.
  const CostModel old = parse_cost_model_json("{\"shared_send_min_bytes\": 4096}");
  EXPECT_EQ(old.send_mode, SendMode::kShared);
  EXPECT_EQ(old.send_mode_min_bytes, 4096u);
  m.node_beta = 1e-11;
  m.send_mode = SendMode::kReceiver;
  EXPECT_NE(cost_model_to_json(m).find("\"node_beta\": 1e-11"), std::string::npos);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  EXPECT_FALSE(parse_cost_model_json("{}").node_beta.has_value());
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

// The field table (cost_model_fields.def) drives parsing, writing, validation and options:
// every field is written, read back and set from its option text alike.
TEST(ModelFields, EveryFieldRoundTripsThroughFileAndOption) {
  const auto fields = model_fields();
  ASSERT_GE(fields.size(), 14u);
  // A value unlike the unit model's for each kind, as option text.
  auto text_for = [](const ModelFieldInfo& f) -> std::string {
    switch (f.kind) {
      case ModelFieldKind::kTime:
        return "0.375";
      case ModelFieldKind::kInteger:
        return "3";
      case ModelFieldKind::kBytes:  // (the handshake's band must not be empty)
        return f.name == "rendezvous_max_bytes" ? "23456" : "12345";
      case ModelFieldKind::kFlag:
        return "true";
      case ModelFieldKind::kChoice:
        return f.name == "duplex" ? "half" : "receiver";
    }
    return "";
  };
  // The inter-node fields need a placement, which excludes the one-node fields: `all` holds
  // every other field, `nodes` those.
  const auto between_nodes = [](const ModelFieldInfo& f) {
    return f.name.starts_with("inter_") || f.name == "nic_ports";
  };
  CostModel two_nodes;
  two_nodes.placement = block_placement(2, 1);
  // The rate past the handshake needs one (the table sets rendezvous_bytes before it).
  CostModel with_handshake;
  with_handshake.rendezvous_bytes = 100;
  CostModel all;
  CostModel nodes = two_nodes;
  for (const auto& f : fields) {
    const CostModel base = between_nodes(f)              ? two_nodes
                           : f.name == "rendezvous_beta" ? with_handshake
                                                         : CostModel{};
    CostModel one = base;
    set_model_field(one, f.name, text_for(f));
    EXPECT_NE(one, base) << f.name << " did not change the model";
    const std::string json = cost_model_to_json(one);
    EXPECT_NE(json.find("\"" + std::string(f.name) + "\""), std::string::npos) << json;
    EXPECT_EQ(parse_cost_model_json(json), one) << f.name;
    set_model_field(between_nodes(f) ? nodes : all, f.name, text_for(f));
  }
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(all)), all);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(nodes)), nodes);
  EXPECT_EQ(nodes.inter_beta, std::optional<Time>(0.375));
  EXPECT_EQ(nodes.nic_ports, 3);
  EXPECT_EQ(all.alpha, 0.375);
  EXPECT_EQ(all.ports, 3);
  EXPECT_EQ(all.cores, std::optional<int>(3));
  EXPECT_EQ(all.send_mode_min_bytes, 12345u);
  EXPECT_EQ(all.duplex, Duplex::kHalf);
  EXPECT_EQ(all.send_mode, SendMode::kReceiver);
  EXPECT_TRUE(all.overlap);
  EXPECT_EQ(all.node_beta, std::optional<Time>(0.375));
  // Names are unique and found.
  for (const auto& f : fields) EXPECT_EQ(find_model_field(f.name), &f);
  EXPECT_EQ(find_model_field("shared_send_min_bytes"), nullptr);
}

TEST(ModelFields, OptionTextReadsAsItsKind) {
  auto expect_invalid = [](std::string_view name, std::string_view text, const std::string& what) {
    CostModel m;
    try {
      set_model_field(m, name, text);
      FAIL() << name << " accepted '" << text << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_invalid("alpha", "fast", "model parameter alpha must be a number, got 'fast'");
  expect_invalid("alpha", "1e-6x", "must be a number");
  expect_invalid("alpha", "nan", "alpha is NaN");
  expect_invalid("beta", "-1", "beta is negative");
  expect_invalid("ports", "1.5", "model parameter ports must be an integer, got '1.5'");
  expect_invalid("ports", "0", "model parameter ports must be in 1..1024, got 0");
  expect_invalid("cores", "2000000", "must be in 1..1048576");
  expect_invalid("overlap", "yes", "must be true or false");
  expect_invalid("warp_speed", "1", "model: unknown field \"warp_speed\"");
  CostModel m;
  set_model_field(m, "send_gap", "2.5e-7");
  EXPECT_EQ(m.send_gap, std::optional<Time>(2.5e-7));
  set_model_field(m, "overlap", "false");
  EXPECT_FALSE(m.overlap);
}

TEST(ModelFields, SharedProcessorsOrMemoryRefuseATopology) {
  CostModel m;
  EXPECT_FALSE(m.stretches_clock());
  m.node_beta = 1e-11;
  EXPECT_TRUE(m.stretches_clock());
  m.topology = parse_topology("torus:4:bi");
  expect_invalid_model(m,
                       "model parameter node_beta describes processors or memory that all "
                       "ranks share; it cannot be combined with a topology");
  EXPECT_THROW(parse_cost_model_json("{\"node_beta\": 1e-11, \"topology\": \"torus:4:bi\"}"),
               Error);
  EXPECT_THROW(parse_cost_model_json("{\"send_mode\": \"receiver\", \"shared_send_min_bytes\": 1}"),
               Error);
  EXPECT_THROW(parse_cost_model_json("{\"send_mode\": \"both\"}"), Error);
}

// The receiver does a kReceiver send: its sender's port is held only for the send gap.
TEST(ModelFields, ReceiverSendsHoldTheSendersPortOnlyForTheGap) {
  CostModel m;
  m.alpha = 10;
  m.beta = 2;
  m.send_mode = SendMode::kReceiver;
  m.send_mode_min_bytes = 40;
  EXPECT_EQ(m.send_port_time(0, 1, 10, 4), 0.0);      // 40 bytes: the receiver copies
  EXPECT_EQ(m.send_port_time(0, 1, 9, 4), 28.0);      // 36 bytes: below the threshold, a port
  EXPECT_EQ(m.receive_port_time(0, 1, 10, 4), 30.0);  // the receiver's time is the transfer
  m.send_gap = 3;
  EXPECT_EQ(m.send_port_time(0, 1, 10, 4), 3.0);  // posting it costs the gap only
}

// docs/cost_model.md holds the field table as model_fields_table() writes it.
TEST(ModelFields, DocsHoldTheTable) {
  std::ifstream in(std::string(OPTCOLL_SOURCE_DIR) + "/docs/cost_model.md");
  ASSERT_TRUE(in) << "docs/cost_model.md is missing";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(doc.find(model_fields_table()), std::string::npos)
      << "regenerate the table in docs/cost_model.md: optcoll list --model-fields\n"
      << model_fields_table();
}

// Bcast: Chan et al.'s ceil(log2 p)·alpha + n·beta (the root's first sends of all n elements,
// then the last element's spread); with k ports ceil(log_{k+1} p)·alpha + n·beta/k.
TEST(LowerBound, BcastSumsLatencyAndBandwidth) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  // p = 8: 3 latencies and the whole message (bcast/binomial takes 3 * 110 = 330).
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 310.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 1000)), m), 1300.0);
  m.ports = 3;  // information reaches 4x as many ranks per latency, data leave 3x as fast
  EXPECT_DOUBLE_EQ(*lower_bound(Layout(make_spec(CollectiveKind::kBcast, 16, 10)), m),
                   200.0 + 10.0 / 3);
  // Shared sends: the root reaches every rank in one latency (identical sends share its
  // port), but the message still leaves it once: alpha + n·beta. A reduction still needs
  // its p - 1 sources to reach one rank through its ports: 3 latencies and n elements in.
  m.ports = 1;
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 0;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 110.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 310.0);
  // Receiver-driven sends: the root holds no port; every receiver still takes n in.
  m.send_mode = SendMode::kReceiver;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 110.0);
}

// A gap frees one end's port early. A send gap (CostModel::send_gap): the root of a bcast can
// start all its sends within one latency, so only the fan-in side bounds the latency (and
// the message leaves the root once: alpha + n·beta); a reduction's sources still reach one
// rank through its receive ports. A receive gap (receive_gap): a root can take in any number
// of messages within one latency, so only the fan-out side bounds it (a bcast still needs
// log2(8) = 3 rounds and n elements); a reduction or a gather has one latency and its data.
TEST(LowerBound, AGapLeavesOnlyTheOtherSidesLatency) {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.send_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 110.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 310.0);
  m.send_gap.reset();
  m.receive_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 310.0);
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kReduce, 8, 10)), m), 110.0);
  // Gather of 10 per rank: the root takes in 70 elements.
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kGather, 8, 10)), m), 170.0);
  // Both gaps: one latency and the data.
  m.send_gap = 5;
  EXPECT_EQ(lower_bound(Layout(make_spec(CollectiveKind::kBcast, 8, 10)), m), 110.0);
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

TEST(CostModelJson, BaseNamesWhereUnsetFieldsComeFrom) {
  const CostModel reference = reference_cluster_model();
  // Without a base, fields a file does not give come from the caller's base.
  EXPECT_EQ(parse_cost_model_json("{}"), CostModel{});
  EXPECT_EQ(parse_cost_model_json("{}", reference), reference);
  CostModel with_alpha = reference;
  with_alpha.alpha = 7e-6;
  EXPECT_EQ(parse_cost_model_json("{\"alpha\": 7e-6}", reference), with_alpha);
  // The file's own base wins over the caller's.
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"unit\"}", reference), CostModel{});
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"reference\"}"), reference);
  CostModel unit_gamma;
  unit_gamma.gamma = 2;
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"unit\", \"gamma\": 2}", reference), unit_gamma);
  // "threads": the thread backend's default, cores from the file (none given: unset).
  CostModel threads = thread_node_model(4);
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"threads\", \"cores\": 4}", reference), threads);
  threads.cores.reset();
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"threads\"}"), threads);
  EXPECT_NE(threads, reference);
  // "mpi": the MPI backend's one-node default with the channel's default threshold.
  EXPECT_EQ(parse_cost_model_json("{\"base\": \"mpi\", \"cores\": 4}", reference),
            mpi_node_model(4, std::size_t{16} << 10));
  for (const char* bad : {"{\"base\": \"cluster\"}", "{\"base\": 1}"}) {
    try {
      parse_cost_model_json(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse);
      EXPECT_NE(std::string(e.what()).find(
                    "base must be \"unit\", \"reference\", \"threads\" or \"mpi\""),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace optcoll
