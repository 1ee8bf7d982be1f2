// SPDX-License-Identifier: Apache-2.0
// File: the SVG charts: one polyline per series, a legend entry per series, escaped text,
// decade ticks on log axes, and bars that sit on the axis. What makes a chart readable:
// a distinct style per series, coinciding series named, labels that do not overprint
// (bounding boxes estimated as chars * font size * 0.6), a tick at every decade, bars
// visible at the axis's smallest value, a legend inside the canvas.
#include "optcoll/experiments/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <regex>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

namespace optcoll::experiments {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

// The value of attribute `name` in an element's text ("" when absent).
std::string attribute(const std::string& element, const std::string& name) {
  const std::regex re(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(element, m, re) ? m[1].str() : std::string();
}

// Every element <tag ...> (its opening tag) and, for <text>, its content.
std::vector<std::pair<std::string, std::string>> elements(const std::string& svg,
                                                          const std::string& tag) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::regex re("<" + tag + "( [^>]*)>([^<]*)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    out.emplace_back((*it)[1].str(), (*it)[2].str());
  }
  return out;
}

// A text label's estimated box, as its four corners (it may be rotated).
using Corners = std::array<std::array<double, 2>, 4>;

Corners text_box(const std::string& element, const std::string& content) {
  const double x = std::stod(attribute(element, "x"));
  const double y = std::stod(attribute(element, "y"));
  const double font = std::stod(attribute(element, "font-size"));
  const double w = static_cast<double>(content.size()) * font * 0.6;
  const std::string anchor = attribute(element, "text-anchor");
  const double shift = anchor == "end" ? -w : anchor == "middle" ? -w / 2 : 0;
  double angle = 0;
  std::smatch m;
  const std::string transform = attribute(element, "transform");
  if (std::regex_search(transform, m, std::regex("rotate\\(([-0-9.]+)"))) {
    angle = std::stod(m[1].str()) * std::acos(-1.0) / 180;
  }
  const double dx = std::cos(angle);  // along the baseline
  const double dy = std::sin(angle);
  const double nx = dy;  // up from the baseline
  const double ny = -dx;
  Corners c;
  const std::array<std::pair<double, double>, 4> local{
      {{shift, 0}, {shift + w, 0}, {shift + w, font}, {shift, font}}};
  for (std::size_t i = 0; i < 4; ++i) {
    c[i] = {x + local[i].first * dx + local[i].second * nx,
            y + local[i].first * dy + local[i].second * ny};
  }
  return c;
}

// Separating-axis test for two convex quadrilaterals (touching edges do not count).
bool overlap(const Corners& a, const Corners& b) {
  for (const Corners* poly : {&a, &b}) {
    for (std::size_t i = 0; i < 4; ++i) {
      const auto& p = (*poly)[i];
      const auto& q = (*poly)[(i + 1) % 4];
      const double ax = q[1] - p[1];
      const double ay = p[0] - q[0];
      auto range = [&](const Corners& c) {
        double lo = 1e300;
        double hi = -1e300;
        for (const auto& v : c) {
          const double d = v[0] * ax + v[1] * ay;
          lo = std::min(lo, d);
          hi = std::max(hi, d);
        }
        return std::pair{lo, hi};
      };
      const auto [alo, ahi] = range(a);
      const auto [blo, bhi] = range(b);
      const double tolerance = 1e-6 * (std::abs(ax) + std::abs(ay));
      if (ahi <= blo + tolerance || bhi <= alo + tolerance) return false;
    }
  }
  return true;
}

// Every pair of texts with this class attribute overlaps not.
void expect_no_overlap(const std::string& svg, const std::string& cls) {
  std::vector<std::pair<Corners, std::string>> boxes;
  for (const auto& [element, content] : elements(svg, "text")) {
    if (attribute(element, "class") == cls) boxes.emplace_back(text_box(element, content), content);
  }
  EXPECT_GE(boxes.size(), 2u) << cls;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      EXPECT_FALSE(overlap(boxes[i].first, boxes[j].first))
          << cls << ": \"" << boxes[i].second << "\" and \"" << boxes[j].second << "\"";
    }
  }
}

std::set<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::set<std::string> out;
  for (const auto& [element, content] : elements(svg, "text")) {
    if (attribute(element, "class") == cls) out.insert(content);
  }
  return out;
}

