// SPDX-License-Identifier: Apache-2.0
// File: the fixed cost of one small collective call over MPI, three ways side by side in
// one run: the MPI library's own call, optcoll's C API (OPTCOLL_*, MPI semantics) and a
// Communicator over MpiTransport (the planned C++ call). Back-to-back calls of 8 bytes per
// rank (gatherv/scatterv: 8 bytes to or from every rank; alltoallv: 8 bytes to every rank),
// so what is measured is each layer's per-call and per-message overhead, not data movement.
// The C API's alltoallv runs twice: under auto (which exchanges the count matrix, an
// allgather of p values per rank, from p = 3 on) and forced to alltoallv/linear (which
// needs only each rank's own counts: no exchange; optcoll/plan/counts_free.h). Run under
// mpirun:
//
//   mpirun -np 2 --bind-to none build/release/bench/bench_mpi_call [calls [reps [name [way]]]]
//
// A cell is the median over `reps` repetitions (default 15) of the slowest rank's time for
// `calls` (default 20000) calls divided by `calls`; the three ways take turns in every
// repetition, so machine noise falls on all of them alike. Each rank checks every result it
// gets against the expected values and the program fails (exit 1) if one is wrong. With a
// third argument, only the collective of that name runs; with a fourth (mpi, capi or planned),
// only that way is timed (for profiling one: run it under callgrind with two call counts and
// subtract, and what is left is the instructions of that many calls).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of `call`, the slowest rank's, over `calls` calls.
double time_calls(const std::function<void()>& call, int calls) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) call();
  const double mine = (MPI_Wtime() - start) / calls;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

