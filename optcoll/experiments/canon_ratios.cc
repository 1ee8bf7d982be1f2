// SPDX-License-Identifier: Apache-2.0
// File: experiment `canon-ratios`: Figure 2 of Canon & Antoniu (INRIA RR-7898): the length of
// the binomial strategy over the optimum at d = c, and of the Fibonacci strategy over the
// optimum at min(d, c) = 0, for n = 2..10000, under both tie-breaking rules of the greedy's
// argmin; the bounds of Lemma 5 and Prop. 6 beside the optimum; the optimal length against n
// for several (d, c) ratios; and the K-transfer case for d < c (the report's §6.1): Algorithm
// 2's length against Algorithm 3's (what transfers=K ran before issue 33) and the unlimited
// optimum, n = 2..1000, each Algorithm 2 entry of the table also simulated as
// reduce/greedy_overlap transfers=K.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/algorithms/planners/greedy_transfers.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/experiments/experiment.h"
#include "optcoll/experiments/svg_chart.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::experiments {
namespace {

namespace pl = algorithms::planners;
using pl::ReductionCosts;
using pl::TieBreak;

struct Curve {
  std::string name;
  std::vector<double> ratio;  // per n in [2, n_max]
  double worst = 0;
  std::int64_t worst_first = 0;  // the n range where the worst ratio is reached
  std::int64_t worst_last = 0;
};

Curve curve(std::string name, std::int64_t n_max, const std::vector<Time>& optimum,
            std::vector<Time>& strategy_lengths,
            pl::ReductionTree (*strategy)(std::int64_t, const ReductionCosts&, TieBreak),
            const ReductionCosts& costs, TieBreak tie) {
  Curve c{std::move(name), {}, 0, 0, 0};
  strategy_lengths.assign(static_cast<std::size_t>(n_max) + 1, 0);
  for (std::int64_t n = 2; n <= n_max; ++n) {
    const Time length = strategy(n, costs, tie).length;
    strategy_lengths[static_cast<std::size_t>(n)] = length;
    const double r = length / optimum[static_cast<std::size_t>(n)];
    c.ratio.push_back(r);
    if (r > c.worst + 1e-12) {
      c.worst = r;
      c.worst_first = c.worst_last = n;
    } else if (std::abs(r - c.worst) <= 1e-12) {
      c.worst_last = n;
    }
  }
  return c;
}

std::string optimum_table(const std::vector<std::int64_t>& sizes) {
  const std::array<ReductionCosts, 6> pairs{{{1, 0}, {1, 1}, {1, 2}, {1, 5}, {1, 10}, {10, 1}}};
  std::string t = "Optimal length (Algorithm 1) against n for several (d, c):\n\n| n |";
  for (const auto& k : pairs) t += fmt::format(" d={:g} c={:g} |", k.d, k.c);
  t += "\n|---|";
  for (std::size_t i = 0; i < pairs.size(); ++i) t += "---|";
  t += "\n";
  std::vector<std::vector<Time>> lengths;
  for (const auto& k : pairs) lengths.push_back(pl::greedy_optimal_lengths(sizes.back(), k));
  for (const auto n : sizes) {
    t += fmt::format("| {} |", n);
    for (const auto& l : lengths) t += fmt::format(" {:g} |", l[static_cast<std::size_t>(n)]);
    t += "\n";
  }
  return t;
}

// ---- K concurrent transfers, d < c (the report's §6.1) ----------------------------------

constexpr std::array<ReductionCosts, 2> kTransferPairs{{{1, 2}, {1, 5}}};
constexpr std::array<std::int64_t, 5> kTransferLimits{1, 2, 3, 4, 8};

// The model reduce/greedy_overlap plans for d = alpha + n beta, c = n gamma with one element.
CostModel transfer_model(const ReductionCosts& k) {
  CostModel m;
  m.alpha = k.d;
  m.beta = 0;
  m.gamma = k.c;
  m.ports = 1;
  m.duplex = Duplex::kHalf;
  m.overlap = true;
  return m;
}

Time simulated_transfers(std::int64_t n, const ReductionCosts& k, std::int64_t limit) {
  const auto model = transfer_model(k);
  const auto schedule = algorithms::build(
      "reduce/greedy_overlap", make_spec(CollectiveKind::kReduce, static_cast<Rank>(n), 1),
      algorithms::Params::parse(fmt::format("transfers={}", limit)), model);
  return simulate(schedule, model).makespan;
}

struct TransferRow {
  ReductionCosts costs;
  std::int64_t limit;
  std::vector<Time> two, three;  // Algorithms 2 and 3, per n in [2, n_max]
};

struct TransferRows {
  std::vector<TransferRow> rows;             // per (pair, K), pairs outermost
  std::vector<std::vector<Time>> unlimited;  // per pair: Algorithm 1, per n
};

TransferRows transfer_rows(std::int64_t n_max) {
  TransferRows out;
  for (const auto& k : kTransferPairs) {
    out.unlimited.push_back(pl::greedy_optimal_lengths(n_max, k));
    for (const auto limit : kTransferLimits) {
      TransferRow row{k, limit, {}, {}};
      for (std::int64_t n = 2; n <= n_max; ++n) {
        row.two.push_back(pl::greedy_transfers(n, k, limit).length);
        row.three.push_back(pl::greedy_reducers(n, k, limit).length);
      }
      out.rows.push_back(std::move(row));
    }
  }
  return out;
}

std::string transfer_csv(const TransferRows& t, std::int64_t n_max) {
  std::string csv = "n";
  for (const auto& r : t.rows) {
    csv += fmt::format(",alg2_d{0:g}_c{1:g}_K{2},alg3_d{0:g}_c{1:g}_K{2}", r.costs.d, r.costs.c,
                       r.limit);
  }
  for (const auto& k : kTransferPairs) csv += fmt::format(",alg1_d{:g}_c{:g}", k.d, k.c);
  csv += "\n";
  for (std::int64_t n = 2; n <= n_max; ++n) {
    const auto i = static_cast<std::size_t>(n - 2);
    csv += fmt::format("{}", n);
    for (const auto& r : t.rows) csv += fmt::format(",{:g},{:g}", r.two[i], r.three[i]);
    for (const auto& u : t.unlimited) csv += fmt::format(",{:g}", u[static_cast<std::size_t>(n)]);
    csv += "\n";
  }
  return csv;
}

std::string transfer_svg(const TransferRows& t, std::int64_t n_max) {
  LineChart chart;
  chart.title = "Canon & Antoniu, K concurrent transfers, d < c: Algorithm 3 / Algorithm 2";
  chart.x_label = "number of elements n";
  chart.y_label = "length ratio";
  chart.log_x = true;
  chart.caption =
      "Algorithm 3 (K reducers: what transfers=K ran before) over Algorithm 2 (K transfers)";
  for (const auto& r : t.rows) {
    Series series{fmt::format("d = {:g}, c = {:g}, K = {}", r.costs.d, r.costs.c, r.limit), {}, {}};
    for (std::int64_t n = 2; n <= n_max; ++n) {
      const auto i = static_cast<std::size_t>(n - 2);
      series.x.push_back(static_cast<double>(n));
      series.y.push_back(r.three[i] / r.two[i]);
    }
    chart.series.push_back(std::move(series));
  }
  return render_svg(chart);
}

// The largest Algorithm 3 / Algorithm 2 ratio of a row and the first n that reaches it.
nlohmann::json transfer_worst(const TransferRow& row, std::int64_t n_max) {
  double worst = 0;
  std::int64_t worst_n = 0;
  for (std::int64_t n = 2; n <= n_max; ++n) {
    const auto i = static_cast<std::size_t>(n - 2);
    const double ratio = row.three[i] / row.two[i];
    if (ratio > worst + 1e-12) {
      worst = ratio;
      worst_n = n;
    }
  }
  return {{"d", row.costs.d},
          {"c", row.costs.c},
          {"K", row.limit},
          {"max_ratio_alg3_over_alg2", worst},
          {"first_n", worst_n}};
}

// The table of the sample sizes; `all_equal` is cleared where a simulated makespan differs
// from Algorithm 2's length.
std::string transfer_table(const TransferRows& t, const std::vector<std::int64_t>& sizes,
                           bool& all_equal) {
  std::string body = "| d, c, K |";
  for (const auto n : sizes) body += fmt::format(" n = {} |", n);
  body += "\n|---|";
  for (std::size_t i = 0; i < sizes.size(); ++i) body += "---|";
  body += "\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    const auto& u = t.unlimited[r / kTransferLimits.size()];
    body += fmt::format("| {:g}, {:g}, {} |", row.costs.d, row.costs.c, row.limit);
    for (const auto n : sizes) {
      const auto i = static_cast<std::size_t>(n - 2);
      if (simulated_transfers(n, row.costs, row.limit) != row.two[i]) all_equal = false;
      body += fmt::format(" {:g} / {:g} / {:g} |", row.two[i], row.three[i],
                          u[static_cast<std::size_t>(n)]);
    }
    body += "\n";
  }
  return body;
}