LineChart fifteen_series() {
  LineChart chart;
  chart.title = "fifteen";
  chart.log_x = true;
  chart.log_y = true;
  for (int k = 0; k < 15; ++k) {
    Series s{"algorithm " + std::to_string(k), {}, {}};
    for (double x = 8; x <= 1 << 20; x *= 4) {
      s.x.push_back(x);
      s.y.push_back(1e-6 * (1 + k % 5) * x);  // series k and k + 5 coincide
    }
    chart.series.push_back(std::move(s));
  }
  return chart;
}

TEST(SvgChart, EverySeriesHasItsOwnStyle) {
  const std::string svg = render_svg(fifteen_series());
  const auto lines = elements(svg, "polyline");
  ASSERT_EQ(lines.size(), 15u);
  std::set<std::string> colours;
  for (const auto& [element, content] : lines) colours.insert(attribute(element, "stroke"));
  EXPECT_EQ(colours.size(), 15u);
  // The legend: one (colour, dash, marker) per row, all different.
  std::set<std::tuple<std::string, std::string>> swatches;
  for (const auto& [element, content] : elements(svg, "line")) {
    if (element.find("stroke-width=\"1.8\"") == std::string::npos) continue;
    swatches.emplace(attribute(element, "stroke"), attribute(element, "stroke-dasharray"));
  }
  EXPECT_EQ(swatches.size(), 15u);
  std::set<std::string> markers;
  for (const auto& [element, content] : elements(svg, "path"))
    markers.insert(attribute(element, "d"));
  EXPECT_GE(markers.size(), 7u);
}

TEST(SvgChart, CoincidingSeriesAreNamedAndStacked) {
  const std::string svg = render_svg(fifteen_series());
  // Series k + 5 and k + 10 have series k's points: the legend says so.
  EXPECT_NE(svg.find(">algorithm 5 (= algorithm 0)<"), std::string::npos);
  EXPECT_NE(svg.find(">algorithm 14 (= algorithm 4)<"), std::string::npos);
  EXPECT_EQ(svg.find(">algorithm 4 (="), std::string::npos);
  // Each group draws as nested stripes: three widths, the first series widest.
  const auto lines = elements(svg, "polyline");
  const double w0 = std::stod(attribute(lines[0].first, "stroke-width"));
  const double w5 = std::stod(attribute(lines[5].first, "stroke-width"));
  const double w10 = std::stod(attribute(lines[10].first, "stroke-width"));
  EXPECT_GT(w0, w5);
  EXPECT_GT(w5, w10);
  // The points are the data's: equal coordinates for coinciding series.
  EXPECT_EQ(attribute(lines[0].first, "points"), attribute(lines[5].first, "points"));
}

TEST(SvgChart, LogAxesTickEveryDecade) {
  LineChart chart;
  chart.log_x = true;
  chart.log_y = true;
  chart.series.push_back({"a", {1, 1e12}, {1e-7, 3e2}});
  const std::string svg = render_svg(chart);
  const auto x = texts_of_class(svg, "x-tick");
  const auto y = texts_of_class(svg, "y-tick");
  for (const char* decade : {"1", "10", "100", "1000", "10000"}) EXPECT_TRUE(x.contains(decade));
  for (const char* decade :
       {"1e-07", "1e-06", "1e-05", "1e-04", "0.001", "0.01", "0.1", "1", "10", "100", "1000"}) {
    EXPECT_TRUE(y.contains(decade)) << decade;
  }
  // Every decade of x has a grid line even where its label is left out for room: the 13
  // decades 1 .. 1e12 plus the y axis's 11.
  std::size_t grid = 0;
  for (const auto& [element, content] : elements(svg, "line")) {
    if (attribute(element, "stroke") == "#d8d8d8") ++grid;
  }
  EXPECT_EQ(grid, 13u + 11u);
  expect_no_overlap(svg, "x-tick");
  expect_no_overlap(svg, "y-tick");
}

TEST(SvgChart, NarrowLogAxesTickAtTwoAndFive) {
  BarChart chart;
  chart.series = {"a", "b"};
  chart.groups = {{"one", {1.0, 1.3}}, {"two", {2.6, 1.1}}};
  chart.log_y = true;
  chart.reference_line = 1.0;
  const std::string svg = render_svg(chart);
  const auto y = texts_of_class(svg, "y-tick");
  for (const char* tick : {"1", "2"}) EXPECT_TRUE(y.contains(tick)) << tick;
  EXPECT_TRUE(y.contains("0.5") || y.contains("5")) << svg;
}

