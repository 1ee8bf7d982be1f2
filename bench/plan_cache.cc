// SPDX-License-Identifier: Apache-2.0
// File: what an MPI process's plan cache holds when its alltoallv counts change from call to
// call: SHAPES alltoallv calls of p ranks, each with other counts (skewed, seeded by the
// call), planned for rank 0 as an MPI process plans them (PlanCache::get with only_rank),
// under the reference cluster. Per call: the plans held, their weight (PlanCacheLimits) and
// the process's resident memory; at the end its peak. With --unbounded the cache's limits
// are lifted (what every cache did before it had any). One run per configuration: each
// plan takes a fraction of a second.
//
//   build/release/bench/bench_plan_cache [p] [shapes] [--unbounded]
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "optcoll/api/communicator.h"
#include "optcoll/plan/counts_free.h"

namespace {

using Clock = std::chrono::steady_clock;

// The process's resident memory now, MB (/proc/self/statm's second field, in pages).
double resident_mb() {
  std::ifstream statm("/proc/self/statm");
  long size = 0;
  long resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

double peak_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1e3;  // kB on Linux
}

// p x p counts around 64, a few pairs of each sender 16x heavier (seeded by the call).
std::vector<optcoll::Count> skewed_counts(optcoll::Rank p, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<optcoll::Count> count(32, 96);
  std::uniform_int_distribution<optcoll::Rank> peer(0, p - 1);
  const auto n = static_cast<std::size_t>(p);
  std::vector<optcoll::Count> counts(n * n);
  for (auto& c : counts) c = count(random);
  for (std::size_t from = 0; from < n; ++from) {
    for (int spike = 0; spike < 4; ++spike) {
      counts[from * n + static_cast<std::size_t>(peer(random))] *= 16;
    }
  }
  return counts;
}

// Rank 0's row (what it sends each rank) and column (what it receives from each) of such a
// matrix, its block to itself the same in both.
struct RowAndColumn {
  std::vector<optcoll::Count> sent, received;
};
RowAndColumn skewed_row_and_column(optcoll::Rank p, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<optcoll::Count> count(32, 96);
  std::uniform_int_distribution<optcoll::Rank> peer(0, p - 1);
  const auto n = static_cast<std::size_t>(p);
  RowAndColumn r{std::vector<optcoll::Count>(n), std::vector<optcoll::Count>(n)};
  for (auto& c : r.sent) c = count(random);
  for (auto& c : r.received) c = count(random);
  for (int spike = 0; spike < 4; ++spike) r.sent[static_cast<std::size_t>(peer(random))] *= 16;
  r.received[0] = r.sent[0];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const optcoll::Rank p = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int shapes = argc > 2 ? std::atoi(argv[2]) : 20;
  bool unbounded = false;
  std::string own_counts;  // the forced algorithm of --own-counts
  bool usage_error = p < 2 || shapes < 1;
  for (int i = 3; i < argc && !usage_error; ++i) {
    const std::string arg = argv[i];
    if (arg == "--unbounded") {
      unbounded = true;
    } else if (arg == "--own-counts" && i + 1 < argc) {
      own_counts = argv[++i];
    } else {
      usage_error = true;
    }
  }
  if (usage_error) {
    std::fprintf(stderr,
                 "usage: bench_plan_cache [p >= 2] [shapes >= 1] [--unbounded] "
                 "[--own-counts ALGORITHM]\n");
    return 2;
  }
  optcoll::PlanCacheLimits limits;
  if (unbounded) {
    limits.plans = std::numeric_limits<std::size_t>::max();
    limits.weight = std::numeric_limits<std::size_t>::max();
  }
  optcoll::PlanCache cache(optcoll::kDefaultPlanningWorkers, limits);
  const optcoll::CostModel model = optcoll::reference_cluster_model();
  std::printf(
      "alltoallv p = %d, %d shapes planned for rank 0, cache %s (%zu plans, %zu ops "
      "and counts)\n",
      p, shapes, unbounded ? "unbounded" : "bounded", limits.plans, limits.weight);
  const double start_mb = resident_mb();
  optcoll::CollectiveSpec own_spec;  // --own-counts: reused from call to call, as the C API does
  for (int s = 0; s < shapes && !own_counts.empty(); ++s) {
    const RowAndColumn mine = skewed_row_and_column(p, static_cast<unsigned>(s));
    const auto start = Clock::now();
    optcoll::assign_alltoallv_counts_free_spec(own_spec, 0, mine.sent, mine.received);
    const auto planned = cache.get(own_spec, model, own_counts, nullptr, {}, optcoll::Rank{0});
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf(
        "shape %3d  %-28s spec and plan %6.3f s  held %3zu plans, weight %10zu  "
        "resident %7.1f MB\n",
        s, planned->algorithm.c_str(), took, cache.size(), cache.weight(), resident_mb());
  }
  for (int s = 0; s < shapes && own_counts.empty(); ++s) {
    const auto spec = optcoll::make_spec_v(optcoll::CollectiveKind::kAlltoallv, p,
                                           skewed_counts(p, static_cast<unsigned>(s)));
    const auto start = Clock::now();
    const auto planned = cache.get(spec, model, "auto", nullptr, {}, optcoll::Rank{0});
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("shape %3d  %-28s plan %6.3f s  held %3zu plans, weight %10zu  resident %7.1f MB\n",
                s, planned->algorithm.c_str(), took, cache.size(), cache.weight(), resident_mb());
  }
  std::printf("resident at start %.1f MB, at the end %.1f MB, peak %.1f MB; plans made %zu\n",
              start_mb, resident_mb(), peak_mb(), cache.made());
  return 0;
}
