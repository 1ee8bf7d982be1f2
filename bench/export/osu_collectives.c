/* SPDX-License-Identifier: Apache-2.0
 * File: the MPI library's own collectives timed the way the OSU micro-benchmarks time them
 * (warm-up calls, a barrier, back-to-back calls, the slowest rank's mean per call), over
 * sizes by 4 from 8 B to MAX per rank. bench/export/compare.sh runs it with and without a
 * selection file that optcoll export wrote. Sizes count as optcoll tune does: the message
 * (allreduce, bcast, reduce), the block per rank (allgather, reduce_scatter_block), the
 * block per pair (alltoall). Doubles, MPI_SUM.
 *
 *   osu_collectives MAX_BYTES [COLLECTIVE]
 *   prints per collective (only COLLECTIVE if given) and size: "COLLECTIVE BYTES MICROSECONDS"
 *   (rank 0); an unknown COLLECTIVE is an error (exit status 2)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kAllreduce, kBcast, kReduce, kAllgather, kAlltoall, kReduceScatterBlock, kKinds };
static const char* const kNames[kKinds] = {"allreduce", "bcast",    "reduce",
                                           "allgather", "alltoall", "reduce_scatter_block"};

static void call(int kind, double* in, double* out, int n, int size) {
  (void)size;
  switch (kind) {
    case kAllreduce:
      MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kBcast:
      MPI_Bcast(in, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      break;
    case kReduce:
      MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
    case kAllgather:
      MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
      break;
    case kAlltoall:
      MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
      break;
    case kReduceScatterBlock:
      MPI_Reduce_scatter_block(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long max_bytes = argc > 1 ? atol(argv[1]) : 1 << 20;
  int only = -1;
  if (argc > 2) {
    for (int kind = 0; kind < kKinds; ++kind) {
      if (strcmp(argv[2], kNames[kind]) == 0) only = kind;
    }
    if (only < 0) {
      if (rank == 0) fprintf(stderr, "osu_collectives: unknown collective '%s'\n", argv[2]);
      MPI_Finalize();
      return 2;
    }
  }
  const long max_elems = max_bytes / 8 > 0 ? max_bytes / 8 : 1;
  double* in = malloc(sizeof(double) * (size_t)max_elems * size);
  double* out = malloc(sizeof(double) * (size_t)max_elems * size);
  for (long i = 0; i < max_elems * size; ++i) in[i] = out[i] = 1.0;
  for (int kind = 0; kind < kKinds; ++kind) {
    if (only >= 0 && kind != only) continue;
    for (long bytes = 8; bytes <= max_bytes; bytes *= 4) {
      const int n = (int)(bytes / 8);
      const int calls = bytes <= 8192 ? 1000 : bytes <= (1 << 18) ? 100 : 20;
      for (int i = 0; i < calls / 10 + 1; ++i) call(kind, in, out, n, size);
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (int i = 0; i < calls; ++i) call(kind, in, out, n, size);
      const double mine = (MPI_Wtime() - start) / calls;
      double slowest = 0;
      MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0) printf("%s %ld %.3f\n", kNames[kind], bytes, slowest * 1e6);
    }
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