// Appends the K-transfer section to the result: its table, CSV, chart and JSON.
void transfer_section(std::int64_t n_max, ExperimentResult& result, nlohmann::json& doc) {
  const TransferRows rows = transfer_rows(n_max);
  result.files.emplace_back("canon-transfers.csv", transfer_csv(rows, n_max));
  result.files.emplace_back("canon-transfers.svg", transfer_svg(rows, n_max));

  std::vector<std::int64_t> sizes{4, 8, 16, 20, 50, 64, 100, 256, 1000};
  std::erase_if(sizes, [&](std::int64_t n) { return n > n_max; });
  bool all_equal = true;
  const std::string body = transfer_table(rows, sizes, all_equal);
  for (const auto& row : rows.rows) doc["transfers"].push_back(transfer_worst(row, n_max));
  std::string& t = result.table;
  t += fmt::format(
      "\nK concurrent transfers, d < c (§6.1), n = 2..{}. Each cell: Algorithm 2 (the K-transfer "
      "optimum, Thm 7) / Algorithm 3 with K reducers (what `transfers=K` ran before issue 33) / "
      "Algorithm 1 (no limit). Every Algorithm 2 entry was also simulated as "
      "reduce/greedy_overlap transfers=K (d = alpha, c = gamma, one element, overlap, one port, "
      "half duplex), its sends held to their fixed start times: ",
      n_max);
  t += all_equal ? "the simulated makespans equal Algorithm 2's lengths in every cell.\n\n"
                 : "**some simulated makespans differ from Algorithm 2's lengths.**\n\n";
  t += body;
  doc["transfers_n_max"] = n_max;
  doc["transfers_simulated_equal"] = all_equal;
}

