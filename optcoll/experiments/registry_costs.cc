// SPDX-License-Identifier: Apache-2.0
// File: experiment `registry-costs`: every registry algorithm's simulated time as the number
// of ranks grows (p = 2..64, a 64 KiB-per-rank problem under the reference cluster model),
// one chart per collective, which algorithm is fastest at each p, and, at the largest p,
// each algorithm's closed form (its header's formula, evaluated as code: estimate.h) beside
// its simulated time, with "exact" where the formula claims to equal the simulation. A map
// of the registry as it stands; the papers' own experiments are separate entries.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/algorithms/registry.h"
#include "optcoll/experiments/experiment.h"
#include "optcoll/experiments/svg_chart.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::experiments {
namespace {

CollectiveSpec spec_for(CollectiveKind kind, Rank p, Count elements) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = p;
  spec.elem_bytes = 8;
  if (kind == CollectiveKind::kBarrier) return spec;
  const Count block = count_is_message(kind) ? elements : std::max<Count>(1, elements / p);
  if (takes_counts(kind)) {
    const std::size_t cells = kind == CollectiveKind::kAlltoallv
                                  ? static_cast<std::size_t>(p) * static_cast<std::size_t>(p)
                                  : static_cast<std::size_t>(p);
    spec.counts.assign(cells, block);
  } else {
    spec.count = block;
  }
  return spec;
}

// One algorithm at the largest p: its formula, what the formula gives and what the
// simulation gives.
struct ClosedFormRow {
  std::string algorithm;
  std::string formula;
  std::optional<algorithms::Estimate> closed_form;
  Time simulated = 0;
};

// A formula as a Markdown table cell ("p | n" must not end the cell).
std::string cell(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string closed_form_table(Rank p, const std::vector<ClosedFormRow>& rows) {
  std::string table = fmt::format(
      "\nClosed forms beside the simulation at p = {} (times in us; \"exact\": the formula "
      "claims the simulated time; \"—\": no formula for this model)\n\n"
      "| algorithm | formula | closed form | simulated | closed / simulated |\n"
      "|---|---|---|---|---|\n",
      p);
  for (const ClosedFormRow& row : rows) {
    if (!row.closed_form) {
      table += fmt::format("| {} | {} | — | {:.2f} | — |\n", row.algorithm, cell(row.formula),
                           row.simulated * 1e6);
      continue;
    }
    table +=
        fmt::format("| {} | {} | {:.2f}{} | {:.2f} | {:.3f} |\n", row.algorithm, cell(row.formula),
                    row.closed_form->time * 1e6, row.closed_form->exact ? " (exact)" : "",
                    row.simulated * 1e6, row.closed_form->time / row.simulated);
  }
  return table;
}

}  // namespace

ExperimentResult run_registry_costs(const ExperimentOptions& options) {
  const CostModel model = reference_cluster_model();
  const Count elements = 8192;  // 64 KiB of doubles per rank (or message)
  std::vector<Rank> ranks{2, 3, 4, 8, 16, 32, 64};
  if (options.quick) ranks = {2, 4, 8};
  ExperimentResult result;
  std::string csv =
      "collective,algorithm,p,elements,predicted_seconds,closed_form_seconds,closed_form_exact\n";
  std::vector<ClosedFormRow> closed_forms;
  nlohmann::json doc = nlohmann::json::array();
  result.table = fmt::format(
      "Fastest registry algorithm per collective and p ({} doubles per rank or message, "
      "reference cluster model; times in us)\n\n| collective |",
      elements);
  for (const Rank p : ranks) result.table += fmt::format(" p={} |", p);
  result.table += "\n|---|";
  for (std::size_t i = 0; i < ranks.size(); ++i) result.table += "---|";
  result.table += "\n";
  for (const auto kind : all_collectives()) {
    LineChart chart;
    chart.title = fmt::format("{}: predicted time vs ranks", collective_name(kind));
    chart.x_label = "ranks p";
    chart.y_label = "predicted time (s)";
    chart.caption = fmt::format(
        "model: the reference cluster model (per byte, times in seconds); {} doubles per rank",
        elements);
    chart.log_x = true;
    chart.log_y = true;
    std::map<Rank, std::pair<std::string, Time>> best;
    for (const auto* info : algorithms::algorithms_for(kind)) {
      Series series{std::string(info->short_name()), {}, {}};
      for (const Rank p : ranks) {
        const CollectiveSpec spec = spec_for(kind, p, elements);
        const algorithms::Params params = algorithms::resolve_params(*info, {});
        if (algorithms::why_not(*info, spec, params)) continue;
        const Time t = simulate(algorithms::build(*info, spec, {}, model), model).makespan;
        const std::optional<algorithms::Estimate> formula = info->estimate(spec, params, model);
        series.x.push_back(p);
        series.y.push_back(t);
        csv += fmt::format("{},{},{},{},{:.9g},{},{}\n", collective_name(kind), info->name, p,
                           elements, t, formula ? fmt::format("{:.9g}", formula->time) : "",
                           formula ? (formula->exact ? "1" : "0") : "");
        nlohmann::json row{{"collective", collective_name(kind)},
                           {"algorithm", info->name},
                           {"p", p},
                           {"predicted_seconds", t}};
        if (formula) {
          row["closed_form_seconds"] = formula->time;
          row["closed_form_exact"] = formula->exact;
        }
        doc.push_back(std::move(row));
        if (p == ranks.back()) {
          closed_forms.push_back({std::string(info->name), std::string(info->cost), formula, t});
        }
        auto& slot = best[p];
        if (slot.first.empty() || t < slot.second) slot = {std::string(info->short_name()), t};
      }
      chart.series.push_back(std::move(series));
    }
    result.files.emplace_back(fmt::format("registry-costs-{}.svg", collective_name(kind)),
                              render_svg(chart));
    result.table += fmt::format("| {} |", collective_name(kind));
    for (const Rank p : ranks) {
      result.table += fmt::format(" {} ({:.1f}) |", best[p].first, best[p].second * 1e6);
    }
    result.table += "\n";
  }
  result.table += closed_form_table(ranks.back(), closed_forms);
  result.files.emplace_back("registry-costs.csv", csv);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
