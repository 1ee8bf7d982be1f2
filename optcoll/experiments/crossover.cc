// SPDX-License-Identifier: Apache-2.0
// File: experiment `crossover` (docs/experiments.md): Chan, Heimlich, Purkayastha and van de
// Geijn's short/long comparison from the simulator. For p = 64, α = 1e-5 s, β = 1e-9 s/B,
// γ = 1e-10 s/B (one port, full duplex, no overlap, copy free), the message size at which
// each registry algorithm that wins for long messages overtakes the MST algorithm of its
// collective (bisection to the byte, or to the block for per-block collectives), next to
// the values derived from the paper's formulas where they describe that algorithm (the bucket
// algorithms, §2.6; the 2-D broadcast on the paper's 8 x 8 grid, §2.7, run on that grid:
// docs/math/alpha-beta-costs.md); and one chart
// per collective of predicted time against message size (8 B .. 64 MiB) with every registry
// algorithm. The registry is iterated, so algorithms merged later appear without changes here.
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/algorithms/registry.h"
#include "optcoll/experiments/experiment.h"
#include "optcoll/experiments/svg_chart.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::experiments {
namespace {

CostModel crossover_model() {
  CostModel m;
  m.alpha = 1e-5;
  m.beta = 1e-9;
  m.gamma = 1e-10;
  m.copy = 0;
  m.ports = 1;
  m.duplex = Duplex::kFull;
  m.overlap = false;
  m.per_byte = true;
  return m;
}

// n = the message (bcast, reduce, allreduce, scan, exscan) or the total of all blocks, in bytes;
// one-byte elements so that sizes are exact. Per-block kinds get n/p bytes per block (alltoall: per
// pair, n = what each rank sends).
bool whole_message(CollectiveKind kind) { return count_is_message(kind); }
Count unit_bytes(CollectiveKind kind, Rank p) { return whole_message(kind) ? 1 : p; }

CollectiveSpec spec_for(CollectiveKind kind, Rank p, Count bytes) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = p;
  spec.elem_bytes = 1;
  const Count count = std::max<Count>(1, bytes / unit_bytes(kind, p));
  if (takes_counts(kind)) {
    const auto cells = kind == CollectiveKind::kAlltoallv ? static_cast<std::size_t>(p * p)
                                                          : static_cast<std::size_t>(p);
    spec.counts.assign(cells, count);
  } else {
    spec.count = count;
  }
  return spec;
}

// The paper's 2-D broadcasts run on its 8 x 8 grid at p = 64 (docs/math/alpha-beta-costs.md
// §2.7), not on the grid `dims=auto` would pick; every other algorithm takes its defaults.
algorithms::Params paper_params(const algorithms::AlgorithmInfo& info, Rank p) {
  algorithms::Params given;
  const bool two_d = info.name.starts_with("bcast/hybrid_2d_");
  if (two_d && p == 64) given.set("dims", "8x8");
  return algorithms::resolve_params(info, given);
}

std::optional<Time> predict(const algorithms::AlgorithmInfo& info, CollectiveKind kind, Rank p,
                            Count bytes, const CostModel& model) {
  const CollectiveSpec spec = spec_for(kind, p, bytes);
  const auto params = paper_params(info, p);
  if (algorithms::why_not(info, spec, params)) return std::nullopt;
  const SimResult r = simulate(algorithms::build(info, spec, params, model), model);
  if (r.status != SimStatus::kOk) return std::nullopt;
  return r.makespan;
}

// The MST algorithm of each collective of the paper's table.
struct PaperPair {
  CollectiveKind kind;
  std::string_view mst;
};
constexpr PaperPair kPairs[] = {
    {CollectiveKind::kBcast, "bcast/binomial"},
    {CollectiveKind::kReduce, "reduce/binomial"},
    {CollectiveKind::kAllgather, "allgather/gather_then_bcast"},
    {CollectiveKind::kReduceScatterBlock, "reduce_scatter_block/reduce_then_scatter"},
    {CollectiveKind::kAllreduce, "allreduce/reduce_then_bcast"},
};

