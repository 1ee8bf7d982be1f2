// SPDX-License-Identifier: Apache-2.0
// File: experiment `torus-bounds` (Jain & Sabharwal, ICS'10; docs/math/torus-bucket.md
// §4-§5):
// allreduce of n = 2^20 elements on the tori 8x8x8, 4x8x16 and 16x16x16, unidirectional and
// bidirectional links, alpha = 0 and alpha = 100 (beta = 1, gamma = 0): each algorithm's
// time in the link-level simulator, the paper's formulas (2)-(5) (doubled for allreduce) and
// the link lower bound of docs/math/torus-bucket.md §2. The single-ring baselines have p-1 steps
// and 2(p-1) ops per rank each: they are simulated up to p = 512 and given by the closed forms that
// the simulation matches exactly there (see measure()) beyond.
// Multicore rows (the paper's §4 "Parallelization with multi-cores" and its Figure 6(d), made
// computation-bound by an artificial delay): the multicolor allreduce on the bidirectional
// 8x8x8 and 4x8x16 with gamma = 4, on 1, 3 (one colour per core, as on Blue Gene/P) and 6
// (one colour-direction per core) cores per rank (CostModel::cores_per_rank), without overlap
// (the formulas add their terms) and with it; formula: (2) doubled plus the computation term
// shared by the cores, (p-1)/p·nγ·ceil(2N/c)/(2N).
// Known-results rows (the paper's Figure 2, Chan et al. 2006: 2(d_l-1)/d_l·nβ for allreduce,
// unidirectional): allreduce/dimension_wise with its phases in sequence (pieces = 1) and
// pipelined (pieces = 8: a piece moves on to the next dimension while the first dimension's
// links carry the next one), on 8x8x8, 4x8x16 and 16x8x4 (the longest dimension first), beside
// that formula and 2(d_1-1)/d_1·nβ, d_1 the first dimension of the order.
#include <algorithm>
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

