// SPDX-License-Identifier: Apache-2.0
// File: optcoll's nonblocking and persistent collectives over MPI against the MPI library's,
// side by side in one run (run under mpirun; results: docs/results/nonblocking/).
//
//   mpirun -np P build/release/bench/bench_nonblocking [repetitions [calls]]
//
// Part 1, overlap (as OSU's osu_iallreduce & co. measure it): per collective and size, the
// pure time of a blocking call (t_pure), then start; compute for t_pure; wait (t_overall),
// with the compute alone timed too (t_compute). overlap = 100 * (1 - (t_overall -
// t_compute) / t_pure), clamped to 0..100: the share of the collective hidden behind the
// computation. Two ways of computing: one uninterrupted block, and ten slices with a test()
// between them (progress by test, which is how optcoll progresses: inside its calls); and
// optcoll with a progress thread (CommOptions::progress_thread, its own communicator).
// Part 2, persistent gatherv of skewed counts (one rank holds most of the data): per call,
// optcoll's persistent request (start + wait, planned and counts exchanged once, at init),
// optcoll's blocking gatherv (counts known everywhere), the C API's persistent request
// (OPTCOLL_Gatherv_init) and blocking call (OPTCOLL_Gatherv: MPI semantics, counts at the root
// only, exchanged every call unless linear runs without them), and MPI_Gatherv; Open MPI's
// own persistent MPIX_Gatherv_init where its pcollreq extension is built.
//
// Every cell is the median over `repetitions` (default 11) of the slowest rank's time per
// call over `calls` calls (default 50, fewer for large sizes) after a barrier; the variants
// take turns within every repetition (part 2: in a new order each time, after a warm-up;
// time_shuffled). Results are checked (exit 1 on a wrong one).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "optcoll.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace {

using optcoll::Count;
using optcoll::Request;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double slowest(double mine) {
  double result = 0;
  MPI_Allreduce(&mine, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

// Seconds per call, the slowest rank's, over `calls` calls of `call`.
double time_calls(const std::function<void()>& call, int calls) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) call();
  return slowest((MPI_Wtime() - start) / calls);
}

// One way of making a call, and where its times go (nullptr: not measured).
struct Variant {
  std::function<void()> call;
  std::vector<double>* times = nullptr;
};

// Times every variant `repetitions` times, taking turns in an order shuffled anew for every
// repetition (the same on every rank: a fixed seed), each timed batch after a warm-up of a
// quarter of its calls. The variant timed right after another one's large messages (Open
// MPI's, whose copies evict this one's buffers and channel from the caches) refills them in
// its first calls: 3-5 us per call over the first ten 1 MiB gathervs here, which a fixed
// order (or a rotation of one) would charge to the same variant every time.
void time_shuffled(const std::vector<Variant>& variants, int repetitions, int calls) {
  std::vector<std::size_t> order(variants.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffle_seed(20261130);
  for (int rep = 0; rep < repetitions; ++rep) {
    std::shuffle(order.begin(), order.end(), shuffle_seed);
    for (const std::size_t k : order) {
      const Variant& v = variants[k];
      if (v.times == nullptr) continue;
      for (int i = 0; i < std::max(1, calls / 4); ++i) v.call();
      v.times->push_back(time_calls(v.call, calls));
    }
  }
}

// Busy work for about `seconds` (a dependent floating-point chain the compiler keeps).
volatile double g_sink = 0;
void compute_for(double seconds) {
  const double end = MPI_Wtime() + seconds;
  double x = 1.0;
  while (MPI_Wtime() < end) {
    for (int i = 0; i < 200; ++i) x = x * 1.0000001 + 1e-9;
  }
  g_sink = x;
}

// One collective's four ways to be called: blocking and nonblocking, optcoll's and MPI's.
struct OverlapCase {
  std::string name;
  std::size_t bytes = 0;  // per rank
  std::function<void()> blocking, mpi_blocking;
  std::function<Request()> start, threaded_start;
  std::function<void(MPI_Request*)> mpi_start;
};

struct Overlap {
  double pure = 0;
  double overall = 0;
  double compute = 0;
  double percent() const {
    if (pure <= 0) return 0;
    return std::clamp(100.0 * (1.0 - (overall - compute) / pure), 0.0, 100.0);
  }
};

// t_overall for one way of starting and finishing a call around `work` seconds of compute,
// split into `slices` with `poke` between them.
double time_overlapped(const std::function<void()>& start, const std::function<void()>& poke,
                       const std::function<void()>& finish, double work, int slices, int calls) {
  return time_calls(
      [&] {
        start();
        for (int s = 0; s < slices; ++s) {
          compute_for(work / slices);
          if (s + 1 < slices) poke();
        }
        finish();
      },
      calls);
}

}  // namespace

