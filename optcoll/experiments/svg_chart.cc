// SPDX-License-Identifier: Apache-2.0
// File: SVG rendering of line and bar charts.
#include "optcoll/experiments/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "optcoll/sim/trace.h"

namespace optcoll::experiments {
namespace {

constexpr double kLeft = 90;
constexpr double kPlotW = 640;
constexpr double kPlotH = 448;
constexpr double kTitleY = 28;
constexpr double kCaptionY = 48;
constexpr double kTopPlain = 56;    // the plot's top without a caption
constexpr double kTopCaption = 66;  // and with one
constexpr double kBottom = 76;      // tick labels and the x axis label
constexpr double kFont = 12;        // tick labels, legend, marker labels
constexpr double kCharWidth = 0.6;  // estimated glyph width, in font sizes
constexpr double kLabelGap = 4;     // least space between two labels

// Sixteen colours that stay apart on white (no two tones of one hue side by side).
constexpr std::array<const char*, 16> kColors{
    "#4363d8", "#e6194b", "#3cb44b", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324",
    "#469990", "#800000", "#808000", "#000075", "#a9a9a9", "#000000", "#e6ab02", "#ff7fa8"};
// Dash patterns (SVG stroke-dasharray; "" = solid).
constexpr std::array<const char*, 4> kDashes{"", "8,3", "2,2", "10,3,2,3"};
// Marker shapes as SVG path data around (0, 0), about 7 px across; drawn hollow so that
// markers at one point show each other.
constexpr std::array<const char*, 7> kMarkers{
    "M-3.5,0a3.5,3.5 0 1,0 7,0a3.5,3.5 0 1,0 -7,0z",  // circle
    "M-3,-3h6v6h-6z",                                 // square
    "M0,-4L3.6,2.5H-3.6z",                            // triangle
    "M0,-4.2L4.2,0L0,4.2L-4.2,0z",                    // diamond
    "M0,4L3.6,-2.5H-3.6z",                            // triangle down
    "M-3,-3L3,3M-3,3L3,-3",                           // cross
    "M-4,0H4M0,-4V4"};                                // plus

struct Style {
  const char* color;
  const char* dash;
  const char* marker;
};

// Series k's style: 16 colours, then the same colours with the next dash pattern.
Style style_of(std::size_t k) {
  return {kColors[k % kColors.size()], kDashes[(k + k / kColors.size()) % kDashes.size()],
          kMarkers[k % kMarkers.size()]};
}

double text_width(const std::string& text, double font) {
  return static_cast<double>(text.size()) * font * kCharWidth;
}

// An axis maps data values to [0, 1] (log10 when `log`; lo and hi are then exponents).
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;

  double to_unit(double v) const {
    const double t = log ? std::log10(v) : v;
    return hi > lo ? (t - lo) / (hi - lo) : 0.5;
  }
};

struct Tick {
  double value;
  bool major;  // decades on a log axis, every tick on a linear one
};

// The 1-2-5 steps of a decade, as exponents above it.
constexpr std::array<double, 3> kSubDecade{0.0, 0.30102999566398120, 0.69897000433601880};

bool narrow_log(double lo, double hi) { return hi - lo < 2 + 1e-9; }

std::vector<Tick> ticks_of(const Axis& a) {
  std::vector<Tick> out;
  if (a.log) {
    const bool with_sub = narrow_log(a.lo, a.hi);
    for (int e = static_cast<int>(std::floor(a.lo)); e <= static_cast<int>(std::ceil(a.hi)); ++e) {
      for (const double sub : kSubDecade) {
        if (sub > 0 && !with_sub) continue;
        const double exponent = e + sub;
        if (exponent < a.lo - 1e-9 || exponent > a.hi + 1e-9) continue;
        out.push_back({std::pow(10.0, exponent), sub == 0});
      }
    }
    return out;
  }
  const double span = a.hi - a.lo;
  if (span <= 0) return {{a.lo, true}};
  const double raw = span / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-9; v += step)
    out.push_back({std::abs(v) < step * 1e-9 ? 0.0 : v, true});
  return out;
}

