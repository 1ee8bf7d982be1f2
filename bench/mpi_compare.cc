// SPDX-License-Identifier: Apache-2.0
// File: optcoll over MPI (Communicator on MpiTransport, `auto` under the reference model)
// against the MPI library's own collectives, in one run, OSU-style: for each collective and
// message size, the median over iterations of the slowest rank's time, both ways, and the
// ratio. gatherv and scatterv use Träff's "spikes" counts (every block 1 except every 4th,
// 5·b) and his "skewed" distribution (distributions.h), both as the planned call with all
// counts known (Communicator) and through the C API with MPI's semantics (counts at the root
// only, exchanged first: OPTCOLL_Gatherv / OPTCOLL_Scatterv). Beside each optcoll time, the
// model's prediction for the plan that ran ($OPTCOLL_MODEL, e.g. from `optcoll calibrate
// --backend mpi`, else the reference cluster model). Run under mpirun:
//   mpirun -np 4 build/bench/bench_mpi_compare [iterations]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/model/distributions.h"

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

std::string fmt_us(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds * 1e6);
  return text;
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
    optcoll::CommOptions options;
    if (const char* path = std::getenv("OPTCOLL_MODEL"); path != nullptr && *path != '\0') {
      std::ifstream file(path);
      std::stringstream text;
      text << file.rdbuf();
      options.model = optcoll::parse_cost_model_json(text.str());
    }
    optcoll::Communicator comm(transport, std::make_shared<optcoll::PlanCache>(), options);
    if (rank == 0) {
      std::printf("| collective | bytes per rank | optcoll (us) | predicted (us) | MPI (us) | "
                  "optcoll / MPI |\n");
      std::printf("|---|---|---|---|---|---|\n");
    }
    for (std::size_t bytes = 8; bytes <= (std::size_t{8} << 20); bytes *= 8) {
      const std::size_t n = std::max<std::size_t>(1, bytes / 8);  // doubles
      const auto np = static_cast<std::size_t>(size);
      std::vector<double> in(n, rank + 1.0);
      std::vector<double> out(n);
      std::vector<double> all(n * np);
      std::vector<double> rows(n * np, rank + 0.5);
      std::vector<double> part(n);
      // Irregular counts (elements): spikes, and Träff's skewed distribution with block n.
      struct Irregular {
        std::vector<Count> counts;
        std::vector<int> mpi_counts, displs;
        std::vector<double> block, gathered;
      };
      auto irregular = [&](std::vector<Count> counts) {
        Irregular ir;
        ir.counts = std::move(counts);
        int total = 0;
        for (const Count c : ir.counts) {
          ir.mpi_counts.push_back(static_cast<int>(c));
          ir.displs.push_back(total);
          total += static_cast<int>(c);
        }
        ir.block.assign(static_cast<std::size_t>(ir.counts[static_cast<std::size_t>(rank)]), 1.0);
        ir.gathered.assign(static_cast<std::size_t>(total), 0.0);
        return ir;
      };
      std::vector<Count> spike_counts(np);
      for (std::size_t r = 0; r < np; ++r) {
        spike_counts[r] = static_cast<Count>(r % 4 == 3 ? 5 * n : 1);
      }
      Irregular spikes = irregular(spike_counts);
      Irregular skewed = irregular(optcoll::distribution_counts(
          optcoll::Distribution::kSkewed, size, static_cast<Count>(n)));
      struct Case {
        std::string name;
        std::function<void()> ours;
        std::function<void()> theirs;
      };
      const int count = static_cast<int>(n);
      std::vector<Case> cases{
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
      };
      for (auto* ir : {&spikes, &skewed}) {
        const std::string tag = ir == &spikes ? " (spikes)" : " (skewed)";
        const auto me = static_cast<std::size_t>(rank);
        const int mine = ir->mpi_counts[me];
        auto gathered = [ir, rank] {
          return rank == 0 ? std::span<double>(ir->gathered) : std::span<double>();
        };
        cases.push_back(
            {"gatherv" + tag, [&comm, ir, gathered] { comm.gatherv<double>(ir->block, gathered(), ir->counts, 0); },
             [ir, mine] {
               MPI_Gatherv(ir->block.data(), mine, MPI_DOUBLE, ir->gathered.data(),
                           ir->mpi_counts.data(), ir->displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
             }});
        cases.push_back(
            {"gatherv" + tag + " C API", [ir, mine] {
               OPTCOLL_Gatherv(ir->block.data(), mine, MPI_DOUBLE, ir->gathered.data(),
                               ir->mpi_counts.data(), ir->displs.data(), MPI_DOUBLE, 0,
                               MPI_COMM_WORLD);
             },
             [ir, mine] {
               MPI_Gatherv(ir->block.data(), mine, MPI_DOUBLE, ir->gathered.data(),
                           ir->mpi_counts.data(), ir->displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
             }});
        cases.push_back(
            {"scatterv" + tag, [&comm, ir, gathered] {
               comm.scatterv<double>(gathered(), ir->block, ir->counts, 0);
             },
             [ir, mine] {
               MPI_Scatterv(ir->gathered.data(), ir->mpi_counts.data(), ir->displs.data(),
                            MPI_DOUBLE, ir->block.data(), mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
             }});
        cases.push_back(
            {"scatterv" + tag + " C API", [ir, mine] {
               OPTCOLL_Scatterv(ir->gathered.data(), ir->mpi_counts.data(), ir->displs.data(),
                                MPI_DOUBLE, ir->block.data(), mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
             },
             [ir, mine] {
               MPI_Scatterv(ir->gathered.data(), ir->mpi_counts.data(), ir->displs.data(),
                            MPI_DOUBLE, ir->block.data(), mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
             }});
      }
      for (const auto& c : cases) {
        const auto before = comm.last_plan();
        const double ours = median_slowest(iterations, c.ours);
        const auto& ran = comm.last_plan();
        const std::string predicted =
            ran != nullptr && ran != before ? fmt_us(ran->predicted_time) : std::string("-");
        const double theirs = median_slowest(iterations, c.theirs);
        if (rank == 0) {
          std::printf("| %s | %zu | %.1f | %s | %.1f | %.2f |\n", c.name.c_str(), n * 8, ours * 1e6,
                      predicted.c_str(), theirs * 1e6, ours / theirs);
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
