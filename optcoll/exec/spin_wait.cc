// SPDX-License-Identifier: Apache-2.0
// File: whether the node is oversubscribed, sampled from /proc/loadavg (spin_wait.h).
#include "optcoll/exec/spin_wait.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>

namespace optcoll {
namespace {

// The runnable tasks of the node against its online CPUs, now.
bool sample_oversubscribed() {
#if defined(__linux__)
  static const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::FILE* file = std::fopen("/proc/loadavg", "r");
  if (file == nullptr) return false;
  std::array<char, 256> line{};
  const bool got = std::fgets(line.data(), static_cast<int>(line.size()), file) != nullptr;
  std::fclose(file);
  if (!got) return false;
  const std::optional<long> runnable = runnable_tasks(line.data());
  return runnable && cpus > 0 && oversubscribes(*runnable, cpus);
#else
  return false;
#endif
}

std::atomic<std::int64_t> next_sample{0};  // steady-clock ticks
std::atomic<bool> oversubscribed{false};

}  // namespace

std::optional<long> runnable_tasks(const char* loadavg) {
  // "0.53 0.44 0.40 3/251 12345": the fourth field is runnable / all tasks.
  double load1 = 0;
  double load5 = 0;
  double load15 = 0;
  long runnable = 0;
  long tasks = 0;
  const int read =
      std::sscanf(loadavg, "%lf %lf %lf %ld/%ld", &load1, &load5, &load15, &runnable, &tasks);
  if (read != 5 || runnable < 0 || tasks < runnable) return std::nullopt;
  return runnable;
}

bool node_oversubscribed(std::chrono::steady_clock::time_point now) {
  const std::int64_t t = now.time_since_epoch().count();
  std::int64_t next = next_sample.load(std::memory_order_relaxed);
  const std::int64_t period =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLoadSample).count();
  if (t >= next && next_sample.compare_exchange_strong(next, t + period)) {
    oversubscribed.store(sample_oversubscribed(), std::memory_order_relaxed);
  }
  return oversubscribed.load(std::memory_order_relaxed);
}

}  // namespace optcoll
