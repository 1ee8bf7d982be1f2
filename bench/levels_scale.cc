// SPDX-License-Identifier: Apache-2.0
// File: the two-level algorithms at scale: 1,024 nodes x 64 ranks (p = 65,536), each of
// allreduce, bcast and gatherv (random counts, b = 1000) node-aware with auto's phases, timed
// stage by stage: build (phase choice, phase builds, stitching), verify, simulate. The target
// (issue 31): each collective's three stages together under 10 s. One run per stage: the
// stages take seconds, not microseconds.
//
//   build/release/bench/bench_levels_scale [nodes] [ranks_per_node]
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/distributions.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"

namespace {

using optcoll::CollectiveKind;
using optcoll::CollectiveSpec;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The model of docs/performance.md's scale rows: per byte, 0.5 us / 50 GB/s within a node,
// 2 us / 10 GB/s between nodes, one NIC per node.
optcoll::CostModel two_level_model(std::int32_t nodes, optcoll::Rank per_node) {
  optcoll::CostModel model = optcoll::reference_cluster_model();
  model.per_byte = true;
  model.alpha = 5e-7;
  model.beta = 2e-11;
  model.inter_alpha = 2e-6;
  model.inter_beta = 1e-10;
  model.placement = optcoll::block_placement(nodes, per_node);
  return model;
}

void run(const std::string& name, const CollectiveSpec& spec, const optcoll::CostModel& model) {
  auto start = Clock::now();
  const optcoll::Schedule schedule = optcoll::algorithms::build(name, spec, {}, model);
  const double build_s = seconds_since(start);
  start = Clock::now();
  const bool verified = optcoll::verify(schedule).ok();
  const double verify_s = seconds_since(start);
  start = Clock::now();
  const auto result = optcoll::simulate(schedule, model);
  const double simulate_s = seconds_since(start);
  std::printf(
      "%-22s ops %9zu  build %6.2f s  verify %6.2f s  simulate %6.2f s  total %6.2f s"
      "  %s  predicted %.4g s  params %s\n",
      name.c_str(), schedule.op_count(), build_s, verify_s, simulate_s,
      build_s + verify_s + simulate_s, verified ? "verified" : "NOT VERIFIED", result.makespan,
      schedule.params.c_str());
}

// argv[i] as a count of at least 1, or `fallback` when absent; nullopt when not such a count.
std::optional<std::int32_t> count_argument(int argc, char** argv, int i, std::int32_t fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(argv[i], &end, 10);
  if (errno != 0 || end == argv[i] || *end != '\0' || value < 1 || value > (1 << 20)) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(value);
}

}  // namespace

int main(int argc, char** argv) {
  const auto nodes = count_argument(argc, argv, 1, 1024);
  const auto per_node = count_argument(argc, argv, 2, 64);
  if (argc > 3 || !nodes || !per_node ||
      std::int64_t{*nodes} * *per_node > std::numeric_limits<optcoll::Rank>::max()) {
    std::fprintf(stderr,
                 "usage: %s [nodes] [ranks_per_node]: two counts of at least 1 whose product "
                 "fits a rank (default 1024 64)\n",
                 argv[0]);
    return 2;
  }
  const optcoll::Rank p = *nodes * *per_node;
  const optcoll::CostModel model = two_level_model(*nodes, *per_node);
  std::printf("p = %d (%d nodes x %d ranks)\n", p, *nodes, *per_node);
  run("allreduce/node_aware", optcoll::make_spec(CollectiveKind::kAllreduce, p, 1 << 20), model);
  run("bcast/node_aware", optcoll::make_spec(CollectiveKind::kBcast, p, 1 << 20), model);
  run("gatherv/node_aware",
      optcoll::make_spec_v(CollectiveKind::kGatherv, p,
                           optcoll::distribution_counts(optcoll::Distribution::kRandom, p, 1000)),
      model);
  return 0;
}