// The crossovers the paper's formulas give against the MST algorithm (p = 64), for the
// algorithms they describe: the bucket algorithms (docs/math/alpha-beta-costs.md §2.6) and
// the 2-D broadcast's options 2 and 3 on 8 x 8 (§2.7). Other rows have none.
struct PaperCrossover {
  std::string_view algorithm;
  double bytes;
  std::string_view what;
};
constexpr PaperCrossover kPaperCrossovers[] = {
    {"bcast/scatter_ring_allgather", 156279, "§2.6, MST scatter + bucket allgather"},
    {"bcast/hybrid_2d_scatter_mst", 18065, "§2.7, option 2 on 8 x 8"},
    {"bcast/hybrid_2d_scatter", 34729, "§2.7, option 3 on 8 x 8"},
    {"reduce/bucket", 138987, "§2.6, bucket reduce-scatter + MST gather"},
    {"allgather/ring", 85000, "§2.6, bucket"},
    {"reduce_scatter_block/ring", 78443, "§2.6, bucket"},
    {"allreduce/ring", 108233, "§2.6, bucket reduce-scatter + allgather"},
};

const PaperCrossover* paper_crossover(std::string_view algorithm) {
  for (const auto& c : kPaperCrossovers) {
    if (c.algorithm == algorithm) return &c;
  }
  return nullptr;
}

struct Crossover {
  std::string other;
  Count bytes = 0;  // the first size at which `other` is strictly faster than the MST one
};

// Sizes 8 B · 2^k up to `largest`.
std::vector<Count> size_grid(Count largest, int step) {
  std::vector<Count> sizes;
  for (Count b = 8; b <= largest; b <<= step) sizes.push_back(b);
  return sizes;
}

// The first size where `other` beats `mst`, if it loses at the smallest size and wins at the
// largest: the grid brackets it, bisection on whole units finds it.
std::optional<Count> crossover(const algorithms::AlgorithmInfo& mst,
                               const algorithms::AlgorithmInfo& other, CollectiveKind kind, Rank p,
                               const std::vector<Count>& grid, const CostModel& model) {
  auto other_wins = [&](Count bytes) -> std::optional<bool> {
    const auto a = predict(mst, kind, p, bytes, model);
    const auto b = predict(other, kind, p, bytes, model);
    if (!a || !b) return std::nullopt;
    return *b < *a;
  };
  const auto first = other_wins(grid.front());
  const auto last = other_wins(grid.back());
  if (!first || !last || *first || !*last) return std::nullopt;
  const Count unit = unit_bytes(kind, p);
  Count lo = std::max<Count>(1, grid.front() / unit);  // other does not win at lo
  for (std::size_t i = 1; i < grid.size(); ++i) {
    const auto wins = other_wins(grid[i]);
    if (!wins) return std::nullopt;
    if (!*wins) {
      lo = grid[i] / unit;
      continue;
    }
    Count hi = grid[i] / unit;  // other wins at hi
    while (hi - lo > 1) {
      const Count mid = lo + (hi - lo) / 2;
      const auto w = other_wins(mid * unit);
      if (!w) return std::nullopt;
      (*w ? hi : lo) = mid;
    }
    return hi * unit;
  }
  return std::nullopt;
}

std::string human_bytes(double bytes) {
  if (bytes >= 1 << 20) return fmt::format("{:g} MiB", bytes / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:g} KiB", bytes / (1 << 10));
  return fmt::format("{:g} B", bytes);
}

using Markers = std::map<CollectiveKind, std::vector<std::pair<double, std::string>>>;

// The crossover table's rows (appended to `table`) and JSON rows (into doc["crossovers"]);
// returns the crossovers per collective, the charts' markers.
Markers crossover_rows(Rank p, const std::vector<Count>& grid, const CostModel& model,
                       std::string& table, nlohmann::json& doc) {
  Markers markers;
  for (const auto& pair : kPairs) {
    const auto* mst = algorithms::find_algorithm(pair.mst);
    if (mst == nullptr) continue;
    for (const auto* other : algorithms::algorithms_for(pair.kind)) {
      if (other == mst) continue;
      const auto bytes = crossover(*mst, *other, pair.kind, p, grid, model);
      if (!bytes) continue;
      const PaperCrossover* paper = paper_crossover(other->name);
      const bool on_paper_grid = p == 64;  // the paper's values are for p = 64
      const std::string paper_text = paper != nullptr && on_paper_grid
                                         ? fmt::format("{:.0f} B ({})", paper->bytes, paper->what)
                                         : std::string("—");
      table += fmt::format("| {} | {} | {} | {} B ({}) | {} |\n", collective_name(pair.kind),
                           mst->short_name(), other->short_name(), *bytes, human_bytes(*bytes),
                           paper_text);
      nlohmann::json row = {{"collective", collective_name(pair.kind)},
                            {"mst", mst->name},
                            {"other", other->name},
                            {"simulated_bytes", *bytes}};
      if (paper != nullptr && on_paper_grid) row["paper_bytes"] = paper->bytes;
      doc["crossovers"].push_back(row);
      markers[pair.kind].emplace_back(static_cast<double>(*bytes),
                                      std::string(other->short_name()));
    }
  }
  return markers;
}