// ---- Figure 2 --------------------------------------------------------------------------

constexpr ReductionCosts kEqual{1, 1};
constexpr ReductionCosts kZero{1, 0};

// The optima at d = c and at min(d, c) = 0, and the four strategy curves over them.
struct Figure2 {
  std::int64_t n_max;
  std::vector<Time> opt_equal, opt_zero;  // per n
  std::array<std::vector<Time>, 4> len;   // the curves' strategy lengths, per n
  std::array<Curve, 4> curves;
};

Figure2 figure2(std::int64_t n_max) {
  Figure2 f{n_max,
            pl::greedy_optimal_lengths(n_max, kEqual),
            pl::greedy_optimal_lengths(n_max, kZero),
            {},
            {}};
  f.curves = {curve("binomial strategy / optimum, d = c = 1, tie = lowest index", n_max,
                    f.opt_equal, f.len[0], &pl::binomial_strategy, kEqual, TieBreak::kLowestIndex),
              curve("binomial strategy / optimum, d = c = 1, tie = highest index", n_max,
                    f.opt_equal, f.len[1], &pl::binomial_strategy, kEqual, TieBreak::kHighestIndex),
              curve("Fibonacci strategy / optimum, d = 1, c = 0, tie = lowest index", n_max,
                    f.opt_zero, f.len[2], &pl::fibonacci_strategy, kZero, TieBreak::kLowestIndex),
              curve("Fibonacci strategy / optimum, d = 1, c = 0, tie = highest index", n_max,
                    f.opt_zero, f.len[3], &pl::fibonacci_strategy, kZero, TieBreak::kHighestIndex)};
  return f;
}

std::string figure2_csv(const Figure2& f) {
  std::string csv =
      "n,opt_d_eq_c,lemma5_d_eq_c,prop6_d_eq_c,binomial_low,binomial_high,opt_min0,"
      "lemma5_min0,prop6_min0,fibonacci_low,fibonacci_high\n";
  for (std::int64_t n = 2; n <= f.n_max; ++n) {
    const auto i = static_cast<std::size_t>(n);
    csv += fmt::format("{},{:g},{:g},{:g},{:g},{:g},{:g},{:g},{:g},{:g},{:g}\n", n, f.opt_equal[i],
                       pl::lemma5_lower_bound(n, kEqual), pl::prop6_upper_bound(n, kEqual),
                       f.len[0][i], f.len[1][i], f.opt_zero[i], pl::lemma5_lower_bound(n, kZero),
                       pl::prop6_upper_bound(n, kZero), f.len[2][i], f.len[3][i]);
  }
  return csv;
}

