// SPDX-License-Identifier: Apache-2.0
// File: small SVG charts for the experiments: line charts (linear or log axes) and grouped
// bar charts, with a title, a caption (e.g. the model behind the numbers), axis labels, ticks,
// a grid and a legend sized to its names. Self-contained SVG 1.1 text that any browser shows.
// Every series of a chart has its own colour, dash pattern and marker; series whose points
// all coincide are drawn as nested stripes and named together in the legend. Log axes tick
// every decade (and 2 and 5 within it when the axis spans under two decades).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace optcoll::experiments {

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;  // same length as x; non-finite points are skipped
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::vector<Series> series;
  // Optional vertical marker lines (e.g. crossover points), with labels.
  std::vector<std::pair<double, std::string>> markers;
  std::string caption;  // a line under the title, e.g. "model: ..."; none when empty
};

struct BarGroup {
  std::string label;           // the category under the group
  std::vector<double> values;  // one per series name, in order
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> series;  // legend names
  std::vector<BarGroup> groups;
  bool log_y = false;
  std::optional<double> reference_line;  // e.g. 1.0 = the lower bound
  std::string caption;                   // a line under the title; none when empty
};

std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);

}  // namespace optcoll::experiments
