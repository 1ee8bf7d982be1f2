// SPDX-License-Identifier: Apache-2.0
// File: schedule text and JSON formats: exact round trips, and clear errors for malformed
// or truncated files.
#include "optcoll/schedule/io/io.h"

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

class RegistryRoundTrip : public ::testing::TestWithParam<testing::RegistryCase> {};

TEST_P(RegistryRoundTrip, TextAndJsonAreFixedPoints) {
  const auto& c = GetParam();
  const Schedule s = algorithms::build(*c.algorithm, c.spec);
  const std::string text = io::to_text(s);
  const Schedule from_text = io::parse_text(text);
  EXPECT_EQ(from_text, s);
  EXPECT_EQ(io::to_text(from_text), text);
  const std::string json = io::to_json(s);
  const Schedule from_json = io::parse_json(json);
  EXPECT_EQ(from_json, s);
  EXPECT_EQ(io::to_json(from_json), json);
  EXPECT_EQ(io::parse_schedule(json), s);
  EXPECT_EQ(io::parse_schedule(text), s);
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryRoundTrip,
                         ::testing::ValuesIn(testing::registered_cases({1, 2, 5, 8})),
                         testing::case_name);

Schedule small_schedule() {
  return algorithms::build("gatherv/binomial",
                           make_spec_v(CollectiveKind::kGatherv, 5, {1, 2, 0, 3, 1}, 2));
}