// The largest 1-2-5 value at or below (`strictly`: below) exponent t, as an exponent; and the
// smallest at or above.
double snap_down(double t, bool strictly) {
  const double e = std::floor(t);
  for (auto it = kSubDecade.rbegin(); it != kSubDecade.rend(); ++it) {
    const double c = e + *it;
    if (strictly ? c < t - 1e-9 : c <= t + 1e-9) return c;
  }
  return e - 1 + kSubDecade.back();
}
double snap_up(double t) {
  const double e = std::floor(t);
  for (const double sub : kSubDecade) {
    if (e + sub >= t - 1e-9) return e + sub;
  }
  return e + 1;
}

// `below_data`: the axis starts strictly below the smallest value (bars drawn from the axis
// then have a height even at the smallest value).
Axis make_axis(double lo, double hi, bool log, bool below_data = false) {
  Axis a;
  a.log = log;
  if (!(lo <= hi)) {
    lo = log ? 1 : 0;
    hi = log ? 10 : 1;
  }
  if (log) {
    const double tlo = std::log10(lo);
    const double thi = std::log10(hi);
    a.lo = std::floor(tlo);
    a.hi = std::ceil(thi);
    if (below_data && a.lo >= tlo - 1e-9) a.lo -= 1;
    if (narrow_log(a.lo, a.hi)) {  // under two decades: end at 1-2-5 values near the data
      a.lo = snap_down(tlo, below_data);
      a.hi = snap_up(thi);
    }
    if (a.hi <= a.lo) a.hi = snap_up(a.lo + 0.1);
    return a;
  }
  if (lo > 0 && lo < hi * 0.5) lo = 0;  // start at zero when the data is not far from it
  if (hi == lo) hi = lo + 1;
  const double pad = (hi - lo) * 0.05;
  hi += pad;
  if (lo != 0) lo -= pad;
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

// Where a chart's parts go: the plot's box, the canvas, the legend's column.
struct Frame {
  double top = kTopPlain;
  double bottom = kBottom;  // below the plot
  double legend_w = 0;
  double height() const { return top + kPlotH + bottom; }
  double width() const { return kLeft + kPlotW + legend_w; }
  double x(const Axis& a, double v) const { return kLeft + a.to_unit(v) * kPlotW; }
  double y(const Axis& a, double v) const { return top + (1 - a.to_unit(v)) * kPlotH; }
};

constexpr double kLegendSwatch = 34;  // the line or box before a legend name
constexpr double kLegendRow = 20;

// The legend's width for these names: the swatch, the longest name, margins.
double legend_width(const std::vector<std::string>& names) {
  double longest = 0;
  for (const auto& n : names) longest = std::max(longest, text_width(n, kFont));
  return 16 + kLegendSwatch + 6 + longest + 16;
}

Frame make_frame(const std::string& caption, const std::vector<std::string>& legend_names,
                 double below_plot) {
  Frame f;
  f.top = caption.empty() ? kTopPlain : kTopCaption;
  f.bottom = std::max(kBottom, below_plot);
  f.legend_w = legend_width(legend_names);
  // Enough height for every legend row.
  const double legend_h = 12 + kLegendRow * static_cast<double>(legend_names.size());
  f.bottom = std::max(f.bottom, legend_h - kPlotH + 10);
  return f;
}

std::string header(const Frame& f, const std::string& title, const std::string& caption,
                   const std::string& x_label, const std::string& y_label) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"{3}\" font-size=\"18\" font-weight=\"bold\" "
      "text-anchor=\"middle\">{4}</text>\n",
      f.width(), f.height(), kLeft + kPlotW / 2, kTitleY, svg_escape(title));
  if (!caption.empty()) {
    out += fmt::format(
        "<text class=\"caption\" x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#444\" "
        "text-anchor=\"middle\">{}</text>\n",
        kLeft + kPlotW / 2, kCaptionY, svg_escape(caption));
  }
  if (!x_label.empty()) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{:.0f}\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
        kLeft + kPlotW / 2, f.height() - 20, svg_escape(x_label));
  }
  out += fmt::format(
      "<text x=\"22\" y=\"{0}\" font-size=\"14\" text-anchor=\"middle\" transform=\"rotate(-90 22 "
      "{0})\">{1}</text>\n",
      f.top + kPlotH / 2, svg_escape(y_label));
  return out;
}

