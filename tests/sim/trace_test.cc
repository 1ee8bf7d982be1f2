// SPDX-License-Identifier: Apache-2.0
// File: the trace exporters: Chrome JSON parses and holds one X event per op with the
// simulated start and duration; the CSV has one row per op; the SVG is well formed with one
// rect per op.
#include "optcoll/sim/trace.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

struct Case {
  Schedule schedule;
  SimResult result;
};

Case simulated(std::string_view algorithm, CollectiveKind kind, Rank p, Count n,
               std::optional<Time> send_gap = std::nullopt) {
  Case c;
  c.schedule = algorithms::build(algorithm, make_spec(kind, p, n));
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.gamma = 3;
  m.copy = 1;
  m.send_gap = send_gap;
  c.result = simulate(c.schedule, m, {.trace = true});
  return c;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(ChromeTrace, OneCompleteEventPerOpWithSimulatedTimes) {
  const Case c = simulated("allreduce/ring", CollectiveKind::kAllreduce, 4, 8);
  const auto doc = nlohmann::json::parse(chrome_trace_json(c.schedule, c.result, 2.0));
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::size_t complete = 0;
  std::size_t thread_names = 0;
  for (const auto& event : doc["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") {
      EXPECT_EQ(event["args"]["name"], "rank " + std::to_string(event["tid"].get<int>()));
      ++thread_names;
    }
    if (event["ph"] != "X") continue;
    ++complete;
    const auto rank = event["tid"].get<std::size_t>();
    const auto op = event["args"]["op"].get<std::size_t>();
    const OpTiming& t = c.result.timing.at(rank).at(op);
    EXPECT_EQ(event["pid"], 0);
    EXPECT_DOUBLE_EQ(event["ts"].get<double>(), 2.0 * t.start);
    EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 2.0 * (t.end - t.start));
    const Op& o = c.schedule.ranks[rank].ops[op];
    if (is_communication(o.action)) {
      EXPECT_EQ(event["args"]["seq"], o.seq);
      const std::string name = event["name"];
      EXPECT_NE(name.find(std::to_string(peer_of(o.action))), std::string::npos) << name;
    }
  }
  EXPECT_EQ(complete, c.schedule.op_count());
  EXPECT_EQ(thread_names, 4u);
}

TEST(Csv, OneRowPerOp) {
  const Case c = simulated("bcast/binomial", CollectiveKind::kBcast, 5, 10);
  const std::string csv = trace_csv(c.schedule, c.result);
  EXPECT_EQ(csv.rfind("rank,op,kind,peer,count,ready,start,end\n", 0), 0u);
  EXPECT_EQ(count_of(csv, "\n"), c.schedule.op_count() + 1);
  // bcast/binomial p=5: 0->4 first, on [0, 110]; rank 4 receives it as op 0.
  EXPECT_NE(csv.find("4,0,recv,0,10,0,0,110\n"), std::string::npos) << csv;
}

TEST(Svg, EscapeReplacesTheFourMarkupCharacters) {
  EXPECT_EQ(svg_escape("a<b & \"c\"> d'"), "a&lt;b &amp; &quot;c&quot;&gt; d'");
  EXPECT_EQ(svg_escape(""), "");
  EXPECT_EQ(svg_escape("&amp;"), "&amp;amp;");  // not idempotent: escape once
}

TEST(Svg, WellFormedWithOneRectPerOp) {
  for (const Rank p : {4, 7, 100}) {
    const Case c = simulated("allgather/ring", CollectiveKind::kAllgather, p, 3);
    const std::string svg = gantt_svg(c.schedule, c.result, CostModel{}).svg;
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_EQ(count_of(svg, "<rect"), c.schedule.op_count());
    EXPECT_EQ(count_of(svg, "<rect"), count_of(svg, "</rect>"));
    EXPECT_EQ(count_of(svg, "<text"), count_of(svg, "</text>"));
    EXPECT_EQ(count_of(svg, "<title>"), count_of(svg, "</title>"));
    // The critical path is outlined, the axis labelled.
    EXPECT_GE(count_of(svg, "stroke=\"#000000\""), c.result.critical_path.size());
    EXPECT_NE(svg.find("time (model units)"), std::string::npos);
    EXPECT_NE(svg.find("recv-reduce"), std::string::npos);  // legend
  }
}

// Title and axis in one unit: the model's time units for an abstract model, us / ms / s
// for a per-byte one; the caption under the title.
TEST(Svg, TimesInTheModelsUnits) {
  const Schedule s =
      algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 8, 1000));
  const CostModel abstract;
  const SimResult a = simulate(s, abstract, {.trace = true});
  const std::string plain = gantt_svg(s, a, abstract).svg;
  EXPECT_NE(plain.find("time (model units)"), std::string::npos);
  EXPECT_NE(plain.find("makespan " + format_time(a.makespan, abstract) + "<"), std::string::npos)
      << plain;
  const CostModel cluster = reference_cluster_model();
  const SimResult c = simulate(s, cluster, {.trace = true});
  const std::string timed = gantt_svg(s, c, cluster, {.caption = "model: the cluster"}).svg;
  const std::string makespan = format_time(c.makespan, cluster);  // e.g. "42.3 us"
  const std::string unit = makespan.substr(makespan.find(' ') + 1);
  EXPECT_NE(timed.find("makespan " + makespan + "<"), std::string::npos) << timed;
  EXPECT_NE(timed.find("time (" + unit + ")"), std::string::npos) << timed;
  EXPECT_EQ(timed.find("model units"), std::string::npos);
  EXPECT_NE(timed.find(">model: the cluster<"), std::string::npos);
}