void expect_parse_error(const std::string& text, ErrorCode code, const std::string& fragment) {
  try {
    io::parse_schedule(text);
    FAIL() << "accepted:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

TEST(TextFormat, RejectsMalformedInputWithLineNumbers) {
  const std::string good = io::to_text(small_schedule());
  expect_parse_error("", ErrorCode::kParse, "end of file");
  expect_parse_error("hello\n", ErrorCode::kParse, "line 1: expected 'optcoll-schedule 1'");
  expect_parse_error(replace_once(good, "optcoll-schedule 1", "optcoll-schedule 7"),
                     ErrorCode::kParse, "version 7 is not supported");
  expect_parse_error(good.substr(0, good.size() / 2), ErrorCode::kParse, "");  // truncated
  expect_parse_error(replace_once(good, "end\n", ""), ErrorCode::kParse, "truncated");
  expect_parse_error(replace_once(good, "collective gatherv", "collective gathervv"),
                     ErrorCode::kParse, "unknown collective 'gathervv'");
  expect_parse_error(replace_once(good, "nranks 5", "nranks five"), ErrorCode::kParse,
                     "line 4: expected an integer for nranks, got 'five'");
  expect_parse_error(replace_once(good, "counts 1 2 0 3 1", "counts 1 2 0 3"),
                     ErrorCode::kInvalidArgument, "gatherv needs 5 counts");
  expect_parse_error(replace_once(good, "root 2", "root 9"), ErrorCode::kInvalidArgument,
                     "root 9 out of range");
  expect_parse_error(replace_once(good, "0 send 4 seq 0 in[0:+1]", "0 send 4 seq 0 in[0:1]"),
                     ErrorCode::kParse, "expected a slice");
  expect_parse_error(replace_once(good, "0 send 4 seq 0 in[0:+1]", "0 sned 4 seq 0 in[0:+1]"),
                     ErrorCode::kParse, "unknown op 'sned'");
  expect_parse_error(replace_once(good, "0 send 4 seq 0 in[0:+1]", "3 send 4 seq 0 in[0:+1]"),
                     ErrorCode::kParse, "expected op index 0");
  expect_parse_error(replace_once(good, "0 send 4 seq 0 in[0:+1]", "0 send 4 tag 0 in[0:+1]"),
                     ErrorCode::kParse, "expected 'seq'");
  expect_parse_error(replace_once(good, "0 send 4 seq 0 in[0:+1]", "0 send 4 seq 0 heap[0:+1]"),
                     ErrorCode::kParse, "unknown buffer 'heap'");
  expect_parse_error(replace_once(good, "after 0", "before 0"), ErrorCode::kParse,
                     "expected 'after");
  expect_parse_error(good + "extra\n", ErrorCode::kParse, "after 'end'");
  expect_parse_error(replace_once(good, "rank 1 scratch 0", "rank 3 scratch 0"), ErrorCode::kParse,
                     "rank 1");
}

// docs/errors.md: each text-format error not provoked above, with its line number.
TEST(TextFormat, RejectsEachMalformedConstruct) {
  const std::string good = io::to_text(small_schedule());
  const std::string recv = "0 recv 3 seq 0 out[3:+3]";
  expect_parse_error(replace_once(good, "collective gatherv", "collective"), ErrorCode::kParse,
                     "line 3: expected 'collective <value>'");
  expect_parse_error(replace_once(good, "algorithm gatherv/binomial", "algo x"), ErrorCode::kParse,
                     "line 2: expected 'algorithm <value>'");
  expect_parse_error(replace_once(good, "commutative true", "commutative"), ErrorCode::kParse,
                     "expected 'commutative true|false'");
  expect_parse_error(replace_once(good, "commutative true", "commutative yes"), ErrorCode::kParse,
                     "commutative must be 'true' or 'false', got 'yes'");
  expect_parse_error(replace_once(good, "elem_bytes 4", "elem_bytes 0"), ErrorCode::kParse,
                     "elem_bytes 0 out of range [1, 4096]");
  expect_parse_error(replace_once(good, "elem_bytes 4", "elembytes 4"), ErrorCode::kParse,
                     "line 9: expected 'elem_bytes <value>'");
  expect_parse_error(replace_once(good, "commutative true", "commutative true\nreproducible maybe"),
                     ErrorCode::kParse, "reproducible must be 'true' or 'false', got 'maybe'");
  // A gatherv combines nothing: the flag is read, then the spec is refused.
  expect_parse_error(replace_once(good, "commutative true", "commutative true\nreproducible true"),
                     ErrorCode::kInvalidArgument,
                     "gatherv combines nothing: 'reproducible' applies to reductions only");
  expect_parse_error(replace_once(good, "tree 2", "tree 2 3"), ErrorCode::kParse,
                     "line 10: expected 'tree <root>'");
  expect_parse_error(replace_once(good, "children 4 0", "children 4"), ErrorCode::kParse,
                     "expected 'children <rank> <child>...'");
  expect_parse_error(replace_once(good, "children 4 0", "children 2 0"), ErrorCode::kParse,
                     "children of rank 2 listed twice");
  expect_parse_error(replace_once(good, "rank 0 scratch 0", "rank 0 scratch"), ErrorCode::kParse,
                     "expected 'rank 0 scratch <count>'");
  expect_parse_error(replace_once(good, "rank 0 scratch 0", "rank 1 scratch 0"), ErrorCode::kParse,
                     "expected the program of rank 0 next");
  expect_parse_error(replace_once(good, "0 send 2 seq 0 in[0:+2]", "0"), ErrorCode::kParse,
                     "expected an op '<index> <kind> ...'");
  expect_parse_error(replace_once(good, recv, "0 recv 3 seq"), ErrorCode::kParse,
                     "op 'recv' is missing operands");
  expect_parse_error(replace_once(good, recv, "0 recvreduce 3 seq 0 out[3:+3] middle"),
                     ErrorCode::kParse, "expected 'left' or 'right', got 'middle'");
  expect_parse_error(replace_once(good, recv, "0 recv 3 seq 0 out[3:+3] 7"), ErrorCode::kParse,
                     "expected 'after <op>...' or the end of the line, got '7'");
}

TEST(TextFormat, WritingRejectsNamesThatAreNotOneWord) {
  Schedule s = small_schedule();
  s.algorithm = "gatherv binomial";
  try {
    io::to_text(s);
    FAIL() << "accepted an algorithm name with a space";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("algorithm name 'gatherv binomial' must be one word"),
              std::string::npos)
        << e.what();
  }
  s = small_schedule();
  s.params = "k=2 #";
  try {
    io::to_text(s);
    FAIL() << "accepted params with a space";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("schedule params 'k=2 #' must be one word"),
              std::string::npos)
        << e.what();
  }
}

TEST(TextFormat, ParamsRoundTrip) {
  Schedule s = small_schedule();
  s.params = "segment=8192,radix=4";
  EXPECT_EQ(io::parse_text(io::to_text(s)), s);
  EXPECT_EQ(io::parse_json(io::to_json(s)), s);
  EXPECT_NE(io::to_text(s).find("\nparams segment=8192,radix=4\n"), std::string::npos);
  s.params = "two words";
  EXPECT_THROW(io::to_text(s), Error);
}

