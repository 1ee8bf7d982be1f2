// SPDX-License-Identifier: Apache-2.0
// File: experiment `torus-bounds` (Jain & Sabharwal, ICS'10; docs/math/torus-bucket.md
// §4-§5):
// allreduce of n = 2^20 elements on the tori 8x8x8, 4x8x16 and 16x16x16, unidirectional and
// bidirectional links, alpha = 0 and alpha = 100 (beta = 1, gamma = 0): each algorithm's
// time in the link-level simulator, the paper's formulas (2)-(5) (doubled for allreduce) and
// the link lower bound of docs/math/torus-bucket.md §2. The single-ring baselines have p-1 steps
// and 2(p-1) ops per rank each: they are simulated up to p = 512 and given by the closed forms that
// the simulation matches exactly there (see measure()) beyond.
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/algorithms/registry.h"
#include "optcoll/experiments/experiment.h"
#include "optcoll/experiments/svg_chart.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::experiments {
namespace {

// Registry name and parameters; multicolor without phase synchronisation shows what the
// colours' running ahead costs on asymmetric tori.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAlgorithms{{
    {"allreduce/multicolor_bucket", ""},
    {"allreduce/multicolor_bucket", "sync=0"},
    {"allreduce/dimension_wise", ""},
    {"allreduce/ring", ""},
    {"allreduce/ring_snake", ""},
    {"allreduce/bidirectional_ring", ""},
}};
constexpr Rank kMaxRingRanks = 512;

// Formulas (2)-(5) for the reduce-scatter, doubled in alpha and beta for allreduce
// (gamma = 0 here): 2N Σ(d_i-1)α + (d_l-1)/d_l·nβ/(2N)·(d_s^N-1)/d_s^N·d_s/(d_s-1)
// bidirectional; N Σ(d_i-1)α and nβ/N unidirectional.
Time paper_formula(const Topology& t, Count n, const CostModel& m) {
  const int big_n = t.ndims();
  int ds = t.dims[0];
  int dl = t.dims[0];
  int steps = 0;
  for (const int d : t.dims) {
    ds = std::min(ds, d);
    dl = std::max(dl, d);
    steps += d - 1;
  }
  const bool bi = t.links == LinkMode::kBidirectional;
  const double streams = bi ? 2.0 * big_n : big_n;
  const double geometric =
      ds > 1 ? (std::pow(ds, big_n) - 1) / std::pow(ds, big_n) * ds / (ds - 1) : big_n;
  const double rs = streams * steps * m.alpha +
                    (dl - 1.0) / dl * static_cast<double>(n) * m.beta / streams * geometric;
  return 2 * rs;
}

struct Row {
  std::string torus;
  std::string links;
  Time alpha = 0;
  std::string algorithm;
  Time time = 0;
  bool simulated = true;
  Time formula = 0;
  Time bound = 0;
};

Row measure(const CostModel& m, std::string_view algorithm, std::string_view params, Count n) {
  const Topology& t = *m.topology;
  const Rank p = t.size();
  const auto spec = make_spec(CollectiveKind::kAllreduce, p, n);
  Row row;
  row.torus = fmt::format("{}", fmt::join(t.dims, "x"));
  row.links = t.links == LinkMode::kBidirectional ? "bi" : "uni";
  row.alpha = m.alpha;
  row.algorithm = std::string(algorithm.substr(10));  // without "allreduce/"
  if (!params.empty()) row.algorithm += fmt::format(" ({})", params);
  row.formula = paper_formula(t, n, m);
  row.bound = lower_bound(Layout(spec), m).value_or(0);
  const bool ring = algorithm.find("ring") != std::string_view::npos;
  if (ring && p > kMaxRingRanks) {
    // Conflict-free rings (docs/math/torus-bucket.md §5), as simulated up to p = 512: one ring
    // 2(p-1)α + 2(p-1)/p·nβ; two counter-rotating rings halve the β term on bidirectional links,
    // and on half-duplex links share the channels: 4(p-1)α + 2(p-1)/p·nβ.
    const bool two = algorithm == "allreduce/bidirectional_ring";
    const bool bi = t.links == LinkMode::kBidirectional;
    const double starts = two && !bi ? 4.0 : 2.0;
    const double share = two && bi ? 0.5 : 1.0;
    row.time = starts * (p - 1) * m.alpha + 2.0 * (p - 1) / p * static_cast<double>(n) * share;
    row.simulated = false;
    return row;
  }
  row.time = simulate(algorithms::build(algorithm, spec, algorithms::Params::parse(params), m), m)
                 .makespan;
  return row;
}

}  // namespace

