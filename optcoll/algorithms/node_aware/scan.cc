// SPDX-License-Identifier: Apache-2.0
// scan/node_aware, exscan/node_aware — prefix reductions in three phases over the runs of
// consecutive ranks that share a node (patterns::run_levels; where nodes are blocks of
// consecutive ranks the runs are the nodes): a scan (exscan) within each run; an exscan of
// the runs' totals among the runs' last ranks, which gives each run the prefix of the runs
// before it; a bcast of that prefix from each run's last rank within the run (not in the
// first run, which has none); then every rank combines the prefix on the left of what it
// holds. exscan's last rank of a run first adds its own input to its exscan to form the
// run's total, and a run's first rank takes the prefix as its whole result.
//
//   scan, 2 nodes x 3 ranks (runs 0..2, 3..5): intra scans give r2 = x0..x2, r5 = x3..x5;
//   inter exscan 2 -> 5: r5 holds P = x0..x2; bcast P 5 -> 3, 4; r3..r5: P ⊕ own prefix
//
// Cost: max T_intra(m_run, n) + T_exscan(R, n) + max T_bcast(m_run, n) + nγ, R runs (exscan:
//   + n·copy + nγ on the runs' last ranks before the inter phase); n crosses the network
//   about once per run.
// Restrictions: nodes auto or 1..p; intra, inter and down auto or flat registry algorithms
//   of their kinds (intra: scan or exscan; inter: exscan; down: bcast). Any operator: run by
//   run is rank order. A placement that interleaves nodes gives short runs (round robin:
//   every rank its own run, i.e. the inter algorithm on all ranks).
// Reference: MPICH's SMP-aware scan (intra-node scan, inter-node exscan of the node totals,
//   intra-node bcast, local combine); Open MPI coll/han has no scan.

#include <algorithm>

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"intra", "auto", "scan (exscan) within each run of consecutive ranks on one node"},
    {"inter", "auto", "exscan of the runs' totals among the runs' last ranks"},
    {"down", "auto", "bcast of the prefix before each run from its last rank"},
};
constexpr patterns::LevelPhase kScanPhases[] = {
    {"intra", CollectiveKind::kScan, patterns::Level::kIntra, "recursive_doubling"},
    {"inter", CollectiveKind::kExscan, patterns::Level::kInter, "recursive_doubling"},
    {"down", CollectiveKind::kBcast}};
constexpr patterns::LevelPhase kExscanPhases[] = {
    {"intra", CollectiveKind::kExscan, patterns::Level::kIntra, "recursive_doubling"},
    {"inter", CollectiveKind::kExscan, patterns::Level::kInter, "recursive_doubling"},
    {"down", CollectiveKind::kBcast}};
enum Phase : std::size_t { kIntra, kInter, kDown };

std::span<const patterns::LevelPhase> phases_of(CollectiveKind kind) {
  if (kind == CollectiveKind::kScan) return kScanPhases;
  return kExscanPhases;
}

patterns::PhasePlan plan_of(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  patterns::PhasePlan plan(patterns::run_levels(spec.nranks, params, model), phases_of(spec.kind));
  const auto& levels = plan.levels();
  for (std::int32_t run = 0; run < levels.nodes(); ++run) {
    const Rank size = levels.size(run);
    plan.specs(kIntra).push_back(patterns::level_spec(spec, spec.kind, size, spec.count));
    if (run == 0) continue;
    plan.specs(kDown).push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, size, spec.count, size - 1));
  }
  plan.specs(kInter).push_back(
      patterns::level_spec(spec, CollectiveKind::kExscan, levels.nodes(), spec.count));
  plan.choose(params);
  return plan;
}

