// SPDX-License-Identifier: Apache-2.0
// File: SVG rendering of line and bar charts.
#include "optcoll/experiments/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace optcoll::experiments {
namespace {

constexpr double kWidth = 960;
constexpr double kHeight = 580;
constexpr double kLeft = 90;
constexpr double kRight = 230;  // room for the legend
constexpr double kTop = 56;
constexpr double kBottom = 76;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kPlotH = kHeight - kTop - kBottom;

// Colour-blind-friendly palette (Okabe-Ito, then darker tones).
constexpr std::array<const char*, 12> kColors{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                              "#E69F00", "#56B4E9", "#000000", "#F0E442",
                                              "#8C564B", "#7F7F7F", "#1B9E77", "#7570B3"};

std::string escape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// An axis maps data values to [0, 1] (log10 when `log`).
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;

  double to_unit(double v) const {
    const double t = log ? std::log10(v) : v;
    return hi > lo ? (t - lo) / (hi - lo) : 0.5;
  }
  std::vector<double> ticks() const {  // tick values in data space
    std::vector<double> out;
    if (log) {
      const int first = static_cast<int>(std::floor(lo));
      const int last = static_cast<int>(std::ceil(hi));
      const int stride = std::max(1, (last - first) / 10);
      for (int e = first; e <= last; e += stride) {
        if (e >= lo - 1e-9 && e <= hi + 1e-9) out.push_back(std::pow(10.0, e));
      }
      return out;
    }
    const double span = hi - lo;
    if (span <= 0) return {lo};
    const double raw = span / 6;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
      if (raw <= m * mag) {
        step = m * mag;
        break;
      }
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
    return out;
  }
};

Axis make_axis(double lo, double hi, bool log) {
  Axis a;
  a.log = log;
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  }
  if (log) {
    lo = std::floor(std::log10(lo));
    hi = std::ceil(std::log10(hi));
    if (hi == lo) hi = lo + 1;
  } else {
    if (lo > 0 && lo < hi * 0.5) lo = 0;  // start at zero when the data is not far from it
    if (hi == lo) hi = lo + 1;
    const double pad = (hi - lo) * 0.05;
    hi += pad;
    if (lo != 0) lo -= pad;
  }
  a.lo = lo;
  a.hi = hi;
  return a;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double mag = std::abs(v);
  if (mag >= 1e5 || mag < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

double px(const Axis& x, double v) { return kLeft + x.to_unit(v) * kPlotW; }
double py(const Axis& y, double v) { return kTop + (1 - y.to_unit(v)) * kPlotH; }

std::string frame(const std::string& title, const std::string& x_label,
                  const std::string& y_label) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"30\" font-size=\"18\" font-weight=\"bold\" "
      "text-anchor=\"middle\">{3}</text>\n",
      kWidth, kHeight, kLeft + kPlotW / 2, escape(title));
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
                     kLeft + kPlotW / 2, kHeight - 20, escape(x_label));
  out += fmt::format(
      "<text x=\"22\" y=\"{0}\" font-size=\"14\" text-anchor=\"middle\" transform=\"rotate(-90 22 "
      "{0})\">{1}</text>\n",
      kTop + kPlotH / 2, escape(y_label));
  return out;
}

std::string y_grid(const Axis& y) {
  std::string out;
  for (const double t : y.ticks()) {
    const double yy = py(y, t);
    out +=
        fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n",
                    kLeft, yy, kLeft + kPlotW, yy);
    out +=
        fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n",
                    kLeft - 8, yy + 4, tick_label(t));
  }
  return out;
}

std::string plot_border() {
  return fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
      kTop, kPlotW, kPlotH);
}

std::string legend(const std::vector<std::string>& names) {
  std::string out;
  const double x = kLeft + kPlotW + 16;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 12 + 20.0 * static_cast<double>(i);
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", x,
                       y - 9, kColors[i % kColors.size()]);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\">{}</text>\n", x + 20, y,
                       escape(names[i]));
  }
  return out;
}

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

}  // namespace