ExperimentResult run_torus_bounds(const ExperimentOptions& options) {
  std::vector<std::string> tori{"8x8x8", "4x8x16", "16x16x16"};
  Count n = Count{1} << 20;
  if (options.quick) {
    tori = {"4x4x4", "2x4x8"};
    n = Count{1} << 12;
  }
  std::vector<Row> rows;
  for (const auto& torus : tori) {
    for (const char* links : {"uni", "bi"}) {
      for (const Time alpha : {0.0, 100.0}) {
        CostModel base;
        base.alpha = alpha;
        base.beta = 1;
        base.gamma = 0;
        base.copy = 0;
        const CostModel m =
            with_topology(base, parse_topology(fmt::format("torus:{}:{}", torus, links)));
        for (const auto& [algorithm, params] : kAlgorithms) {
          rows.push_back(measure(m, algorithm, params, n));
        }
      }
    }
  }
  ExperimentResult result;
  result.table = fmt::format(
      "Allreduce of n = {} elements on tori (beta = 1, gamma = 0; link-level simulation; "
      "formula = the paper's (2)-(5) doubled; bound = the link lower bound 2(p-1)/p·nβ/N "
      "(uni), /(2N) (bi)){}\n\n"
      "| torus | links | α | algorithm | time | time/bound | formula | bound |\n"
      "|---|---|---|---|---|---|---|---|\n",
      n, options.quick ? " [quick: small tori]" : "");
  std::string csv = "torus,links,alpha,algorithm,time,simulated,formula,bound\n";
  nlohmann::json doc = nlohmann::json::array();
  BarChart chart;
  chart.title = fmt::format("allreduce on tori, n = {}, alpha = 0: time / lower bound", n);
  chart.y_label = "time / link lower bound";
  chart.reference_line = 1.0;
  chart.caption =
      "model: link-level torus, alpha = 0, beta = 1, gamma = 0 (abstract units); dashed line: "
      "the link lower bound";
  for (const auto& [algorithm, params] : kAlgorithms) {
    chart.series.push_back(std::string(algorithm.substr(10)) +
                           (params.empty() ? "" : fmt::format(" ({})", params)));
  }
  chart.series.emplace_back("paper formula");
  for (std::size_t i = 0; i < rows.size(); i += kAlgorithms.size()) {
    if (rows[i].alpha == 0) {
      BarGroup group;
      group.label = rows[i].torus + " " + rows[i].links;
      for (std::size_t k = 0; k < kAlgorithms.size(); ++k) {
        group.values.push_back(rows[i + k].time / rows[i + k].bound);
      }
      group.values.push_back(rows[i].formula / rows[i].bound);
      chart.groups.push_back(std::move(group));
    }
    for (std::size_t k = 0; k < kAlgorithms.size(); ++k) {
      const Row& r = rows[i + k];
      result.table +=
          fmt::format("| {} | {} | {} | {} | {:.1f}{} | {:.3f} | {:.1f} | {:.1f} |\n", r.torus,
                      r.links, r.alpha, r.algorithm, r.time, r.simulated ? "" : " (closed form)",
                      r.time / r.bound, r.formula, r.bound);
      csv += fmt::format("{},{},{},{},{:.6f},{},{:.6f},{:.6f}\n", r.torus, r.links, r.alpha,
                         r.algorithm, r.time, r.simulated, r.formula, r.bound);
      doc.push_back({{"torus", r.torus},
                     {"links", r.links},
                     {"alpha", r.alpha},
                     {"algorithm", r.algorithm},
                     {"time", r.time},
                     {"simulated", r.simulated},
                     {"formula", r.formula},
                     {"bound", r.bound}});
    }
  }
  result.files.emplace_back("torus-bounds.svg", render_svg(chart));
  result.files.emplace_back("torus-bounds.csv", csv);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
