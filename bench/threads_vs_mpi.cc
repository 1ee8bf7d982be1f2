// SPDX-License-Identifier: Apache-2.0
// File: the thread backend (the embedded default: p threads in one process) against the
// MPI library's own collectives on p processes of the same node, in one run (issue 7's
// first target). Run under mpirun with p processes:
//   mpirun -np 8 build/bench/bench_threads_vs_mpi [iterations [max-bytes [MODEL TUNING]]]
// `iterations` calls per timing at 16 KiB .. 512 KiB per rank; as OSU's benchmarks do, ten
// times as many at 8 KiB and below (where one call takes microseconds and the barrier before
// a timing would otherwise weigh on it) and a quarter as many at 1 MiB and above.
// First every process times MPI_Allreduce, MPI_Bcast, MPI_Reduce (root 0), MPI_Allgather and
// MPI_Reduce_scatter_block; then rank 0 alone runs the same calls through optcoll's
// Communicator on a ThreadWorld of p ranks, first as p threads, then as fibers on one
// thread per CPU (the default where ranks outnumber CPUs), then as auto chooses at the start
// of its run (the "auto" columns, last), while the other processes wait asleep (a
// polling MPI_Ibarrier with 20 ms naps, so that they leave the CPUs to the threads). A cell
// is the median over 5 repetitions of (the slowest rank's time for `iterations` calls) /
// iterations; doubles, sum.
// From 64 KiB per rank up, each row also states the physical limit: the bytes that every
// algorithm must move through the memory system (required_traffic) over the copy bandwidth
// that p threads reach on this node at that size (copy_bandwidth, measured in the same run),
// and the thread backend's time over it. Below 64 KiB a call is latency, not traffic, and the
// columns say "-".
// With MODEL (model.json, as optcoll calibrate writes it) and TUNING (a table of optcoll
// tune's), a second table times the threads again with "auto" under both
// (CommOptions::model and ::tuning: the measured choice where the table has one), as a user
// who tuned this node runs them.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/threads/world.h"

