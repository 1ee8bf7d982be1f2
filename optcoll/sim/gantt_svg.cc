// SPDX-License-Identifier: Apache-2.0
// File: the SVG Gantt chart of a simulated timeline: one row per rank, one bar (rect) per op
// coloured by kind, the critical path outlined, a labelled time axis in the model's units
// and a legend. Rows shrink with p (readable up to about 64 ranks). Exactly one <rect> per op
// that ran: the legend uses circles and the axis lines. Sends and receives share a rank's
// row as its upper and lower halves. A send that released its port early (send gap) is a bar
// up to the release and a thin line on to its arrival.
// Large timelines (more ops or ranks than GanttOptions allows) aggregate: a row per band of
// ranks, and a band's ops of one kind that lie under a pixel apart merge into one bar, so
// the file stays a few MB at any p.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "optcoll/sim/trace.h"
#include "optcoll/sim/trace_detail.h"

namespace optcoll {
namespace {

constexpr double kMinLeft = 72;  // room for "rank N"
constexpr double kPlotWidth = 1000;
constexpr double kRight = 24;
constexpr double kFont = 11;
constexpr std::array<const char*, 5> kColours{"#4e79a7", "#59a14f", "#f28e2b", "#9c9c9c",
                                              "#e15759"};  // send recv recv-reduce copy reduce
constexpr std::array<const char*, 5> kKinds{"send", "recv", "recv-reduce", "copy", "reduce"};
constexpr std::size_t kSendKind = 0;
constexpr std::size_t kFirstComputation = 3;  // copy, reduce: the whole row's height

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

// The axis's unit: seconds scaled to ns, us, ms or s (as format_time picks them) for a
// per-byte model; the model's own units otherwise.
struct TimeUnit {
  double scale;  // axis value = time * scale
  std::string_view name;
};

TimeUnit axis_unit(Time span, const CostModel& model) {
  struct Step {
    double below;  // spans under this many seconds
    TimeUnit unit;
  };
  static constexpr std::array<Step, 3> kSteps{
      {{1e-6, {1e9, "ns"}}, {1e-3, {1e6, "us"}}, {1, {1e3, "ms"}}}};
  if (!model.per_byte) return {1, "model units"};
  for (const auto& s : kSteps) {
    if (span < s.below) return s.unit;
  }
  return {1, "s"};
}

// Where the chart's parts go.
struct Frame {
  Rank p = 0;
  bool aggregated = false;  // bands of ranks, merged ops
  Rank band = 1;            // ranks per row
  Rank rows = 0;
  double left = kMinLeft;
  double top = 28;  // room for the title (and the caption)
  double row = 16;
  double bar = 12;
  Time span = 1;

  double plot_height() const { return row * std::max<Rank>(rows, 1); }
  double axis_y() const { return top + plot_height() + 4; }
  double legend_y() const { return axis_y() + 44; }
  double width() const { return left + kPlotWidth + kRight; }
  double height() const { return legend_y() + 20; }
  double x_of(Time t) const { return left + t / span * kPlotWidth; }
  // The box of kind `kind` in row `r`: sends the upper half of the bar, receives the lower,
  // computations all of it.
  std::pair<double, double> lane(Rank r, std::size_t kind) const {
    const double y = top + row * r + (row - bar) / 2;
    if (kind >= kFirstComputation) return {y, bar};
    return {kind == kSendKind ? y : y + bar / 2, bar / 2};
  }
};

std::string row_name(const Frame& l, Rank r) {
  if (l.band == 1) return fmt::format("rank {}", r);
  return fmt::format("ranks {}-{}", r * l.band, std::min(l.p, (r + 1) * l.band) - 1);
}

Frame make_layout(const Schedule& schedule, const SimResult& result, const GanttOptions& options) {
  Frame l;
  l.p = static_cast<Rank>(schedule.ranks.size());
  l.aggregated =
      static_cast<std::size_t>(schedule.op_count()) > options.max_ops || l.p > options.max_rows;
  const Rank max_rows = std::max<Rank>(1, options.max_rows);
  l.band = l.aggregated ? std::max<Rank>(1, (l.p + max_rows - 1) / max_rows) : 1;
  l.rows = (l.p + l.band - 1) / l.band;
  l.row = l.rows <= 64 ? 16.0 : std::max(0.5, 1024.0 / l.rows);
  l.bar = l.rows <= 64 ? l.row - 4 : l.row * 0.8;
  l.top = options.caption.empty() ? 28 : 44;
  l.span = result.makespan > 0 ? result.makespan : 1;
  const double widest = static_cast<double>(row_name(l, std::max<Rank>(l.rows - 1, 0)).size());
  l.left = std::max(kMinLeft, widest * kFont * 0.6 + 12);
  return l;
}

std::string header(const Frame& l, const Schedule& schedule, const SimResult& result,
                   const CostModel& model, const std::string& caption) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"{}\" "
      "style=\"background:#ffffff\">\n"
      "<path d=\"M0,0H{:.0f}V{:.0f}H0z\" fill=\"#ffffff\"/>\n",  // a path: rects are ops
      l.width(), l.height(), l.width(), l.height(), kFont, l.width(), l.height());
  svg += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"13\">{} — p = {}, makespan {}{}</text>\n",
                     l.left, svg_escape(schedule.algorithm), l.p,
                     svg_escape(format_time(result.makespan, model)),
                     result.status == SimStatus::kDeadlock ? " (DEADLOCK)" : "");
  if (!caption.empty()) {
    svg += fmt::format("<text class=\"caption\" x=\"{}\" y=\"34\" fill=\"#444\">{}</text>\n",
                       l.left, svg_escape(caption));
  }
  return svg;
}