int main(int argc, char** argv) {
  // MPI_THREAD_MULTIPLE: the progress-thread column's communicator calls MPI from its thread
  // (the MPI library's own calls then run at that level too).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 11;
  const int base_calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 50;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto p = static_cast<std::size_t>(size);
  int wrong = 0;
  {
    optcoll::mpi::MpiTransport transport(MPI_COMM_WORLD);
    optcoll::Communicator comm(transport, std::make_shared<optcoll::PlanCache>());
    optcoll::mpi::MpiTransport threaded_transport(MPI_COMM_WORLD);
    optcoll::CommOptions threaded_options;
    threaded_options.progress_thread = provided == MPI_THREAD_MULTIPLE;
    optcoll::Communicator threaded(threaded_transport, std::make_shared<optcoll::PlanCache>(),
                                   threaded_options);

    // ---- Part 1: overlap
    if (rank == 0) {
      std::printf("# overlap, p = %d (median of %d; us per call; overlap %% as OSU)\n", size,
                  repetitions);
      std::printf("%-10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "collective", "bytes", "pure",
                  "optcoll", "+test", "+thread", "mpi_pure", "mpi", "mpi+test");
    }
    for (const std::size_t bytes : {std::size_t{8}, std::size_t{64} << 10, std::size_t{1} << 20}) {
      const std::size_t n = bytes / sizeof(double);
      std::vector<double> in(n, rank + 1.0), out(n), all(n * p);
      std::vector<OverlapCase> cases;
      cases.push_back({"allreduce", bytes, [&] { comm.allreduce<double>(in, out, "sum"); },
                       [&] {
                         MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE,
                                       MPI_SUM, MPI_COMM_WORLD);
                       },
                       [&] { return comm.iallreduce<double>(in, out, "sum"); },
                       [&] { return threaded.iallreduce<double>(in, out, "sum"); },
                       [&](MPI_Request* r) {
                         MPI_Iallreduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE,
                                        MPI_SUM, MPI_COMM_WORLD, r);
                       }});
      cases.push_back(
          {"bcast", bytes, [&] { comm.bcast<double>(out, 0); },
           [&] { MPI_Bcast(out.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD); },
           [&] { return comm.ibcast<double>(out, 0); },
           [&] { return threaded.ibcast<double>(out, 0); },
           [&](MPI_Request* r) {
             MPI_Ibcast(out.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
           }});
      cases.push_back({"allgather", bytes, [&] { comm.allgather<double>(in, all); },
                       [&] {
                         MPI_Allgather(in.data(), static_cast<int>(n), MPI_DOUBLE, all.data(),
                                       static_cast<int>(n), MPI_DOUBLE, MPI_COMM_WORLD);
                       },
                       [&] { return comm.iallgather<double>(in, all); },
                       [&] { return threaded.iallgather<double>(in, all); },
                       [&](MPI_Request* r) {
                         MPI_Iallgather(in.data(), static_cast<int>(n), MPI_DOUBLE, all.data(),
                                        static_cast<int>(n), MPI_DOUBLE, MPI_COMM_WORLD, r);
                       }});
      const int calls = bytes >= (std::size_t{1} << 20) ? std::max(1, base_calls / 5) : base_calls;
      for (OverlapCase& c : cases) {
        c.blocking();  // plans, first touch
        c.mpi_blocking();
        std::vector<double> pure, mpi_pure, overall, overall_test, overall_thread, mpi_overall,
            mpi_overall_test, compute;
        for (int rep = 0; rep < repetitions; ++rep) {
          const double t = time_calls(c.blocking, calls);
          const double mt = time_calls(c.mpi_blocking, calls);
          pure.push_back(t);
          mpi_pure.push_back(mt);
          compute.push_back(time_calls([&] { compute_for(t); }, calls));
          Request r;
          MPI_Request mr = MPI_REQUEST_NULL;
          overall.push_back(
              time_overlapped([&] { r = c.start(); }, [] {}, [&] { r.wait(); }, t, 1, calls));
          overall_test.push_back(time_overlapped([&] { r = c.start(); }, [&] { r.test(); },
                                                 [&] { r.wait(); }, t, 10, calls));
          overall_thread.push_back(time_overlapped([&] { r = c.threaded_start(); }, [] {},
                                                   [&] { r.wait(); }, t, 1, calls));
          int flag = 0;
          mpi_overall.push_back(time_overlapped([&] { c.mpi_start(&mr); }, [] {},
                                                [&] { MPI_Wait(&mr, MPI_STATUS_IGNORE); }, mt, 1,
                                                calls));
          mpi_overall_test.push_back(time_overlapped(
              [&] { c.mpi_start(&mr); }, [&] { MPI_Test(&mr, &flag, MPI_STATUS_IGNORE); },
              [&] { MPI_Wait(&mr, MPI_STATUS_IGNORE); }, mt, 10, calls));
        }
        const Overlap ours{median(pure), median(overall), median(compute)};
        const Overlap ours_test{median(pure), median(overall_test), median(compute)};
        const Overlap ours_thread{median(pure), median(overall_thread), median(compute)};
        // MPI's compute time is scaled from ours (the same busy loop for its own t_pure).
        const double scale = median(mpi_pure) / std::max(1e-12, median(pure));
        const Overlap theirs{median(mpi_pure), median(mpi_overall), median(compute) * scale};
        const Overlap theirs_test{median(mpi_pure), median(mpi_overall_test),
                                  median(compute) * scale};
        if (rank == 0) {
          std::printf("%-10s %9zu %9.1f %8.0f%% %8.0f%% %8.0f%% %9.1f %8.0f%% %8.0f%%\n",
                      c.name.c_str(), c.bytes, ours.pure * 1e6, ours.percent(), ours_test.percent(),
                      ours_thread.percent(), theirs.pure * 1e6, theirs.percent(),
                      theirs_test.percent());
        }
      }
      if (n > 0 && out[0] <= 0) ++wrong;  // allreduce sums or bcast of positive values
    }

    // ---- Part 2: persistent gatherv of skewed counts
    if (rank == 0) {
      std::printf("\n# gatherv, skewed counts, p = %d (us per call, median of %d)\n", size,
                  repetitions);
      std::printf("%-28s %11s %11s %11s %11s %11s %11s %9s %9s %9s\n", "counts (int64)",
                  "persistent", "blocking", "C_init", "C_blocking", "MPI_Gatherv", "MPIX_init",
                  "mpi/pers", "blk/pers", "Cblk/Cini");
    }
    struct Skew {
      std::string name;
      std::function<Count(std::size_t)> count;
    };
    const std::vector<Skew> skews{
        {"last rank 128K, others 16", [&](std::size_t r) { return r + 1 == p ? 131072 : 16; }},
        {"rank r: 2^r x 64",
         [](std::size_t r) { return Count{64} << std::min<std::size_t>(r, 14); }},
        {"last rank 4K, others 1", [&](std::size_t r) { return r + 1 == p ? 4096 : 1; }},
    };
    for (const Skew& skew : skews) {
      std::vector<Count> counts(p);
      std::vector<int> mpi_counts(p), displs(p);
      int total = 0;
      for (std::size_t r = 0; r < p; ++r) {
        counts[r] = skew.count(r);
        mpi_counts[r] = static_cast<int>(counts[r]);
        displs[r] = total;
        total += mpi_counts[r];
      }
      const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]);
      std::vector<std::int64_t> block(mine);
      std::iota(block.begin(), block.end(), std::int64_t{rank} << 32);
      std::vector<std::int64_t> gathered(rank == 0 ? static_cast<std::size_t>(total) : 0);
      std::vector<std::int64_t> mpi_gathered(gathered.size());
      Request persistent = comm.gatherv_init<std::int64_t>(block, gathered, counts, 0);
      // The C API: MPI semantics (counts at the root only), so its blocking call exchanges
      // them (or runs linear without) every time; its persistent request did that at init.
      std::vector<std::int64_t> c_gathered(gathered.size());
      OPTCOLL_Request c_persistent = OPTCOLL_REQUEST_NULL;
      OPTCOLL_Gatherv_init(block.data(), static_cast<int>(mine), MPI_INT64_T, c_gathered.data(),
                           mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD,
                           &c_persistent);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      MPI_Request mpix = MPI_REQUEST_NULL;
      MPIX_Gatherv_init(block.data(), static_cast<int>(mine), MPI_INT64_T, mpi_gathered.data(),
                        mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &mpix);
      const bool have_mpix = true;