// An alltoallv of one rank's row and column (CollectiveSpec::counts_of) keeps its form in
// both formats; without the field its 2p counts would not be a p x p matrix.
TEST(TextFormat, RowAndColumnOfOneRankRoundTrip) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::kAlltoallv;
  spec.nranks = 3;
  spec.counts = {1, 2, 3, 4, 2, 0};
  spec.counts_of = 1;
  const Schedule s = algorithms::build("alltoallv/pairwise", spec);
  const std::string text = io::to_text(s);
  EXPECT_NE(text.find("\ncounts 1 2 3 4 2 0\ncounts_of 1\n"), std::string::npos) << text;
  EXPECT_EQ(io::parse_text(text), s);
  EXPECT_EQ(io::parse_json(io::to_json(s)), s);
  expect_parse_error(replace_once(text, "counts_of 1\n", ""), ErrorCode::kInvalidArgument,
                     "needs 9 counts");
  expect_parse_error(replace_once(text, "counts_of 1\n", "counts_of 1 2\n"), ErrorCode::kParse,
                     "expected 'counts_of <rank>'");
}

// Release times (Op::not_before) survive both formats exactly, integral or not.
TEST(TextFormat, ReleaseTimesRoundTrip) {
  Schedule s = small_schedule();
  s.ranks[0].ops[0].not_before = 7;
  s.ranks[4].ops.back().not_before = 2.5e-6;
  const std::string text = io::to_text(s);
  EXPECT_NE(text.find("\n0 send 4 seq 0 in[0:+1] not_before 7\n"), std::string::npos) << text;
  EXPECT_EQ(io::parse_text(text), s);
  EXPECT_EQ(io::to_text(io::parse_text(text)), text);
  const std::string json = io::to_json(s);
  EXPECT_NE(json.find("\"not_before\":7"), std::string::npos) << json;
  EXPECT_EQ(io::parse_json(json), s);
  EXPECT_EQ(io::to_json(io::parse_json(json)), json);
  const std::string good = io::to_text(small_schedule());
  const std::string send = "0 send 4 seq 0 in[0:+1]";
  for (const char* bad : {"-1", "x", "inf", "nan", "1e999"}) {
    expect_parse_error(replace_once(good, send, send + " not_before " + bad), ErrorCode::kParse,
                       std::string("expected a finite time >= 0 for not_before, got '") + bad);
  }
  expect_parse_error(replace_once(good, send, send + " not_before"), ErrorCode::kParse,
                     "expected a time after 'not_before'");
  // The release time comes before the dependencies.
  expect_parse_error(replace_once(good, "2 send 2 seq 0 scratch[0:+1] after 0",
                                  "2 send 2 seq 0 scratch[0:+1] after 0 not_before 3"),
                     ErrorCode::kParse, "expected an integer for a dependency, got 'not_before'");
  const std::string json_good = io::to_json(small_schedule());
  const std::string json_send = "{\"op\":\"send\",\"peer\":4,\"seq\":0";
  for (const char* bad : {"-1", "\"3\"", "true"}) {
    expect_parse_error(
        replace_once(json_good, json_send, json_send + ",\"not_before\":" + std::string(bad)),
        ErrorCode::kParse, "\"not_before\" must be a finite time >= 0");
  }
}

TEST(TextFormat, CommentsAndBlankLinesAreIgnored) {
  const Schedule s = small_schedule();
  std::string text = io::to_text(s);
  text = "# a comment\n\n" + replace_once(text, "nranks 5\n", "nranks 5   # five ranks\n\n");
  EXPECT_EQ(io::parse_text(text), s);
}

TEST(JsonFormat, RejectsMalformedInput) {
  const std::string good = io::to_json(small_schedule());
  expect_parse_error("{", ErrorCode::kParse, "malformed");
  expect_parse_error(good.substr(0, good.size() - 10), ErrorCode::kParse, "malformed");
  // A number too large for a double (found by fuzz_schedule_json).
  expect_parse_error(replace_once(good, "\"count\":", "\"x\":6E66666666,\"count\":"),
                     ErrorCode::kParse, "malformed");
  expect_parse_error(replace_once(good, "\"format\":\"optcoll-schedule\"", "\"format\":\"x\""),
                     ErrorCode::kParse, "format");
  expect_parse_error(replace_once(good, "\"op\":\"send\"", "\"op\":\"sned\""), ErrorCode::kParse,
                     "unknown op \"sned\"");
  expect_parse_error(replace_once(good, "\"nranks\":5", "\"nranks\":-5"), ErrorCode::kParse,
                     "out of range");
  expect_parse_error(replace_once(good, "[\"in\",0,1]", "[\"in\",0]"), ErrorCode::kParse,
                     "expected a slice");
  expect_parse_error(replace_once(good, "\"ranks\":[", "\"rankz\":["), ErrorCode::kParse,
                     "missing field \"ranks\"");
}