// What run g's last rank gives the runs' exscan: the run's total. A scan leaves it in that
// rank's output; an exscan leaves the total without the rank's own input, which it adds in
// scratch (a run of one rank: its input). The last run's total reaches no later run, so its
// input stands in for it.
Slice run_total(Stitcher& stitcher, const Layout& layout, const patterns::NodeLevels& levels,
                std::size_t g) {
  const Rank last = levels.leaders[g];
  const Slice input = node_aware::whole(layout, last, Buf::kInput);
  if (layout.spec().kind == CollectiveKind::kScan) {
    return node_aware::whole(layout, last, Buf::kOutput);
  }
  if (levels.members[g].size() == 1 || g + 1 == levels.members.size()) return input;
  const Slice total = stitcher.scratch(last, layout.spec().count);
  stitcher.copy(last, node_aware::whole(layout, last, Buf::kOutput), total);
  stitcher.reduce(last, input, total, Side::kRight);
  return total;
}

}  // namespace

std::span<const ParamInfo> prefix_node_aware_params() { return kParams; }

std::optional<std::string> prefix_node_aware_why_not(const CollectiveSpec& spec,
                                                     const Params& params) {
  return patterns::level_params_why_not(spec, params, phases_of(spec.kind));
}

Schedule build_prefix_node_aware(const CollectiveSpec& spec, const Params& params,
                                 const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  const bool exclusive = spec.kind == CollectiveKind::kExscan;
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.levels();
  const std::size_t runs = levels.members.size();
  Stitcher stitcher(spec, fmt::format("{}/node_aware", collective_name(spec.kind)));
  // prefix[g][i]: where member i of run g (g >= 1) receives the prefix of the runs before;
  // an exscan's first rank of a run takes it straight into its output (its whole result).
  std::vector<std::vector<Slice>> prefix(runs);
  for (std::size_t g = 1; g < runs; ++g) {
    for (std::size_t i = 0; i < levels.members[g].size(); ++i) {
      const Rank r = levels.members[g][i];
      prefix[g].push_back(exclusive && i == 0 ? node_aware::whole(layout, r, Buf::kOutput)
                                              : stitcher.scratch(r, spec.count));
    }
  }
  node_aware::append_phase(stitcher, plan, kIntra, node_aware::whole_buffers(layout, plan, kIntra));
  std::vector<Slice> totals;
  for (std::size_t g = 0; g < runs; ++g) totals.push_back(run_total(stitcher, layout, levels, g));
  node_aware::append_phase(stitcher, plan, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    if (buf == Buf::kInput) return totals[g];
    return g == 0 ? Slice{Buf::kOutput, 0, 0} : prefix[g].back();
  });
  const std::vector<std::vector<Rank>> later_runs(levels.members.begin() + 1, levels.members.end());
  node_aware::append_phase(stitcher, plan, kDown, later_runs, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) return Slice{Buf::kInput, 0, 0};
    return prefix[g + 1][static_cast<std::size_t>(i)];
  });
  for (std::size_t g = 1; g < runs; ++g) {
    for (std::size_t i = exclusive ? 1 : 0; i < levels.members[g].size(); ++i) {
      const Rank r = levels.members[g][i];
      stitcher.reduce(r, prefix[g][i], node_aware::whole(layout, r, Buf::kOutput), Side::kLeft);
    }
  }
  stitcher.set_params(plan.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the three phases one after the other, the final combination where a rank
// makes one (a scan's ranks after the first run; an exscan's after the first rank of a later
// run), and an exscan's run totals where a run other than the last has several ranks (a copy
// and a combination before the inter phase).
std::optional<Estimate> estimate_prefix_node_aware(const CollectiveSpec& spec, const Params& params,
                                                   const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  auto estimate = plan.estimate();
  if (!estimate) return std::nullopt;
  const auto& runs = plan.levels().members;
  const bool exclusive = spec.kind == CollectiveKind::kExscan;
  const std::size_t combining = exclusive ? 2 : 1;  // a run of this many has a rank that combines
  const bool combines = std::any_of(runs.begin() + 1, runs.end(),
                                    [&](const auto& run) { return run.size() >= combining; });
  const bool totals = exclusive && std::any_of(runs.begin(), runs.end() - 1,
                                               [](const auto& run) { return run.size() > 1; });
  const Time combine = model.reduce_time(spec.count, spec.elem_bytes);
  if (combines) estimate->time += combine;
  if (totals) estimate->time += model.copy_time(spec.count, spec.elem_bytes) + combine;
  estimate->work += 2.0 * spec.nranks;
  return estimate;
}

}  // namespace optcoll::algorithms
