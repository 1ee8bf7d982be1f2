// SPDX-License-Identifier: Apache-2.0
// File: optcoll over MPI (Communicator on MpiTransport, `auto` under the reference model)
// against the MPI library's own collectives, in one run, OSU-style: for each collective and
// message size, the median over iterations of the slowest rank's time, both ways, and the
// ratio. gatherv uses Träff's "spikes" counts (every block 1 except every 4th, 5·b). Run
// under mpirun: mpirun -np 4 build/bench/bench_mpi_compare [iterations]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace {

using optcoll::Count;

double median_slowest(int iterations, const std::function<void()>& call) {
  std::vector<double> times;
  call();  // warm-up (and for optcoll: planning, cached afterwards)
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    call();
    double mine = MPI_Wtime() - start;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    optcoll::mpi::MpiTransport transport(MPI_COMM_WORLD);
    optcoll::Communicator comm(transport, std::make_shared<optcoll::PlanCache>());
    if (rank == 0) {
      std::printf("| collective | bytes per rank | optcoll (us) | MPI (us) | optcoll / MPI |\n");
      std::printf("|---|---|---|---|---|\n");
    }
    for (std::size_t bytes = 8; bytes <= (std::size_t{8} << 20); bytes *= 8) {
      const std::size_t n = std::max<std::size_t>(1, bytes / 8);  // doubles
      const auto np = static_cast<std::size_t>(size);
      std::vector<double> in(n, rank + 1.0);
      std::vector<double> out(n);
      std::vector<double> all(n * np);
      std::vector<double> rows(n * np, rank + 0.5);
      std::vector<double> part(n);
      std::vector<Count> counts(np);
      std::vector<int> mpi_counts(np);
      std::vector<int> displs(np);
      int total = 0;
      for (std::size_t r = 0; r < np; ++r) {
        counts[r] = static_cast<Count>(r % 4 == 3 ? 5 * n : 1);
        mpi_counts[r] = static_cast<int>(counts[r]);
        displs[r] = total;
        total += mpi_counts[r];
      }
      const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]);
      std::vector<double> block(mine, 1.0);
      std::vector<double> gathered(static_cast<std::size_t>(total));
      struct Case {
        const char* name;
        std::function<void()> ours;
        std::function<void()> theirs;
      };
      const int count = static_cast<int>(n);
      const std::vector<Case> cases{
          {"allreduce", [&] { comm.allreduce<double>(in, out, "sum"); },
           [&] {
             MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
           }},
          {"bcast", [&] { comm.bcast<double>(out, 0); },
           [&] { MPI_Bcast(out.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD); }},
          {"allgather", [&] { comm.allgather<double>(in, all); },
           [&] {
             MPI_Allgather(in.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE,
                           MPI_COMM_WORLD);
           }},
          {"reduce_scatter_block", [&] { comm.reduce_scatter_block<double>(rows, part, "sum"); },
           [&] {
             MPI_Reduce_scatter_block(rows.data(), part.data(), count, MPI_DOUBLE, MPI_SUM,
                                      MPI_COMM_WORLD);
           }},
          {"scan", [&] { comm.scan<double>(in, out, "sum"); },
           [&] { MPI_Scan(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }},
          {"exscan", [&] { comm.exscan<double>(in, out, "sum"); },
           [&] { MPI_Exscan(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }},
          {"gatherv (spikes)",
           [&] {
             comm.gatherv<double>(
                 block, rank == 0 ? std::span<double>(gathered) : std::span<double>(), counts, 0);
           },
           [&] {
             MPI_Gatherv(block.data(), static_cast<int>(mine), MPI_DOUBLE, gathered.data(),
                         mpi_counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
           }},
      };
      for (const auto& c : cases) {
        const double ours = median_slowest(iterations, c.ours);
        const double theirs = median_slowest(iterations, c.theirs);
        if (rank == 0) {
          std::printf("| %s | %zu | %.1f | %.1f | %.2f |\n", c.name, n * 8, ours * 1e6,
                      theirs * 1e6, ours / theirs);
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