// One collective's chart of every algorithm's predicted time against size; its points are
// appended to `csv`, and the fastest algorithm at each grid size is returned ("" where none).
std::vector<std::string> size_chart(CollectiveKind kind, Rank p, const std::vector<Count>& grid,
                                    const CostModel& model, LineChart& chart, std::string& csv) {
  chart.title = fmt::format("{}, p = {}: predicted time vs message size", collective_name(kind), p);
  chart.x_label = whole_message(kind) ? "message size (bytes)" : "total size of all blocks (bytes)";
  chart.y_label = "predicted time (s)";
  chart.log_x = true;
  chart.log_y = true;
  chart.caption =
      "model: alpha = 1e-5 s, beta = 1e-9 s/B, gamma = 1e-10 s/B; one port, full duplex, no "
      "overlap; dashed lines: crossovers";
  std::vector<std::pair<std::string, Time>> best(grid.size());
  for (const auto* info : algorithms::algorithms_for(kind)) {
    Series series{std::string(info->short_name()), {}, {}};
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const auto t = predict(*info, kind, p, grid[i], model);
      if (!t) continue;
      series.x.push_back(static_cast<double>(grid[i]));
      series.y.push_back(*t);
      csv += fmt::format("{},{},{},{:.9g}\n", collective_name(kind), info->name, grid[i], *t);
      if (best[i].first.empty() || *t < best[i].second) best[i] = {series.name, *t};
    }
    if (!series.x.empty()) chart.series.push_back(std::move(series));
  }
  std::vector<std::string> fastest;
  for (const auto& b : best) fastest.push_back(b.first);
  return fastest;
}

// "binomial from 8 B, circulant from 4 KiB, ...": where the fastest algorithm changes.
std::string winners_text(const std::vector<std::string>& fastest, const std::vector<Count>& grid) {
  std::string winners;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (i == 0 || fastest[i] != fastest[i - 1]) {
      winners += fmt::format("{}{} from {}", winners.empty() ? "" : ", ", fastest[i],
                             human_bytes(static_cast<double>(grid[i])));
    }
  }
  return winners;
}

}  // namespace

ExperimentResult run_crossover(const ExperimentOptions& options) {
  const CostModel model = crossover_model();
  const Rank p = options.quick ? 8 : 64;
  const Count largest = options.quick ? Count{1} << 16 : Count{64} << 20;
  const auto grid = size_grid(largest, options.quick ? 3 : 1);
  ExperimentResult result;
  nlohmann::json doc;
  doc["p"] = p;
  doc["model"] = {{"alpha", model.alpha}, {"beta", model.beta}, {"gamma", model.gamma}};
  result.table = fmt::format(
      "Crossovers for p = {}, α = 1e-5 s, β = 1e-9 s/B, γ = 1e-10 s/B (one port, full duplex, "
      "no overlap){}: the first message size (total bytes) at which each algorithm that wins "
      "for long messages beats the MST one\n\n"
      "| collective | MST algorithm | long-message algorithm | simulated crossover | paper's "
      "formulas |\n|---|---|---|---|---|\n",
      p, options.quick ? " [quick: p = 8, up to 64 KiB]" : "");
  Markers markers = crossover_rows(p, grid, model, result.table, doc);
  std::string csv = "collective,algorithm,bytes,predicted_seconds\n";
  result.table += "\nFastest algorithm by size (from the plotted grid):\n\n";
  for (const auto kind : all_collectives()) {
    if (kind == CollectiveKind::kBarrier) continue;
    if (options.quick && !markers.contains(kind)) continue;
    LineChart chart;
    chart.markers = markers[kind];
    const auto fastest = size_chart(kind, p, grid, model, chart, csv);
    result.files.emplace_back(fmt::format("crossover-{}.svg", collective_name(kind)),
                              render_svg(chart));
    result.table += fmt::format("- {}: {}\n", collective_name(kind), winners_text(fastest, grid));
  }
  result.files.emplace_back("crossover.csv", csv);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
