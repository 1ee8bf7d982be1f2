// SPDX-License-Identifier: Apache-2.0
// File: the SVG charts: one polyline per series, a legend entry per series, escaped text,
// decade ticks on log axes, and bars that sit on the axis.
#include "optcoll/experiments/svg_chart.h"

#include <cmath>

#include <gtest/gtest.h>

namespace optcoll::experiments {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
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
  EXPECT_EQ(count(svg, "<circle"), 6u);  // the broken series draws no points
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