std::string figure2_svg(const Figure2& f) {
  LineChart chart;
  chart.title = "Canon & Antoniu, Figure 2: strategy length / optimal length";
  chart.x_label = "number of elements n";
  chart.y_label = "ratio to the optimum";
  chart.log_x = true;
  chart.caption =
      "exact strategy lengths under the paper's model (d, c per curve); 1 = the optimum";
  for (const auto& c : f.curves) {
    Series s{c.name, {}, c.ratio};
    for (std::int64_t n = 2; n <= f.n_max; ++n) s.x.push_back(static_cast<double>(n));
    chart.series.push_back(std::move(s));
  }
  return render_svg(chart);
}

nlohmann::json figure2_json(const Figure2& f) {
  nlohmann::json doc;
  doc["n_max"] = f.n_max;
  doc["tie_rule"] = "argmin ties go to the lowest (or highest) machine index";
  for (const auto& c : f.curves) {
    doc["curves"].push_back({{"name", c.name},
                             {"max_ratio", c.worst},
                             {"first_n", c.worst_first},
                             {"last_n", c.worst_last}});
  }
  return doc;
}

// The curves' worst ratios, the bounds beside the optimum and the optimum for several (d, c).
std::string figure2_table(const Figure2& f, bool quick) {
  std::string t = fmt::format(
      "Canon & Antoniu, Figure 2, n = 2..{}{}. Tie rule: the greedy's argmin picks the lowest "
      "machine index (the paper does not say; the highest-index rule is shown too). The "
      "strategies' trees are timed as soon as possible with the real costs.\n\n"
      "| curve | max ratio | reached at | asymptote |\n|---|---|---|---|\n",
      f.n_max, quick ? " (quick)" : "");
  const double phi = (1 + std::sqrt(5.0)) / 2;
  const std::array<double, 4> asymptote{2 * std::log(phi) / std::log(2.0),
                                        2 * std::log(phi) / std::log(2.0), 1 / std::log2(phi),
                                        1 / std::log2(phi)};
  for (std::size_t i = 0; i < f.curves.size(); ++i) {
    t += fmt::format("| {} | {:.4f} | first n = {}, last n = {} | {:.4f} |\n", f.curves[i].name,
                     f.curves[i].worst, f.curves[i].worst_first, f.curves[i].worst_last,
                     asymptote[i]);
  }
  t += "\nOptimum beside Lemma 5 (ceil(log2 n)·max(d,c)) and Prop. 6 (ceil(log2 n)·(d+c)), "
       "tie = lowest index:\n\n"
       "| n | d=c=1: Lemma 5 | optimum | Prop. 6 | binomial strategy | (1,0): Lemma 5 | "
       "optimum | Prop. 6 | Fibonacci strategy |\n|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::int64_t> sizes{2, 4, 8, 16, 64, 100, 256, 1000, 1024, 4096, 10000};
  std::erase_if(sizes, [&](std::int64_t n) { return n > f.n_max; });
  for (const auto n : sizes) {
    const auto i = static_cast<std::size_t>(n);
    t +=
        fmt::format("| {} | {:g} | {:g} | {:g} | {:g} | {:g} | {:g} | {:g} | {:g} |\n", n,
                    pl::lemma5_lower_bound(n, kEqual), f.opt_equal[i],
                    pl::prop6_upper_bound(n, kEqual), f.len[0][i], pl::lemma5_lower_bound(n, kZero),
                    f.opt_zero[i], pl::prop6_upper_bound(n, kZero), f.len[2][i]);
  }
  t += "\n" + optimum_table(sizes);
  return t;
}

}  // namespace

ExperimentResult run_canon_ratios(const ExperimentOptions& options) {
  const std::int64_t n_max = options.quick ? 300 : 10000;
  const Figure2 f = figure2(n_max);
  ExperimentResult result;
  result.files.emplace_back("canon-ratios.csv", figure2_csv(f));
  result.files.emplace_back("canon-ratios.svg", figure2_svg(f));
  result.table = figure2_table(f, options.quick);
  nlohmann::json doc = figure2_json(f);
  transfer_section(std::min<std::int64_t>(n_max, 1000), result, doc);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