std::string render_svg(const LineChart& chart) {
  double xlo = std::numeric_limits<double>::infinity();
  double xhi = -xlo;
  double ylo = xlo;
  double yhi = -xlo;
  for (const auto& s : chart.series) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(s.x[i], chart.log_x) || !usable(s.y[i], chart.log_y)) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  const Axis x = make_axis(xlo, xhi, chart.log_x);
  const Axis y = make_axis(ylo, yhi, chart.log_y);
  std::string out = frame(chart.title, chart.x_label, chart.y_label);
  out += y_grid(y);
  for (const double t : x.ticks()) {
    const double xx = px(x, t);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e0e0e0\"/>\n", xx,
        kTop, kTop + kPlotH);
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n", xx,
        kTop + kPlotH + 18, tick_label(t));
  }
  for (const auto& [where, label] : chart.markers) {
    if (!usable(where, chart.log_x)) continue;
    const double xx = px(x, where);
    if (xx < kLeft || xx > kLeft + kPlotW) continue;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" "
        "stroke-dasharray=\"5,4\"/>\n"
        "<text x=\"{3:.1f}\" y=\"{4}\" font-size=\"11\" fill=\"#333\">{5}</text>\n",
        xx, kTop, kTop + kPlotH, xx + 4, kTop + 14, escape(label));
  }
  std::vector<std::string> names;
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const auto& s = chart.series[k];
    names.push_back(s.name);
    const char* color = kColors[k % kColors.size()];
    std::string points;
    std::string dots;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(s.x[i], chart.log_x) || !usable(s.y[i], chart.log_y)) continue;
      const double xx = px(x, s.x[i]);
      const double yy = py(y, s.y[i]);
      points += fmt::format("{:.1f},{:.1f} ", xx, yy);
      if (s.x.size() <= 60)
        dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n", xx, yy,
                            color);
    }
    out +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
                    color, points);
    out += dots;
  }
  out += plot_border();
  out += legend(names);
  out += "</svg>\n";
  return out;
}

std::string render_svg(const BarChart& chart) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const auto& g : chart.groups) {
    for (const double v : g.values) {
      if (!usable(v, chart.log_y)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (chart.reference_line && usable(*chart.reference_line, chart.log_y)) {
    lo = std::min(lo, *chart.reference_line);
    hi = std::max(hi, *chart.reference_line);
  }
  if (!chart.log_y) lo = std::min(lo, 0.0);
  const Axis y = make_axis(lo, hi, chart.log_y);
  std::string out = frame(chart.title, "", chart.y_label);
  out += y_grid(y);
  const double group_w =
      chart.groups.empty() ? kPlotW : kPlotW / static_cast<double>(chart.groups.size());
  const double bar_w =
      group_w * 0.8 / static_cast<double>(std::max<std::size_t>(1, chart.series.size()));
  const double base = chart.log_y ? kTop + kPlotH : py(y, 0.0);
  for (std::size_t gi = 0; gi < chart.groups.size(); ++gi) {
    const auto& g = chart.groups[gi];
    const double gx = kLeft + group_w * static_cast<double>(gi) + group_w * 0.1;
    for (std::size_t si = 0; si < g.values.size(); ++si) {
      if (!usable(g.values[si], chart.log_y)) continue;
      const double top = py(y, g.values[si]);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{}: {:g}</title></rect>\n",
          gx + bar_w * static_cast<double>(si), std::min(top, base), bar_w * 0.92,
          std::abs(base - top), kColors[si % kColors.size()],
          escape(si < chart.series.size() ? chart.series[si] : ""), g.values[si]);
    }
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
        gx + group_w * 0.4, kTop + kPlotH + 18, escape(g.label));
  }
  if (chart.reference_line && usable(*chart.reference_line, chart.log_y)) {
    const double yy = py(y, *chart.reference_line);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#000\" "
        "stroke-dasharray=\"6,4\"/>\n",
        kLeft, yy, kLeft + kPlotW, yy);
  }
  out += plot_border();
  out += legend(chart.series);
  out += "</svg>\n";
  return out;
}

}  // namespace optcoll::experiments