// Keeps the ticks whose labels fit: majors first, then the others, each only where its
// label's extent [pos - size/2, pos + size/2] clears every label kept so far.
std::vector<Tick> labelled(const std::vector<Tick>& ticks, const Axis& a, double length,
                           bool by_width) {
  std::vector<std::pair<double, double>> kept;  // extents along the axis
  std::vector<Tick> out;
  for (const bool major : {true, false}) {
    for (const auto& t : ticks) {
      if (t.major != major) continue;
      const double pos = a.to_unit(t.value) * length;
      const double size = by_width ? text_width(tick_label(t.value), kFont) : kFont;
      const double l = pos - size / 2;
      const double r = pos + size / 2;
      const bool clear = std::none_of(kept.begin(), kept.end(), [&](const auto& k) {
        return l < k.second + kLabelGap && r > k.first - kLabelGap;
      });
      if (!clear) continue;
      kept.emplace_back(l, r);
      out.push_back(t);
    }
  }
  return out;
}

std::string y_grid(const Frame& f, const Axis& y) {
  std::string out;
  const auto ticks = ticks_of(y);
  for (const auto& t : ticks) {
    const double yy = f.y(y, t.value);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n",
                       kLeft, yy, kLeft + kPlotW, yy, t.major ? "#d8d8d8" : "#eeeeee");
  }
  for (const auto& t : labelled(ticks, y, kPlotH, false)) {
    out += fmt::format(
        "<text class=\"y-tick\" x=\"{}\" y=\"{:.1f}\" font-size=\"{}\" "
        "text-anchor=\"end\">{}</text>\n",
        kLeft - 8, f.y(y, t.value) + 4, kFont, tick_label(t.value));
  }
  return out;
}

std::string x_grid(const Frame& f, const Axis& x) {
  std::string out;
  const auto ticks = ticks_of(x);
  for (const auto& t : ticks) {
    out +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"/>\n",
                    f.x(x, t.value), f.top, f.top + kPlotH, t.major ? "#d8d8d8" : "#eeeeee");
  }
  for (const auto& t : labelled(ticks, x, kPlotW, true)) {
    out += fmt::format(
        "<text class=\"x-tick\" x=\"{:.1f}\" y=\"{}\" font-size=\"{}\" "
        "text-anchor=\"middle\">{}</text>\n",
        f.x(x, t.value), f.top + kPlotH + 18, kFont, tick_label(t.value));
  }
  return out;
}

std::string plot_border(const Frame& f) {
  return fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
      f.top, kPlotW, kPlotH);
}

std::string marker_at(const Style& s, double x, double y) {
  return fmt::format(
      "<path class=\"pt\" d=\"{}\" transform=\"translate({:.1f},{:.1f})\" fill=\"none\" "
      "stroke=\"{}\" stroke-width=\"1.3\"/>\n",
      s.marker, x, y, s.color);
}

// Line-chart legend rows: the series' line (dash, marker) and its name.
std::string line_legend(const Frame& f, const std::vector<std::string>& names) {
  std::string out;
  const double x = kLeft + kPlotW + 16;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Style s = style_of(i);
    const double y = f.top + 12 + kLegendRow * static_cast<double>(i);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"1.8\" stroke-dasharray=\"{}\"/>\n",
        x, y - 4, x + kLegendSwatch - 4, y - 4, s.color, s.dash);
    out += marker_at(s, x + (kLegendSwatch - 4) / 2, y - 4);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"{}\">{}</text>\n",
                       x + kLegendSwatch + 6, y, kFont, svg_escape(names[i]));
  }
  return out;
}

// Bar-chart legend rows: a box of the series' colour and its name.
std::string bar_legend(const Frame& f, const std::vector<std::string>& names) {
  std::string out;
  const double x = kLeft + kPlotW + 16;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Style s = style_of(i);
    const double y = f.top + 12 + kLegendRow * static_cast<double>(i);
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"10\" fill=\"{}\"{}/>\n",
                       x, y - 9, kLegendSwatch - 4, s.color,
                       i < kColors.size() ? "" : " stroke=\"#000\" stroke-dasharray=\"2,2\"");
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"{}\">{}</text>\n",
                       x + kLegendSwatch + 6, y, kFont, svg_escape(names[i]));
  }
  return out;
}

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

