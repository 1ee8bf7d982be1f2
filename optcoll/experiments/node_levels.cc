// SPDX-License-Identifier: Apache-2.0
// File: experiment `node-levels`: flat against node-aware algorithms on clusters of N nodes
// of M ranks (ranks in blocks), allreduce and bcast of 1 MiB, N = 2 .. 256 with M = 16
// (quick: N = 2 .. 8, M = 4): each algorithm's simulated time under a two-level model (the
// placement, one NIC per node shared by its ranks), the lower bound, and for the node-aware
// ones their closed form (the sum of the levels' estimates, which prices no NIC sharing).
// The model's numbers are assumptions of a commodity cluster, not measurements: within a
// node alpha = 0.5 us, beta = 50 ps/B (20 GB/s); between nodes alpha = 2 us, beta =
// 100 ps/B (10 GB/s per NIC); gamma = 100 ps/B, copy = 50 ps/B.
#include <array>
#include <string>
#include <string_view>
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

struct Case {
  CollectiveKind kind;
  std::vector<std::string_view> algorithms;  // flat ones first, then the node-aware ones
};

const std::array<Case, 2> kCases{{
    {CollectiveKind::kAllreduce,
     {"allreduce/rabenseifner", "allreduce/recursive_doubling", "allreduce/hybrid",
      "allreduce/node_aware", "allreduce/node_multileader"}},
    {CollectiveKind::kBcast,
     {"bcast/binomial", "bcast/scatter_doubling_allgather", "bcast/double_binary",
      "bcast/node_aware"}},
}};

constexpr Count kBytes = Count{1} << 20;

CostModel two_level_model(std::int32_t nodes, Rank per_node) {
  CostModel m = reference_cluster_model();
  m.alpha = 0.5e-6;
  m.beta = 50e-12;
  m.inter_alpha = 2e-6;
  m.inter_beta = 100e-12;
  m.gamma = 100e-12;
  m.copy = 50e-12;
  m.placement = block_placement(nodes, per_node);
  return m;
}

struct Row {
  std::string collective;
  std::int32_t nodes = 0;
  Rank per_node = 0;
  std::string algorithm;
  std::string params;
  Time time = 0;
  Time bound = 0;
  std::optional<Time> closed_form;
};

Row measure(const Case& c, std::string_view algorithm, std::int32_t nodes, Rank per_node) {
  const CostModel m = two_level_model(nodes, per_node);
  const Rank p = nodes * per_node;
  const auto spec = make_spec(c.kind, p, kBytes / 8);  // doubles
  const auto& info = algorithms::lookup(algorithm, c.kind);
  const Schedule s = algorithms::build(info, spec, {}, m);
  Row row;
  row.collective = std::string(collective_name(c.kind));
  row.nodes = nodes;
  row.per_node = per_node;
  row.algorithm = std::string(info.short_name());
  row.params = s.params;
  row.time = simulate(s, m).makespan;
  row.bound = lower_bound(Layout(spec), m).value_or(0);
  if (info.short_name().starts_with("node_")) {
    if (const auto e = info.estimate(spec, algorithms::resolve_params(info, {}), m)) {
      row.closed_form = e->time;
    }
  }
  return row;
}

}  // namespace

ExperimentResult run_node_levels(const ExperimentOptions& options) {
  const Rank per_node = options.quick ? 4 : 16;
  const std::vector<std::int32_t> node_counts =
      options.quick ? std::vector<std::int32_t>{2, 4, 8}
                    : std::vector<std::int32_t>{2, 4, 8, 16, 32, 64, 128, 256};
  ExperimentResult result;
  result.table = fmt::format(
      "Flat and node-aware algorithms, {} ranks per node in blocks, 1 MiB (simulated; model: "
      "within a node alpha 0.5 us, beta 50 ps/B; between nodes alpha 2 us, beta 100 ps/B, one "
      "NIC per node; gamma 100 ps/B, copy 50 ps/B){}\n\n"
      "| collective | nodes | ranks | algorithm | time | time / bound | closed form | chosen "
      "phases |\n|---|---|---|---|---|---|---|---|\n",
      per_node, options.quick ? " [quick]" : "");
  std::string csv = "collective,nodes,ranks,algorithm,time,bound,closed_form,params\n";
  nlohmann::json doc = nlohmann::json::array();
  for (const Case& c : kCases) {
    LineChart chart;
    chart.title =
        fmt::format("{} of 1 MiB on N nodes of {} ranks", collective_name(c.kind), per_node);
    chart.x_label = "nodes";
    chart.y_label = "simulated time (s)";
    chart.log_x = true;
    chart.log_y = true;
    chart.caption =
        "two-level model: alpha 0.5/2 us, beta 50/100 ps/B within/between nodes, one NIC per node";
    for (const std::string_view algorithm : c.algorithms) {
      Series series;
      series.name = std::string(algorithm.substr(algorithm.find('/') + 1));
      for (const std::int32_t nodes : node_counts) {
        const Row r = measure(c, algorithm, nodes, per_node);
        if (options.progress) {
          options.progress(fmt::format("{} {} nodes: {}", r.collective, nodes, r.algorithm));
        }
        series.x.push_back(nodes);
        series.y.push_back(r.time);
        const std::string closed =
            r.closed_form ? format_time(*r.closed_form, two_level_model(1, 1)) : "-";
        result.table += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {} | {} |\n", r.collective,
                                    r.nodes, r.nodes * r.per_node, r.algorithm,
                                    format_time(r.time, two_level_model(1, 1)), r.time / r.bound,
                                    closed, r.params.empty() ? "-" : r.params);
        csv += fmt::format("{},{},{},{},{:.9g},{:.9g},{},\"{}\"\n", r.collective, r.nodes,
                           r.nodes * r.per_node, r.algorithm, r.time, r.bound,
                           r.closed_form ? fmt::format("{:.9g}", *r.closed_form) : "", r.params);
        doc.push_back(
            {{"collective", r.collective},
             {"nodes", r.nodes},
             {"ranks", r.nodes * r.per_node},
             {"algorithm", r.algorithm},
             {"time", r.time},
             {"bound", r.bound},
             {"closed_form", r.closed_form ? nlohmann::json(*r.closed_form) : nlohmann::json()},
             {"params", r.params}});
      }
      chart.series.push_back(std::move(series));
    }
    result.files.emplace_back(fmt::format("node-levels-{}.svg", collective_name(c.kind)),
                              render_svg(chart));
  }
  result.files.emplace_back("node-levels.csv", csv);
  result.json = doc.dump(2);
  return result;
}

}  // namespace optcoll::experiments