// Row labels: every row up to 64, then about 32 labels.
std::string row_labels(const Frame& l) {
  std::string svg;
  const Rank every = l.rows <= 64 ? 1 : (l.rows + 31) / 32;
  for (Rank r = 0; r < l.rows; r += every) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
        l.left - 6, l.top + l.row * (r + 0.5), row_name(l, r));
  }
  return svg;
}

std::vector<std::pair<Rank, OpId>> critical_ops(const SimResult& result) {
  std::vector<std::pair<Rank, OpId>> critical;
  for (const auto& step : result.critical_path) critical.emplace_back(step.rank, step.op);
  std::sort(critical.begin(), critical.end());
  return critical;
}

// One bar per op; computations drawn last, on top.
std::string op_bars(const Frame& l, const Schedule& schedule, const SimResult& result,
                    const CostModel& model) {
  const auto critical = critical_ops(result);
  std::string svg;
  for (const bool computations : {false, true}) {
    for (Rank r = 0; r < l.p; ++r) {
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
        const double x = l.x_of(t.start);
        const double w = std::max(l.x_of(released ? t.port_release : t.end) - x, 0.5);
        const auto [y, h] = l.lane(r, sim::detail::kind_index(action));
        const std::string release_note =
            released ? fmt::format(", port released at {}", format_time(t.port_release, model))
                     : std::string();
        svg += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"{}>"
            "<title>{} [{}, {}]{}</title></rect>\n",
            x, y, w, h, kColours[sim::detail::kind_index(action)],
            on_path ? " stroke=\"#000000\" stroke-width=\"1.5\"" : "",
            svg_escape(describe_op(schedule, r, static_cast<OpId>(i))),
            svg_escape(format_time(t.start, model)), svg_escape(format_time(t.end, model)),
            svg_escape(release_note));
        if (released) {
          svg += fmt::format(
              "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\" "
              "stroke-width=\"1\"/>\n",
              x + w, y + h / 2, l.x_of(t.end), y + h / 2,
              kColours[sim::detail::kind_index(action)]);
        }
      }
    }
  }
  return svg;
}

struct Interval {
  Time start;
  Time end;
  std::size_t ops = 1;
};