// docs/errors.md: each JSON-format error not provoked above.
TEST(JsonFormat, RejectsEachMalformedField) {
  const std::string good = io::to_json(small_schedule());
  const std::string recv = "{\"dst\":[\"out\",3,3],\"op\":\"recv\",\"peer\":3,\"seq\":0}";
  auto bad = [&](const std::string& from, const std::string& to, const std::string& fragment) {
    expect_parse_error(replace_once(good, from, to), ErrorCode::kParse, fragment);
  };
  try {
    io::parse_json("[1, 2]");
    FAIL() << "accepted a JSON array";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find("schedule JSON document: expected an object"),
              std::string::npos)
        << e.what();
  }
  bad("\"version\":1", "\"version\":2",
      "format version 2 is not supported (this build reads version 1)");
  bad("\"version\":1", "\"version\":\"1\"", "version: expected an integer");
  bad("\"algorithm\":\"gatherv/binomial\"", "\"algorithm\":7", "\"algorithm\" must be a string");
  bad("\"algorithm\":", "\"params\":3,\"algorithm\":", "\"params\" must be a string");
  bad("\"collective\":\"gatherv\"", "\"collective\":\"gathervv\"",
      "\"collective\" names no known collective");
  bad("\"counts\":[1,2,0,3,1]", "\"counts\":5", "\"counts\" must be an array");
  bad("\"commutative\":true", "\"commutative\":1", "\"commutative\" must be true or false");
  bad("\"commutative\":true", "\"commutative\":true,\"reproducible\":3",
      "\"reproducible\" must be true or false");
  bad("\"children\":[[],", "\"children\":[", "schedule JSON tree: \"children\" must hold one list");
  bad("\"children\":[[],", "\"children\":[7,", "\"children\" entries must be arrays");
  bad("],\"scratch\":2}]", "],\"scratch\":2},{\"ops\":[],\"scratch\":0}]",
      "\"ranks\" must hold 5 rank programs");
  bad("{\"ops\":[{\"op\":\"send\",\"peer\":4", "{\"ops\":7,\"o\":[{\"op\":\"send\",\"peer\":4",
      "schedule JSON rank 0: \"ops\" must be an array");
  bad(recv, "{\"dst\":[\"out\",3,3],\"op\":5,\"peer\":3,\"seq\":0}", "\"op\" must be a string");
  bad(recv, "{\"dst\":[\"heap\",3,3],\"op\":\"recv\",\"peer\":3,\"seq\":0}",
      "unknown buffer \"heap\"");
  bad(recv,
      "{\"dst\":[\"out\",3,3],\"op\":\"recvreduce\",\"incoming\":\"up\",\"peer\":3,"
      "\"seq\":0}",
      "rank 2 op 0 incoming: expected \"left\" or \"right\"");
  bad(recv, "{\"dst\":[\"out\",3,3],\"op\":\"recv\",\"peer\":3,\"seq\":0,\"after\":0}",
      "\"after\" must be an array");
}

TEST(DotFormat, HasOneNodePerOpAndOneDashedEdgePerMessage) {
  const Schedule s = small_schedule();
  const std::string dot = io::to_dot(s);
  std::size_t nodes = 0;
  std::size_t messages = 0;
  for (std::size_t pos = 0; (pos = dot.find("[label=\"", pos)) != std::string::npos; ++pos) ++nodes;
  for (std::size_t pos = 0; (pos = dot.find("style=dashed", pos)) != std::string::npos; ++pos)
    ++messages;
  EXPECT_EQ(nodes, s.op_count());
  std::size_t sends = 0;
  for (const auto& program : s.ranks) {
    for (const auto& op : program.ops) sends += std::holds_alternative<Send>(op.action) ? 1 : 0;
  }
  EXPECT_EQ(messages, sends);
}

}  // namespace
}  // namespace optcoll