// A series' plotted points.
std::vector<std::pair<double, double>> points_of(const Series& s, const LineChart& chart) {
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (usable(s.x[i], chart.log_x) && usable(s.y[i], chart.log_y))
      out.emplace_back(s.x[i], s.y[i]);
  }
  return out;
}

bool same_points(const std::vector<std::pair<double, double>>& a,
                 const std::vector<std::pair<double, double>>& b) {
  if (a.size() != b.size() || a.empty()) return false;
  auto close = [](double u, double v) {
    return std::abs(u - v) <= 1e-9 * std::max(std::abs(u), std::abs(v));
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!close(a[i].first, b[i].first) || !close(a[i].second, b[i].second)) return false;
  }
  return true;
}

// For each series, the index of the first series with the same points (itself when none).
std::vector<std::size_t> coincidence(
    const std::vector<std::vector<std::pair<double, double>>>& pts) {
  std::vector<std::size_t> first(pts.size());
  for (std::size_t k = 0; k < pts.size(); ++k) {
    first[k] = k;
    for (std::size_t j = 0; j < k; ++j) {
      if (first[j] == j && same_points(pts[j], pts[k])) {
        first[k] = j;
        break;
      }
    }
  }
  return first;
}

// Marker-line labels, left to right, each on the first row where it clears the row's last
// label (a label too near the right edge is set to the left of its line).
std::string marker_lines(const Frame& f, const Axis& x, const LineChart& chart) {
  struct Placed {
    double xx;
    std::string label;
  };
  std::vector<Placed> placed;
  for (const auto& [where, label] : chart.markers) {
    if (!usable(where, chart.log_x)) continue;
    const double xx = f.x(x, where);
    if (xx < kLeft || xx > kLeft + kPlotW) continue;
    placed.push_back({xx, label});
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const Placed& a, const Placed& b) { return a.xx < b.xx; });
  constexpr double kMarkerFont = 11;
  std::vector<double> row_end;  // the right edge of each row's last label
  std::string out;
  for (const auto& m : placed) {
    const double w = text_width(m.label, kMarkerFont);
    const bool left = m.xx + 4 + w > kLeft + kPlotW;
    const double l = left ? m.xx - 4 - w : m.xx + 4;
    std::size_t row = 0;
    while (row < row_end.size() && row_end[row] + kLabelGap > l) ++row;
    if (row == row_end.size()) row_end.push_back(0);
    row_end[row] = l + w;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" "
        "stroke-dasharray=\"5,4\"/>\n"
        "<text class=\"marker-label\" x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"{5}\" fill=\"#333\" "
        "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{6}</text>\n",
        m.xx, f.top, f.top + kPlotH, l, f.top + 14 + 13.0 * static_cast<double>(row), kMarkerFont,
        svg_escape(m.label));
  }
  return out;
}

}  // namespace