// Sorts the intervals and merges those less than `tolerance` apart.
std::vector<Interval> merged(std::vector<Interval> in, Time tolerance) {
  std::sort(in.begin(), in.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& i : in) {
    if (!out.empty() && i.start <= out.back().end + tolerance) {
      out.back().end = std::max(out.back().end, i.end);
      out.back().ops += i.ops;
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Per band and kind, the ops' intervals (a released send's up to its release) merged where
// under a pixel apart; the critical path's ops merged the same way and outlined on top.
std::string band_bars(const Frame& l, const Schedule& schedule, const SimResult& result,
                      const CostModel& model) {
  const Time pixel = l.span / kPlotWidth;
  const auto critical = critical_ops(result);
  std::string svg;
  std::string outlines;
  for (Rank b = 0; b < l.rows; ++b) {
    std::array<std::vector<Interval>, kKinds.size()> by_kind;
    std::vector<Interval> on_path;
    for (Rank r = b * l.band; r < std::min(l.p, (b + 1) * l.band); ++r) {
      const auto& ops = schedule.ranks[static_cast<std::size_t>(r)].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpTiming& t = result.timing[static_cast<std::size_t>(r)][i];
        if (t.start < 0 || t.end < 0) continue;
        const Interval interval{t.start, t.port_release >= 0 ? t.port_release : t.end};
        by_kind[sim::detail::kind_index(ops[i].action)].push_back(interval);
        if (std::binary_search(critical.begin(), critical.end(),
                               std::pair<Rank, OpId>{r, static_cast<OpId>(i)}))
          on_path.push_back(interval);
      }
    }
    for (std::size_t kind = 0; kind < kKinds.size(); ++kind) {
      const auto [y, h] = l.lane(b, kind);
      for (const auto& i : merged(std::move(by_kind[kind]), pixel)) {
        const double x = l.x_of(i.start);
        svg += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">"
            "<title>{}: {} {} [{}, {}]</title></rect>\n",
            x, y, std::max(l.x_of(i.end) - x, 0.5), h, kColours[kind], row_name(l, b), i.ops,
            kKinds[kind], svg_escape(format_time(i.start, model)),
            svg_escape(format_time(i.end, model)));
      }
    }
    const auto [y, h] = l.lane(b, kFirstComputation);
    for (const auto& i : merged(std::move(on_path), pixel)) {
      const double x = l.x_of(i.start);
      outlines += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"none\" "
          "stroke=\"#000000\" stroke-width=\"1.5\"/>\n",
          x, y, std::max(l.x_of(i.end) - x, 0.5), h);
    }
  }
  return svg + outlines;
}

std::string time_axis(const Frame& l, const CostModel& model) {
  const TimeUnit unit = axis_unit(l.span, model);
  const double y = l.axis_y();
  std::string svg =
      fmt::format("<line x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#000\"/>\n",
                  l.left, y, l.left + kPlotWidth, y);
  const double scaled = l.span * unit.scale;
  const double step = tick_step(scaled);
  for (int k = 0; k * step <= scaled * (1 + 1e-9); ++k) {
    const double x = l.x_of(k * step / unit.scale);
    svg += fmt::format(
        "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" "
        "stroke=\"#000\"/><text x=\"{:.2f}\" y=\"{:.2f}\" "
        "text-anchor=\"middle\">{:g}</text>\n",
        x, y, x, y + 5, x, y + 17, k * step);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"middle\">time ({})</text>\n",
                     l.left + kPlotWidth / 2, y + 31, unit.name);
  return svg;
}

std::string legend(const Frame& l) {
  std::string svg;
  double lx = l.left;
  const double y = l.legend_y();
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\">{}</text>\n",
        lx + 5, y, kColours[k], lx + 14, y, kKinds[k]);
    lx += 100;
  }
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
      "stroke=\"#000\" stroke-width=\"1.5\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
      "dominant-baseline=\"middle\">critical path (outlined){}</text>\n",
      lx, y, lx + 14, y, lx + 20, y,
      l.aggregated
          ? fmt::format("; rows of {} ranks, ops of a kind under 1 px apart merged", l.band)
          : std::string());
  return svg;
}

}  // namespace

std::string svg_escape(std::string_view text) {
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

GanttSvg gantt_svg(const Schedule& schedule, const SimResult& result, const CostModel& model,
                   const GanttOptions& options) {
  sim::detail::require_timing(schedule, result);
  const Frame l = make_layout(schedule, result, options);
  GanttSvg out;
  out.aggregated = l.aggregated;
  out.band = l.band;
  out.svg = header(l, schedule, result, model, options.caption);
  out.svg += row_labels(l);
  out.svg += "<g stroke-linejoin=\"round\">\n";
  out.svg +=
      l.aggregated ? band_bars(l, schedule, result, model) : op_bars(l, schedule, result, model);
  out.svg += "</g>\n";
  out.svg += time_axis(l, model);
  out.svg += legend(l);
  out.svg += "</svg>\n";
  return out;
}

}  // namespace optcoll
