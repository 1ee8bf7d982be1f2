// SPDX-License-Identifier: Apache-2.0
// File: the SVG Gantt chart of a simulated timeline: one row per rank, one bar (rect) per op
// coloured by kind, the critical path outlined, a labelled time axis and a legend. Rows shrink
// with p (readable up to about 64 ranks; larger charts stay valid, with sparser labels).
// Exactly one <rect> per op that ran: the legend uses circles and the axis lines. Sends and
// receives share a rank's row as its upper and lower halves. A send that released its port
// early (send gap) is a bar up to the release and a thin line on to its arrival.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "optcoll/sim/trace.h"
#include "optcoll/sim/trace_detail.h"

namespace optcoll {
namespace {

constexpr double kLeft = 72;  // room for "rank N"
constexpr double kTop = 28;   // room for the title
constexpr double kPlotWidth = 1000;
constexpr double kRight = 24;
constexpr std::array<const char*, 5> kColours{"#4e79a7", "#59a14f", "#f28e2b", "#9c9c9c",
                                              "#e15759"};  // send recv recv-reduce copy reduce
constexpr std::array<const char*, 5> kKinds{"send", "recv", "recv-reduce", "copy", "reduce"};

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
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
        out += c;
    }
  }
  return out;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about 8 ticks over `span`.
double tick_step(double span) {
  if (!(span > 0)) return 1;
  const double raw = span / 8;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

std::string gantt_svg(const Schedule& schedule, const SimResult& result) {
  sim::detail::require_timing(schedule, result);
  const auto p = static_cast<Rank>(schedule.ranks.size());
  const double row = p <= 64 ? 16.0 : std::max(0.5, 1024.0 / p);
  const double bar = p <= 64 ? row - 4 : row * 0.8;
  const double plot_height = row * std::max<Rank>(p, 1);
  const double axis_y = kTop + plot_height + 4;
  const double legend_y = axis_y + 44;
  const double width = kLeft + kPlotWidth + kRight;
  const double height = legend_y + 20;
  const Time span = result.makespan > 0 ? result.makespan : 1;
  auto x_of = [&](Time t) { return kLeft + t / span * kPlotWidth; };

  std::vector<std::pair<Rank, OpId>> critical;
  for (const auto& step : result.critical_path) critical.emplace_back(step.rank, step.op);
  std::sort(critical.begin(), critical.end());

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"11\" "
      "style=\"background:#ffffff\">\n",
      width, height, width, height);
  svg += fmt::format(
      "<text x=\"{}\" y=\"18\" font-size=\"13\">{} — p = {}, makespan {:g}"
      "{}</text>\n",
      kLeft, escape(schedule.algorithm), p, result.makespan,
      result.status == SimStatus::kDeadlock ? " (DEADLOCK)" : "");
  // Rank labels: every rank up to 64, then about 32 labels.
  const Rank label_every = p <= 64 ? 1 : (p + 31) / 32;
  for (Rank r = 0; r < p; r += label_every) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"end\" "
        "dominant-baseline=\"middle\">rank {}</text>\n",
        kLeft - 6, kTop + row * (r + 0.5), r);
  }
  // One bar per op. A rank may send and receive at once: sends take the upper half of its
  // row, receives the lower half, computations the whole height (drawn last, on top).
  svg += "<g stroke-linejoin=\"round\">\n";
  for (const bool computations : {false, true}) {
    for (Rank r = 0; r < p; ++r) {
      const auto& ops = schedule.ranks[static_cast<std::size_t>(r)].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpTiming& t = result.timing[static_cast<std::size_t>(r)][i];
        const Action& action = ops[i].action;
        if (t.start < 0 || t.end < 0 || is_communication(action) == computations) continue;
        const bool on_path = std::binary_search(critical.begin(), critical.end(),
                                                std::pair<Rank, OpId>{r, static_cast<OpId>(i)});
        // A send that released its port early (send gap): the bar spans the port's hold, a
        // thin line the message's flight after it.
        const bool released = t.port_release >= 0;
        const double x = x_of(t.start);
        const double w = std::max(x_of(released ? t.port_release : t.end) - x, 0.5);
        double y = kTop + row * r + (row - bar) / 2;
        double h = bar;
        if (!computations) {
          h = bar / 2;
          if (!std::holds_alternative<Send>(action)) y += h;
        }
        const std::string release_note =
            released ? fmt::format(", port released at {:g}", t.port_release) : std::string();
        svg += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"{}>"
            "<title>{} [{:g}, {:g}]{}</title></rect>\n",
            x, y, w, h, kColours[action.index()],
            on_path ? " stroke=\"#000000\" stroke-width=\"1.5\"" : "",
            escape(describe_op(schedule, r, static_cast<OpId>(i))), t.start, t.end, release_note);
        if (released) {
          svg += fmt::format(
              "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\" "
              "stroke-width=\"1\"/>\n",
              x + w, y + h / 2, x_of(t.end), y + h / 2, kColours[action.index()]);
        }
      }
    }
  }
  svg += "</g>\n";
  // Time axis with ticks.
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#000\"/>\n",
                     kLeft, axis_y, kLeft + kPlotWidth, axis_y);
  const double step = tick_step(span);
  for (int k = 0; k * step <= span * (1 + 1e-9); ++k) {
    const double x = x_of(k * step);
    svg += fmt::format(
        "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" "
        "stroke=\"#000\"/><text x=\"{:.2f}\" y=\"{:.2f}\" "
        "text-anchor=\"middle\">{:g}</text>\n",
        x, axis_y, x, axis_y + 5, x, axis_y + 17, k * step);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"middle\">time (model units)"
      "</text>\n",
      kLeft + kPlotWidth / 2, axis_y + 31);
  // Legend.
  double lx = kLeft;
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\">{}</text>\n",
        lx + 5, legend_y, kColours[k], lx + 14, legend_y, kKinds[k]);
    lx += 100;
  }
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
      "stroke=\"#000\" stroke-width=\"1.5\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
      "dominant-baseline=\"middle\">critical path (outlined)</text>\n",
      lx, legend_y, lx + 14, legend_y, lx + 20, legend_y);
  svg += "</svg>\n";
  return svg;
}

}  // namespace optcoll