#else
      const bool have_mpix = false;
#endif
      const auto run_persistent = [&] {
        persistent.start();
        persistent.wait();
      };
      const auto run_blocking = [&] { comm.gatherv<std::int64_t>(block, gathered, counts, 0); };
      const auto run_c_persistent = [&] {
        OPTCOLL_Start(&c_persistent);
        OPTCOLL_Wait(&c_persistent);
      };
      const auto run_c_blocking = [&] {
        OPTCOLL_Gatherv(block.data(), static_cast<int>(mine), MPI_INT64_T, c_gathered.data(),
                        mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
      };
      const auto run_mpi = [&] {
        MPI_Gatherv(block.data(), static_cast<int>(mine), MPI_INT64_T, mpi_gathered.data(),
                    mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
      };
      const auto run_mpix = [&] {
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
        MPI_Start(&mpix);
        MPI_Wait(&mpix, MPI_STATUS_IGNORE);
#endif
      };
      run_persistent();
      run_blocking();
      run_mpi();
      run_mpix();
      run_c_persistent();
      if (gathered != mpi_gathered || c_gathered != mpi_gathered) ++wrong;
      run_c_blocking();
      if (c_gathered != mpi_gathered) ++wrong;
      std::vector<double> tp, tb, tm, tx, tcp, tcb;
      const std::vector<Variant> variants{
          {run_persistent, &tp},  {run_blocking, &tb}, {run_c_persistent, &tcp},
          {run_c_blocking, &tcb}, {run_mpi, &tm},      {run_mpix, have_mpix ? &tx : nullptr}};
      time_shuffled(variants, repetitions, base_calls * 4);
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
      MPI_Request_free(&mpix);
#endif
      OPTCOLL_Request_free(&c_persistent);
      if (rank == 0) {
        const double mp = median(tp);
        std::printf("%-28s %11.1f %11.1f %11.1f %11.1f %11.1f %11s %9.2f %9.2f %9.2f\n",
                    skew.name.c_str(), mp * 1e6, median(tb) * 1e6, median(tcp) * 1e6,
                    median(tcb) * 1e6, median(tm) * 1e6,
                    have_mpix ? std::to_string(median(tx) * 1e6).substr(0, 8).c_str() : "-",
                    median(tm) / mp, median(tb) / mp, median(tcb) / median(tcp));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total_wrong = 0;
  MPI_Allreduce(&wrong, &total_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total_wrong > 0) std::printf("WRONG results: %d\n", total_wrong);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
