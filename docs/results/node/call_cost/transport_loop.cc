// SPDX-License-Identifier: Apache-2.0
// File: the MPI transport's message path against MPI's, without the executor: two ranks
// exchange 8 bytes in a loop, through MpiTransport (isend, irecv, wait_some until both
// completed) and through MPI_Isend/MPI_Irecv/MPI_Testsome; prints microseconds per round
// and the cycles spent posting and waiting (docs/design.md, "C API and PMPI").
// Build from the repository root after building build/release:
//   B=build/release/optcoll; mpicxx -std=c++20 -O2 -I. -o transport_loop \
//     docs/results/node/call_cost/transport_loop.cc $B/exec/liboptcoll_exec_mpi.a \
//     $B/exec/liboptcoll_exec.a $B/schedule/liboptcoll_schedule.a $B/model/liboptcoll_model.a -lfmt
//   mpirun -np 2 --bind-to none ./transport_loop
#include <cstdio>
#include <vector>

#include <mpi.h>
#include <x86intrin.h>

#include "optcoll/exec/mpi/mpi_transport.h"
using namespace optcoll;
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int calls = 50000;
  double a = rank, b = 0;
  {
    mpi::MpiTransport t(MPI_COMM_WORLD);
    MPI_Comm data;
    MPI_Comm_dup(MPI_COMM_WORLD, &data);
    std::vector<RequestId> done;
    for (int rep = 0; rep < 4; ++rep) {
      unsigned long long post = 0, wait = 0, waits = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      double s = MPI_Wtime();
      for (int i = 0; i < calls; ++i) {
        auto c0 = __rdtsc();
        t.isend(1 - rank, MsgKey{0, i & 0xfff}, std::as_bytes(std::span(&a, 1)));
        t.irecv(1 - rank, MsgKey{0, i & 0xfff}, std::as_writable_bytes(std::span(&b, 1)));
        auto c1 = __rdtsc();
        done.clear();
        while (done.size() < 2) {
          t.wait_some(std::chrono::milliseconds(10000), done);
          ++waits;
        }
        auto c2 = __rdtsc();
        post += c1 - c0;
        wait += c2 - c1;
      }
      double raw = (MPI_Wtime() - s) / calls;
      unsigned long long post2 = 0, wait2 = 0, waits2 = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      s = MPI_Wtime();
      for (int i = 0; i < calls; ++i) {
        MPI_Request r[2];
        auto c0 = __rdtsc();
        MPI_Isend(&a, 8, MPI_BYTE, 1 - rank, i & 0xfff, data, &r[0]);
        MPI_Irecv(&b, 8, MPI_BYTE, 1 - rank, i & 0xfff, data, &r[1]);
        auto c1 = __rdtsc();
        int left = 2, idx[2];
        MPI_Status st[2];
        while (left > 0) {
          int n = 0;
          MPI_Testsome(2, r, &n, idx, st);
          if (n != MPI_UNDEFINED) left -= n;
          ++waits2;
        }
        auto c2 = __rdtsc();
        post2 += c1 - c0;
        wait2 += c2 - c1;
      }
      double mpi = (MPI_Wtime() - s) / calls;
      if (rank == 0)
        std::printf(
            "transport %.3f us (post %llu cyc, wait %llu cyc, %.2f waits) | mpi %.3f us (post "
            "%llu, wait %llu, %.2f tests)\n",
            raw * 1e6, post / calls, wait / calls, double(waits) / calls, mpi * 1e6, post2 / calls,
            wait2 / calls, double(waits2) / calls);
    }
    MPI_Comm_free(&data);
  }
  MPI_Finalize();
}