namespace {

constexpr int kRepetitions = 5;
const char* const kCollectives[] = {"allreduce", "bcast", "reduce", "allgather",
                                    "reduce_scatter_block"};

std::size_t max_bytes = std::size_t{8} << 20;  // the second argument, if given

std::vector<std::size_t> sizes() {  // bytes per rank: 8 B .. max_bytes (8 MiB)
  std::vector<std::size_t> s;
  for (std::size_t b = 8; b <= max_bytes; b *= 8) s.push_back(b);
  return s;
}

// Calls per timing for `bytes` per rank (file comment); the same for threads and MPI.
int calls_per_timing(std::size_t bytes, int iterations) {
  if (bytes <= (std::size_t{8} << 10)) return 10 * iterations;
  if (bytes >= (std::size_t{1} << 20)) return std::max(1, iterations / 4);
  return iterations;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One collective call on buffers of n doubles per rank, through `run`.
struct Buffers {
  std::vector<double> in, out, all, rows, part;
  explicit Buffers(std::size_t n, std::size_t p, int rank)
      : in(n, rank + 1.0), out(n), all(n * p), rows(n * p, rank + 0.5), part(n) {}
};

double time_mpi(const std::string& name, std::size_t n, int iterations) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Buffers b(n, static_cast<std::size_t>(size), rank);
  const int count = static_cast<int>(n);
  auto call = [&] {
    if (name == "allreduce") {
      MPI_Allreduce(b.in.data(), b.out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (name == "bcast") {
      MPI_Bcast(b.out.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else if (name == "reduce") {
      MPI_Reduce(b.in.data(), b.out.data(), count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (name == "allgather") {
      MPI_Allgather(b.in.data(), count, MPI_DOUBLE, b.all.data(), count, MPI_DOUBLE,
                    MPI_COMM_WORLD);
    } else {
      MPI_Reduce_scatter_block(b.rows.data(), b.part.data(), count, MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD);
    }
  };
  call();
  std::vector<double> per_call;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) call();
    double mine = (MPI_Wtime() - start) / iterations;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    per_call.push_back(slowest);
  }
  return median(per_call);
}

// Every case on a ThreadWorld of p ranks run as `execution` says: results[case] = per-call
// seconds. `ran_as`: how the world ran them (auto decides at the start of its run).
std::vector<double> time_threads(int p, int iterations, optcoll::RankExecution execution,
                                 std::string* ran_as = nullptr,
                                 const optcoll::CommOptions& options = {}) {
  const auto all_sizes = sizes();
  const std::size_t cases = all_sizes.size() * std::size(kCollectives);
  // [case][repetition][rank]
  std::vector<double> times(cases * kRepetitions * static_cast<std::size_t>(p));
  optcoll::ThreadWorld world(p, optcoll::WorldOptions{std::chrono::seconds(60), execution});
  const auto cache = std::make_shared<optcoll::PlanCache>();
  world.run([&](optcoll::Transport& transport) {
    optcoll::Communicator comm(transport, cache, options);
    const auto me = static_cast<std::size_t>(comm.rank());
    std::size_t c = 0;
    for (const std::size_t bytes : all_sizes) {
      const std::size_t n = std::max<std::size_t>(1, bytes / 8);
      Buffers b(n, static_cast<std::size_t>(p), comm.rank());
      for (const std::string name : kCollectives) {
        auto call = [&] {
          if (name == "allreduce") {
            comm.allreduce<double>(b.in, b.out, "sum");
          } else if (name == "bcast") {
            comm.bcast<double>(b.out, 0);
          } else if (name == "reduce") {
            comm.reduce<double>(b.in, b.out, "sum", 0);
          } else if (name == "allgather") {
            comm.allgather<double>(b.in, b.all);
          } else {
            comm.reduce_scatter_block<double>(b.rows, b.part, "sum");
          }
        };
        const int calls = calls_per_timing(bytes, iterations);
        call();  // plans once (cached), warms up
        for (int rep = 0; rep < kRepetitions; ++rep) {
          comm.barrier();
          const auto start = std::chrono::steady_clock::now();
          for (int i = 0; i < calls; ++i) call();
          const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
          times[(c * kRepetitions + static_cast<std::size_t>(rep)) * static_cast<std::size_t>(p) +
                me] = took.count() / calls;
        }
        ++c;
      }
    }
  });
  if (ran_as != nullptr) *ran_as = world.describe();
  std::vector<double> result(cases);
  for (std::size_t c = 0; c < cases; ++c) {
    std::vector<double> slowest;
    for (int rep = 0; rep < kRepetitions; ++rep) {
      const auto first = times.begin() + static_cast<std::ptrdiff_t>(
                                             (c * kRepetitions + static_cast<std::size_t>(rep)) *
                                             static_cast<std::size_t>(p));
      slowest.push_back(*std::max_element(first, first + p));
    }
    result[c] = median(slowest);
  }
  return result;
}

// The least traffic one call causes, in bytes read plus bytes written, with `bytes` per rank
// on p ranks: every input byte that some output needs is read at least once, and every output
// byte is written at least once (no algorithm can do less; most do more).
//   allreduce: p inputs of `bytes` read, p outputs written         2·p·bytes
//   bcast: the root's message read, p - 1 outputs written          p·bytes
//   reduce: p inputs read, the root's output written               (p + 1)·bytes
//   allgather: p inputs read, p outputs of p·bytes written         (p + p²)·bytes
//   reduce_scatter_block: p inputs of p·bytes read, p blocks written  (p² + p)·bytes
double required_traffic(const std::string& name, double bytes, int p) {
  const double ranks = p;
  if (name == "allreduce") return 2 * ranks * bytes;
  if (name == "bcast") return ranks * bytes;
  if (name == "reduce") return (ranks + 1) * bytes;
  return (ranks * ranks + ranks) * bytes;  // allgather, reduce_scatter_block
}

// Every destination of copy_bandwidth is read once into it, so that no copy can be dropped.
std::atomic<unsigned> copy_sink{0};

constexpr std::size_t kLimitFrom = std::size_t{64} << 10;  // smaller calls are latency-bound

// The node's copy bandwidth for p threads at once, each copying `bytes` between two buffers of
// its own (first touched by it): (bytes read + bytes written) per second, the median over
// kRepetitions of enough copies to take milliseconds. Copies within a cache-resident working
// set run faster than ones through DRAM, so measured at the call's own size this never
// understates what the call could reach: traffic / bandwidth stays a lower bound on its time.
double copy_bandwidth(int p, std::size_t bytes) {
  const int copies = static_cast<int>(std::max<std::size_t>(1, (std::size_t{64} << 20) / bytes));
  std::barrier sync(p);
  std::vector<double> seconds;
  std::vector<std::thread> threads;
  for (int t = 0; t < p; ++t) {
    threads.emplace_back([&, t] {
      std::vector<unsigned char> from(bytes, static_cast<unsigned char>(t + 1));
      std::vector<unsigned char> to(bytes, 0);
      for (int rep = 0; rep < kRepetitions + 1; ++rep) {  // the first repetition warms up
        sync.arrive_and_wait();
        const auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < copies; ++c) std::memcpy(to.data(), from.data(), bytes);
        sync.arrive_and_wait();
        if (t == 0 && rep > 0) {
          seconds.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
      }
      copy_sink += to[bytes / 2];
    });
  }
  for (auto& thread : threads) thread.join();
  return 2.0 * static_cast<double>(bytes) * copies * p / median(seconds);
}

}  // namespace

std::string file_text(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The options of a user who calibrated and tuned this node: "auto" under MODEL and TUNING.
optcoll::CommOptions tuned_options(const char* model, const char* tuning) {
  optcoll::CommOptions options;
  options.model = optcoll::parse_cost_model_json(file_text(model));
  options.tuning =
      std::make_shared<const optcoll::TuningTable>(optcoll::parse_tuning_json(file_text(tuning)));
  return options;
}

// The second table: threads with "auto" under MODEL and TUNING, beside MPI and the
// untuned threads (same cases, same order).
void print_tuned(const std::vector<double>& tuned, const std::vector<double>& threads,
                 const std::vector<double>& mpi, const std::vector<double>& bandwidth, int p) {
  std::printf(
      "\nthreads with auto under the given model and tuning table\n\n"
      "| collective | bytes per rank | tuned (us) | MPI (us) | tuned / MPI | tuned / threads | "
      "limit (us) | tuned / limit |\n|---|---|---|---|---|---|---|---|\n");
  std::size_t c = 0;
  for (std::size_t s = 0; s < sizes().size(); ++s) {
    const std::size_t bytes = sizes()[s];
    for (const char* name : kCollectives) {
      std::printf("| %s | %zu | %.1f | %.1f | %.2f | %.2f |", name, bytes, tuned[c] * 1e6,
                  mpi[c] * 1e6, tuned[c] / mpi[c], tuned[c] / threads[c]);
      if (bandwidth[s] > 0) {
        const double limit = required_traffic(name, static_cast<double>(bytes), p) / bandwidth[s];
        std::printf(" %.1f | %.2f |\n", limit * 1e6, tuned[c] / limit);
      } else {
        std::printf(" - | - |\n");
      }
      ++c;
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  if (argc > 2) max_bytes = std::max<std::size_t>(8, std::strtoull(argv[2], nullptr, 10));
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> mpi_times;
  for (const std::size_t bytes : sizes()) {
    const std::size_t n = std::max<std::size_t>(1, bytes / 8);
    for (const char* name : kCollectives) {
      mpi_times.push_back(time_mpi(name, n, calls_per_timing(bytes, iterations)));
    }
  }
  // The thread runs on rank 0, a thread per rank, then fibers (as auto runs them where
  // ranks outnumber the CPUs, docs/design.md, "Ranks as fibers"), then as auto chooses (with no
  // more ranks than CPUs: threads, or fibers while the node is oversubscribed); the others nap in a
  // barrier.
  std::vector<double> thread_times;
  std::vector<double> fiber_times;
  std::vector<double> auto_times;
  std::vector<double> bandwidth;  // per size; 0 below kLimitFrom
  std::string auto_ran_as;
  std::vector<double> tuned_times;  // with MODEL and TUNING given
  optcoll::CommOptions tuned;
  if (argc > 4) {
    try {
      tuned = tuned_options(argv[3], argv[4]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_threads_vs_mpi: %s\n", e.what());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (rank == 0) {
    thread_times = time_threads(size, iterations, optcoll::RankExecution::kThreads);
    fiber_times = time_threads(size, iterations, optcoll::RankExecution::kFibers);
    auto_times = time_threads(size, iterations, optcoll::RankExecution::kAuto, &auto_ran_as);
    if (tuned.tuning) {
      tuned_times =
          time_threads(size, iterations, optcoll::RankExecution::kThreads, nullptr, tuned);
    }
    for (const std::size_t bytes : sizes()) {
      bandwidth.push_back(bytes >= kLimitFrom ? copy_bandwidth(size, bytes) : 0.0);
    }
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  int done = 0;
  while (done == 0) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    // Long naps: a process that wakes every millisecond takes the CPU from the threads
    // being timed often enough to show in the small sizes (measured: bcast of 8 B at p = 8,
    // 4.9-7.3 us per call with 1 ms naps, 3.1-3.5 us with 20 ms naps, 50 calls per cell).
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (rank == 0) {
    const int cpus = static_cast<int>(std::thread::hardware_concurrency());
    std::printf(
        "p = %d: optcoll's %d ranks as threads, as fibers (on up to %d threads) and as auto "
        "chose (%s) against MPI on %d processes; %d calls per timing at 8 KiB and below, %d "
        "up to 512 KiB, %d above\n\n",
        size, size, cpus, auto_ran_as.c_str(), size, calls_per_timing(8, iterations),
        calls_per_timing(std::size_t{16} << 10, iterations),
        calls_per_timing(std::size_t{1} << 20, iterations));
    std::printf(
        "| collective | bytes per rank | threads (us) | fibers (us) | MPI (us) | "
        "threads / MPI | fibers / MPI | auto (us) | auto / MPI | copy GB/s | limit (us) | "
        "threads / limit |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::size_t c = 0;
    for (std::size_t s = 0; s < sizes().size(); ++s) {
      const std::size_t bytes = sizes()[s];
      for (const char* name : kCollectives) {
        std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.2f |", name, bytes,
                    thread_times[c] * 1e6, fiber_times[c] * 1e6, mpi_times[c] * 1e6,
                    thread_times[c] / mpi_times[c], fiber_times[c] / mpi_times[c],
                    auto_times[c] * 1e6, auto_times[c] / mpi_times[c]);
        if (bandwidth[s] > 0) {
          const double limit =
              required_traffic(name, static_cast<double>(bytes), size) / bandwidth[s];
          std::printf(" %.1f | %.1f | %.2f |\n", bandwidth[s] * 1e-9, limit * 1e6,
                      thread_times[c] / limit);
        } else {
          std::printf(" - | - | - |\n");
        }
        ++c;
      }
    }
    std::printf(
        "\nlimit: the least bytes read plus written by any algorithm (allreduce 2p·n, bcast p·n, "
        "reduce (p + 1)·n, allgather and reduce_scatter_block (p² + p)·n for n bytes per rank) "
        "over the copy "
        "bandwidth (read + written) of %d threads copying n bytes each at once on this node\n",
        size);
    if (!tuned_times.empty()) print_tuned(tuned_times, thread_times, mpi_times, bandwidth, size);
  }
  MPI_Finalize();
  return 0;
}