TEST(SvgChart, BarsAtTheSmallestValueAreVisible) {
  BarChart chart;
  chart.series = {"optimal", "linear"};
  chart.groups = {{"same", {1.0, 4.0}}, {"spikes", {1.0, 1.0}}};
  chart.log_y = true;
  chart.reference_line = 1.0;
  const std::string svg = render_svg(chart);
  std::size_t at_one = 0;
  for (const auto& [element, content] : elements(svg, "rect")) {
    if (attribute(element, "fill") == "white" || attribute(element, "fill") == "none") continue;
    const std::string title = svg.substr(svg.find(element) + element.size(), 40);
    if (title.find(": 1</title>") == std::string::npos) continue;
    ++at_one;
    EXPECT_GE(std::stod(attribute(element, "height")), 10.0) << element;
  }
  EXPECT_EQ(at_one, 3u);
}

TEST(SvgChart, CrowdedLabelsDoNotOverlap) {
  BarChart bars;
  bars.series = {"a", "b", "c"};
  for (int i = 0; i < 24; ++i) {
    bars.groups.push_back({"a long group label " + std::to_string(i), {1.0 + i, 2.0, 3.0}});
  }
  expect_no_overlap(render_svg(bars), "x-tick");
  // Crossover markers a few pixels apart.
  LineChart lines;
  lines.log_x = true;
  lines.series.push_back({"a", {1, 1e6}, {1, 2}});
  for (const double at : {1000.0, 1100.0, 1200.0, 1300.0, 9e5}) {
    lines.markers.emplace_back(at, "bucket-allgather");
  }
  const std::string svg = render_svg(lines);
  expect_no_overlap(svg, "marker-label");
  // Inside the canvas.
  const double width = std::stod(attribute(elements(svg, "svg")[0].first, "width"));
  for (const auto& [element, content] : elements(svg, "text")) {
    if (attribute(element, "class") != "marker-label") continue;
    const Corners box = text_box(element, content);
    EXPECT_GE(box[0][0], 0.0);
    EXPECT_LE(box[1][0], width);
  }
}

TEST(SvgChart, LegendFitsItsNames) {
  LineChart chart;
  chart.caption = "model: the reference cluster model";
  const std::string name = "prop6, Fibonacci tie rule, highest machine index (d = c)";
  chart.series.push_back({name, {1, 2}, {1, 2}});
  const std::string svg = render_svg(chart);
  const double width = std::stod(attribute(elements(svg, "svg")[0].first, "width"));
  bool found = false;
  for (const auto& [element, content] : elements(svg, "text")) {
    if (content != name) continue;
    found = true;
    EXPECT_LE(text_box(element, content)[1][0], width);
  }
  EXPECT_TRUE(found);
  EXPECT_NE(svg.find(">model: the reference cluster model<"), std::string::npos);
}

TEST(SvgChart, LineChartHasASeriesPerPolylineAndALegend) {
  LineChart chart;
  chart.title = "a < b & c";
  chart.x_label = "bytes";
  chart.y_label = "seconds";
  chart.log_x = true;
  chart.log_y = true;
  chart.series.push_back({"ring", {8, 1024, 1 << 20}, {1e-6, 1e-5, 1e-3}});
  chart.series.push_back({"binomial", {8, 1024, 1 << 20}, {5e-7, 2e-5, 4e-3}});
  chart.series.push_back({"broken", {8, 16}, {NAN, -1}});  // nothing usable on a log axis
  chart.markers.push_back({4096, "crossover"});
  const std::string svg = render_svg(chart);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_NE(svg.find(">ring<"), std::string::npos);
  EXPECT_NE(svg.find(">binomial<"), std::string::npos);
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_EQ(svg.find("a < b"), std::string::npos);
  EXPECT_NE(svg.find(">1e+06<"), std::string::npos);  // a decade tick on the x axis
  EXPECT_NE(svg.find(">crossover<"), std::string::npos);
  // A marker per point (the broken series has none) and one per legend row.
  EXPECT_EQ(count(svg, "class=\"pt\""), 6u + 3u);
}

TEST(SvgChart, BarChartDrawsOneRectPerValue) {
  BarChart chart;
  chart.title = "cost / lower bound";
  chart.y_label = "ratio";
  chart.series = {"linear", "binomial", "optimal"};
  chart.groups = {{"same", {2.0, 1.1, 1.0}}, {"spikes", {3.5, 1.4, 1.2}}};
  chart.reference_line = 1.0;
  const std::string svg = render_svg(chart);
  // 1 background + 1 plot border + 3 legend swatches + 6 bars.
  EXPECT_EQ(count(svg, "<rect"), 11u);
  EXPECT_NE(svg.find(">spikes<"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"6,4\""), std::string::npos);  // the reference line
}

}  // namespace
}  // namespace optcoll::experiments