struct Case {
  std::string name;
  std::function<void()> mpi, capi, planned;
  std::function<bool()> check;  // the last call's result is right
  std::string capi_algorithm;   // set for the case's C API calls (OPTCOLL_Set_algorithm)
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int calls = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 15;
  const std::string only = argc > 3 ? argv[3] : "";
  const std::string only_way = argc > 4 ? argv[4] : "";
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto p = static_cast<std::size_t>(size);
  int bad = 0;
  {
    optcoll::mpi::MpiTransport transport(MPI_COMM_WORLD);
    optcoll::Communicator comm(transport, std::make_shared<optcoll::PlanCache>());

    std::vector<double> one(1), all(p), rows(p);
    std::vector<int> ones(p, 1), displs(p);
    for (std::size_t i = 0; i < p; ++i) displs[i] = static_cast<int>(i);
    const double mine = rank + 1.0;
    std::vector<Case> cases;
    cases.push_back({"bcast",
                     [&] {
                       one[0] = rank == 0 ? 7.0 : 0.0;
                       MPI_Bcast(one.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                     },
                     [&] {
                       one[0] = rank == 0 ? 7.0 : 0.0;
                       OPTCOLL_Bcast(one.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                     },
                     [&] {
                       one[0] = rank == 0 ? 7.0 : 0.0;
                       comm.bcast<double>(one, 0);
                     },
                     [&] { return one[0] == 7.0; },
                     {}});
    cases.push_back(
        {"allreduce",
         [&] { MPI_Allreduce(&mine, one.data(), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); },
         [&] { OPTCOLL_Allreduce(&mine, one.data(), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); },
         [&] { comm.allreduce<double>(std::span(&mine, 1), one, "sum"); },
         [&] { return one[0] == static_cast<double>(p * (p + 1) / 2); },
         {}});
    cases.push_back(
        {"allgather",
         [&] { MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD); },
         [&] {
           OPTCOLL_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
         },
         [&] { comm.allgather<double>(std::span(&mine, 1), all); },
         [&] { return all[p - 1] == static_cast<double>(p); },
         {}});
    cases.push_back({"gatherv",
                     [&] {
                       MPI_Gatherv(&mine, 1, MPI_DOUBLE, all.data(), ones.data(), displs.data(),
                                   MPI_DOUBLE, 0, MPI_COMM_WORLD);
                     },
                     [&] {
                       OPTCOLL_Gatherv(&mine, 1, MPI_DOUBLE, all.data(), ones.data(), displs.data(),
                                       MPI_DOUBLE, 0, MPI_COMM_WORLD);
                     },
                     [&] {
                       comm.gatherv<double>(std::span(&mine, 1), all,
                                            std::vector<optcoll::Count>(p, 1), 0);
                     },
                     [&] { return rank != 0 || all[p - 1] == static_cast<double>(p); },
                     {}});
    for (std::size_t i = 0; i < p; ++i) rows[i] = static_cast<double>(i) + 0.5;
    cases.push_back(
        {"scatterv",
         [&] {
           MPI_Scatterv(rows.data(), ones.data(), displs.data(), MPI_DOUBLE, one.data(), 1,
                        MPI_DOUBLE, 0, MPI_COMM_WORLD);
         },
         [&] {
           OPTCOLL_Scatterv(rows.data(), ones.data(), displs.data(), MPI_DOUBLE, one.data(), 1,
                            MPI_DOUBLE, 0, MPI_COMM_WORLD);
         },
         [&] { comm.scatterv<double>(rows, one, std::vector<optcoll::Count>(p, 1), 0); },
         [&] { return one[0] == rank + 0.5; },
         {}});

    // alltoallv: rank r sends r + 0.25 j to rank j.
    std::vector<double> outgoing(p), incoming(p);
    for (std::size_t j = 0; j < p; ++j) outgoing[j] = rank + 0.25 * static_cast<double>(j);
    const std::vector<optcoll::Count> matrix(p * p, 1);
    const auto alltoallv_case = [&](const char* name, const char* algorithm) {
      return Case{
          name,
          [&] {
            MPI_Alltoallv(outgoing.data(), ones.data(), displs.data(), MPI_DOUBLE, incoming.data(),
                          ones.data(), displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
          },
          [&] {
            OPTCOLL_Alltoallv(outgoing.data(), ones.data(), displs.data(), MPI_DOUBLE,
                              incoming.data(), ones.data(), displs.data(), MPI_DOUBLE,
                              MPI_COMM_WORLD);
          },
          [&] { comm.alltoallv<double>(outgoing, incoming, matrix); },
          [&] {
            return incoming[p - 1] == static_cast<double>(p - 1) + 0.25 * static_cast<double>(rank);
          },
          algorithm};
    };
    cases.push_back(alltoallv_case("alltoallv", "auto"));
    cases.push_back(alltoallv_case("alltoallv (C API linear)", "linear"));

    if (rank == 0) {
      std::printf(
          "p = %d: %d calls per timing, median of %d repetitions, slowest rank, us per "
          "call\n\n| collective | MPI | C API | planned | C API / MPI | planned / MPI |\n"
          "|---|---|---|---|---|---|\n",
          size, calls, repetitions);
    }
    for (const Case& c : cases) {
      if (!only.empty() && c.name != only) continue;
      if (!c.capi_algorithm.empty() &&
          OPTCOLL_Set_algorithm(c.name.substr(0, c.name.find(' ')).c_str(),
                                c.capi_algorithm.c_str()) != MPI_SUCCESS) {
        ++bad;
      }
      std::vector<double> mpi, capi, planned;
      for (const auto* way : {&c.mpi, &c.capi, &c.planned}) {  // warm up: plans, connections
        (*way)();
        if (!c.check()) ++bad;
      }
      // A way not timed (fourth argument) shows 0.
      const auto timed = [&](const std::function<void()>& way, const char* name) {
        if (!only_way.empty() && only_way != name) return 0.0;
        const double t = time_calls(way, calls);
        if (!c.check()) ++bad;
        return t;
      };
      for (int rep = 0; rep < repetitions; ++rep) {
        mpi.push_back(timed(c.mpi, "mpi"));
        capi.push_back(timed(c.capi, "capi"));
        planned.push_back(timed(c.planned, "planned"));
      }
      if (rank == 0) {
        const double m = median(mpi) * 1e6, a = median(capi) * 1e6, l = median(planned) * 1e6;
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", c.name.c_str(), m, a, l, a / m,
                    l / m);
      }
    }
  }
  int bad_anywhere = 0;
  MPI_Allreduce(&bad, &bad_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && bad_anywhere > 0) std::fprintf(stderr, "%d wrong results\n", bad_anywhere);
  MPI_Finalize();
  return bad_anywhere > 0 ? 1 : 0;
}