// At p = 512 the chart aggregates (bands of ranks, merged ops): a few MB at most, and a file
// rsvg-convert renders.
TEST(Svg, LargeTimelinesAggregate) {
  const CostModel model = reference_cluster_model();
  const Schedule s =
      algorithms::build("allreduce/ring", make_spec(CollectiveKind::kAllreduce, 512, 4096));
  const SimResult r = simulate(s, model, {.trace = true});
  const GanttSvg chart = gantt_svg(s, r, model);
  EXPECT_TRUE(chart.aggregated);
  EXPECT_EQ(chart.band, 4);
  EXPECT_LT(chart.svg.size(), 5'000'000u);
  EXPECT_LT(count_of(chart.svg, "<rect"), s.op_count() / 10);
  EXPECT_NE(chart.svg.find("ranks 508-511"), std::string::npos);
  EXPECT_EQ(
      count_of(chart.svg, "<rect"),
      count_of(chart.svg, "</rect>") + count_of(chart.svg, "fill=\"none\" stroke=\"#000000\""));
  // Small timelines draw every op.
  const Schedule small =
      algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 8, 10));
  EXPECT_FALSE(gantt_svg(small, simulate(small, model, {.trace = true}), model).aggregated);
  if (!std::filesystem::exists("/usr/bin/rsvg-convert")) {
    GTEST_SKIP() << "no /usr/bin/rsvg-convert: the chart's rendering is not checked";
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("optcoll_gantt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "ring512.svg");
    out << chart.svg;
  }
  const std::string command = "/usr/bin/rsvg-convert '" + (dir / "ring512.svg").string() +
                              "' -o '" + (dir / "ring512.png").string() + "'";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command;
  EXPECT_GT(std::filesystem::file_size(dir / "ring512.png"), 0u);
  std::filesystem::remove_all(dir);
}

TEST(Exporters, ShowWhereASendGapReleasedThePort) {
  // scatter/linear, p = 4, 1 element: the root's three sends hold its port for 5 + 1 each
  // ([0, 6], [6, 12], [12, 18]) and arrive 101 after their start.
  const Case c = simulated("scatter/linear", CollectiveKind::kScatter, 4, 1, Time{5});
  std::vector<Time> releases;
  for (std::size_t r = 0; r < c.result.timing.size(); ++r) {
    for (std::size_t i = 0; i < c.result.timing[r].size(); ++i) {
      const OpTiming& t = c.result.timing[r][i];
      if (t.port_release < 0) continue;
      EXPECT_EQ(r, 0u);
      EXPECT_TRUE(std::holds_alternative<Send>(c.schedule.ranks[r].ops[i].action));
      EXPECT_EQ(t.end - t.start, 101);
      releases.push_back(t.port_release);
    }
  }
  EXPECT_EQ(releases, (std::vector<Time>{6, 12, 18}));
  // The SVG: still one rect per op, each released send's bar up to its release (6 of the
  // plot's 1000 px per 113) and a line on to its arrival.
  const std::string svg = gantt_svg(c.schedule, c.result, CostModel{}).svg;
  EXPECT_EQ(count_of(svg, "<rect"), c.schedule.op_count());
  EXPECT_EQ(count_of(svg, "port released at"), 3u);
  EXPECT_NE(svg.find("width=\"53.10\""), std::string::npos) << svg;  // 6 / 113 * 1000
  // The Chrome trace: the release in each of those sends' args.
  const auto doc = nlohmann::json::parse(chrome_trace_json(c.schedule, c.result));
  std::size_t with_release = 0;
  for (const auto& event : doc["traceEvents"]) {
    if (event["args"].contains("port_release")) ++with_release;
  }
  EXPECT_EQ(with_release, 3u);
  // Without a gap, nothing is released early.
  const Case plain = simulated("scatter/linear", CollectiveKind::kScatter, 4, 1);
  EXPECT_EQ(count_of(gantt_svg(plain.schedule, plain.result, CostModel{}).svg, "port released at"),
            0u);
}

TEST(Exporters, NeedTiming) {
  const Schedule s = algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 4, 1));
  const SimResult r = simulate(s, CostModel{});
  EXPECT_THROW(chrome_trace_json(s, r), Error);
  EXPECT_THROW(trace_csv(s, r), Error);
  EXPECT_THROW(gantt_svg(s, r, CostModel{}), Error);
}

// docs/errors.md: the exporters' messages.
TEST(Exporters, ErrorsNameTheProblem) {
  const Schedule s = algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 4, 1));
  auto expect_invalid = [](auto&& call, const std::string& fragment) {
    try {
      call();
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const SimResult untimed = simulate(s, CostModel{});
  expect_invalid([&] { trace_csv(s, untimed); },
                 "trace export needs a SimResult of this schedule computed with "
                 "SimOptions::trace = true");
  SimOptions options;
  options.trace = true;
  const SimResult timed = simulate(s, CostModel{}, options);
  expect_invalid([&] { chrome_trace_json(s, timed, 0.0); },
                 "trace time scale must be positive, got 0");
}

}  // namespace
}  // namespace optcoll