// The computation term with the colour-directions divided over `cores` cores: the busiest
// core reduces ceil(S/c) of the S streams' equal shares of (p-1)/p·nγ.
Time multicore_compute_term(const Topology& t, Count n, const CostModel& m) {
  const int streams = t.links == LinkMode::kBidirectional ? 2 * t.ndims() : t.ndims();
  const int busiest = (streams + m.cores_per_rank - 1) / m.cores_per_rank;
  const double p = t.size();
  return (p - 1) / p * static_cast<double>(n) * m.gamma * busiest / streams;
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

std::vector<Row> measure_tori(const std::vector<std::string>& tori, Count n) {
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
  return rows;
}

constexpr Time kMulticoreGamma = 4;
constexpr std::array<int, 3> kCoresPerRank{1, 3, 6};

struct MulticoreRow {
  std::string torus;
  bool overlap = false;
  int cores = 1;
  Time time = 0;
  Time formula = 0;
  Time speedup = 1;  // over one core per rank, same torus and overlap
};

std::vector<MulticoreRow> measure_multicore(const std::vector<std::string>& tori, Count n) {
  std::vector<MulticoreRow> rows;
  for (const auto& torus : tori) {
    for (const bool overlap : {false, true}) {
      CostModel base;
      base.alpha = 0;
      base.beta = 1;
      base.gamma = kMulticoreGamma;
      base.copy = 0;
      CostModel m = with_topology(base, parse_topology(fmt::format("torus:{}:bi", torus)));
      m.overlap = overlap;
      const auto spec = make_spec(CollectiveKind::kAllreduce, m.topology->size(), n);
      Time one_core = 0;
      for (const int c : kCoresPerRank) {
        m.cores_per_rank = c;
        MulticoreRow row;
        row.torus = torus;
        row.overlap = overlap;
        row.cores = c;
        row.time =
            simulate(algorithms::build("allreduce/multicolor_bucket", spec, {}, m), m).makespan;
        row.formula = paper_formula(*m.topology, n, m) + multicore_compute_term(*m.topology, n, m);
        if (c == 1) one_core = row.time;
        row.speedup = one_core / row.time;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

// The multicore rows as a Markdown table, CSV and JSON.
void report_multicore(const std::vector<MulticoreRow>& rows, Count n, ExperimentResult& result,
                      nlohmann::json& doc) {
  result.table += fmt::format(
      "\nMulticore colour division (Figure 6(d) setting): allreduce/multicolor_bucket, n = {}, "
      "bidirectional, alpha = 0, beta = 1, gamma = {} (computation-bound); formula = (2) doubled "
      "+ (p-1)/p·nγ·ceil(2N/c)/(2N)\n\n"
      "| torus | overlap | cores per rank | time | formula | speedup over 1 core |\n"
      "|---|---|---|---|---|---|\n",
      n, kMulticoreGamma);
  std::string csv = "torus,overlap,cores_per_rank,time,formula,speedup\n";
  for (const MulticoreRow& r : rows) {
    result.table += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.3f} |\n", r.torus,
                                r.overlap ? "yes" : "no", r.cores, r.time, r.formula, r.speedup);
    csv += fmt::format("{},{},{},{:.6f},{:.6f},{:.6f}\n", r.torus, r.overlap, r.cores, r.time,
                       r.formula, r.speedup);
    doc.push_back({{"torus", r.torus},
                   {"links", "bi"},
                   {"alpha", 0},
                   {"gamma", kMulticoreGamma},
                   {"overlap", r.overlap},
                   {"cores_per_rank", r.cores},
                   {"algorithm", "multicolor_bucket"},
                   {"time", r.time},
                   {"formula", r.formula},
                   {"speedup", r.speedup}});
  }
  result.files.emplace_back("torus-multicore.csv", csv);
}

struct KnownRow {
  std::string torus;
  int pieces = 1;
  Time time = 0;
  Time known = 0;  // 2(d_l-1)/d_l·nβ
  Time first = 0;  // 2(d_1-1)/d_1·nβ
};

std::vector<KnownRow> measure_known(const std::vector<std::string>& tori, Count n) {
  std::vector<KnownRow> rows;
  for (const auto& torus : tori) {
    CostModel base;
    base.alpha = 0;
    base.beta = 1;
    base.gamma = 0;
    base.copy = 0;
    const CostModel m = with_topology(base, parse_topology(fmt::format("torus:{}:uni", torus)));
    const Topology& t = *m.topology;
    const auto spec = make_spec(CollectiveKind::kAllreduce, t.size(), n);
    const double dl = *std::max_element(t.dims.begin(), t.dims.end());
    const double d1 = t.dims[0];
    for (const int pieces : {1, 8}) {
      KnownRow row;
      row.torus = torus;
      row.pieces = pieces;
      const auto params = algorithms::Params::parse(fmt::format("pieces={}", pieces));
      row.time =
          simulate(algorithms::build("allreduce/dimension_wise", spec, params, m), m).makespan;
      row.known = 2 * (dl - 1) / dl * static_cast<double>(n) * m.beta;
      row.first = 2 * (d1 - 1) / d1 * static_cast<double>(n) * m.beta;
      rows.push_back(row);
    }
  }
  return rows;
}

void report_known(const std::vector<KnownRow>& rows, Count n, ExperimentResult& result,
                  nlohmann::json& doc) {
  result.table += fmt::format(
      "\nKnown results (Figure 2, Chan et al. 2006): allreduce/dimension_wise, n = {}, "
      "unidirectional, alpha = 0, beta = 1; known = 2(d_l-1)/d_l·nβ, first dimension = "
      "2(d_1-1)/d_1·nβ\n\n"
      "| torus | pieces | time | known | time/known | first dimension |\n"
      "|---|---|---|---|---|---|\n",
      n);
  std::string csv = "torus,pieces,time,known,first_dimension\n";
  for (const KnownRow& r : rows) {
    result.table += fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.4f} | {:.1f} |\n", r.torus,
                                r.pieces, r.time, r.known, r.time / r.known, r.first);
    csv += fmt::format("{},{},{:.6f},{:.6f},{:.6f}\n", r.torus, r.pieces, r.time, r.known, r.first);
    doc.push_back({{"torus", r.torus},
                   {"links", "uni"},
                   {"alpha", 0},
                   {"algorithm", fmt::format("dimension_wise (pieces={})", r.pieces)},
                   {"time", r.time},
                   {"known_formula", r.known},
                   {"first_dimension_formula", r.first}});
  }
  result.files.emplace_back("torus-known.csv", csv);
}

}  // namespace

ExperimentResult run_torus_bounds(const ExperimentOptions& options) {
  std::vector<std::string> tori{"8x8x8", "4x8x16", "16x16x16"};
  std::vector<std::string> multicore_tori{"8x8x8", "4x8x16"};
  std::vector<std::string> known_tori{"8x8x8", "4x8x16", "16x8x4"};
  Count n = Count{1} << 20;
  if (options.quick) {
    tori = {"4x4x4", "2x4x8"};
    multicore_tori = tori;
    known_tori = {"4x4x4", "2x4x8", "8x4x2"};
    n = Count{1} << 12;
  }
  const std::vector<Row> rows = measure_tori(tori, n);
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
  report_multicore(measure_multicore(multicore_tori, n), n, result, doc);
  report_known(measure_known(known_tori, n), n, result, doc);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