std::string render_svg(const LineChart& chart) {
  std::vector<std::vector<std::pair<double, double>>> pts;
  double xlo = std::numeric_limits<double>::infinity();
  double xhi = -xlo;
  double ylo = xlo;
  double yhi = -xlo;
  for (const auto& s : chart.series) {
    pts.push_back(points_of(s, chart));
    for (const auto& [xv, yv] : pts.back()) {
      xlo = std::min(xlo, xv);
      xhi = std::max(xhi, xv);
      ylo = std::min(ylo, yv);
      yhi = std::max(yhi, yv);
    }
  }
  // Series with the same points as an earlier one are named with it in the legend, and the
  // group is drawn as nested stripes: the first widest, each later one narrower on top.
  const auto first = coincidence(pts);
  std::vector<std::string> names;
  std::vector<std::size_t> later(chart.series.size(), 0);  // same-point series drawn after
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    names.push_back(chart.series[k].name);
    if (first[k] != k) names.back() += " (= " + chart.series[first[k]].name + ")";
    for (std::size_t j = k + 1; j < chart.series.size(); ++j) {
      if (first[j] == first[k]) ++later[k];
    }
  }
  const Axis x = make_axis(xlo, xhi, chart.log_x);
  const Axis y = make_axis(ylo, yhi, chart.log_y);
  const Frame f = make_frame(chart.caption, names, kBottom);
  std::string out = header(f, chart.title, chart.caption, chart.x_label, chart.y_label);
  out += y_grid(f, y);
  out += x_grid(f, x);
  out += marker_lines(f, x, chart);
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const Style s = style_of(k);
    std::string points;
    std::string dots;
    for (const auto& [xv, yv] : pts[k]) {
      const double xx = f.x(x, xv);
      const double yy = f.y(y, yv);
      points += fmt::format("{:.1f},{:.1f} ", xx, yy);
      if (pts[k].size() <= 60) dots += marker_at(s, xx, yy);
    }
    out += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{:.1f}\" stroke-dasharray=\"{}\" "
        "points=\"{}\"/>\n",
        s.color, 1.8 + 2.4 * static_cast<double>(later[k]), later[k] > 0 ? "" : s.dash, points);
    out += dots;
  }
  out += plot_border(f);
  out += line_legend(f, names);
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
  // On a log axis bars rise from the axis's bottom, which lies below the smallest value.
  const Axis y = make_axis(lo, hi, chart.log_y, /*below_data=*/true);
  const double group_w =
      chart.groups.empty() ? kPlotW : kPlotW / static_cast<double>(chart.groups.size());
  // Group labels: level while they fit their group, else turned 45 degrees (every k-th when
  // even that is too tight), the plot's bottom margin growing with the longest.
  double longest = 0;
  for (const auto& g : chart.groups) longest = std::max(longest, text_width(g.label, kFont));
  const bool turned = longest + kLabelGap > group_w;
  const double spacing = group_w * std::sqrt(0.5);  // between turned labels' baselines
  const std::size_t every =
      turned ? static_cast<std::size_t>(std::ceil((kFont + kLabelGap) / spacing)) : 1;
  const double below = turned ? 30 + longest * std::sqrt(0.5) + 8 : kBottom;
  const Frame f = make_frame(chart.caption, chart.series, below);
  std::string out = header(f, chart.title, chart.caption, "", chart.y_label);
  out += y_grid(f, y);
  const double bar_w =
      group_w * 0.8 / static_cast<double>(std::max<std::size_t>(1, chart.series.size()));
  const double base = chart.log_y ? f.top + kPlotH : f.y(y, 0.0);
  for (std::size_t gi = 0; gi < chart.groups.size(); ++gi) {
    const auto& g = chart.groups[gi];
    const double gx = kLeft + group_w * static_cast<double>(gi) + group_w * 0.1;
    for (std::size_t si = 0; si < g.values.size(); ++si) {
      if (!usable(g.values[si], chart.log_y)) continue;
      const double top = f.y(y, g.values[si]);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"{}><title>{}: {:g}</title></rect>\n",
          gx + bar_w * static_cast<double>(si), std::min(top, base), bar_w * 0.92,
          std::abs(base - top), style_of(si).color,
          si < kColors.size() ? "" : " stroke=\"#000\" stroke-dasharray=\"2,2\"",
          svg_escape(si < chart.series.size() ? chart.series[si] : ""), g.values[si]);
    }
    if (gi % every != 0) continue;
    const double cx = gx + group_w * 0.4;
    const double ty = f.top + kPlotH + 18;
    if (turned) {
      out += fmt::format(
          "<text class=\"x-tick\" x=\"{0:.1f}\" y=\"{1}\" font-size=\"{2}\" text-anchor=\"end\" "
          "transform=\"rotate(-45 {0:.1f} {1})\">{3}</text>\n",
          cx + 4, ty - 4, kFont, svg_escape(g.label));
    } else {
      out += fmt::format(
          "<text class=\"x-tick\" x=\"{:.1f}\" y=\"{}\" font-size=\"{}\" "
          "text-anchor=\"middle\">{}</text>\n",
          cx, ty, kFont, svg_escape(g.label));
    }
  }
  if (chart.reference_line && usable(*chart.reference_line, chart.log_y)) {
    const double yy = f.y(y, *chart.reference_line);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#000\" "
        "stroke-dasharray=\"6,4\"/>\n",
        kLeft, yy, kLeft + kPlotW, yy);
  }
  out += plot_border(f);
  out += bar_legend(f, chart.series);
  out += "</svg>\n";
  return out;
}

}  // namespace optcoll::experiments
