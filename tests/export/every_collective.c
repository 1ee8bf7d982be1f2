/* SPDX-License-Identifier: Apache-2.0
 * File: one call of every collective an MPI program can make (blocking, nonblocking and
 * neighbourhood; in place where MPI allows it; on an intercommunicator too), each at a small
 * and a large size, with the results checked. MPICH's selection file replaces the library's
 * own for every collective, so a file optcoll exports must serve all of them: run under
 * the file, this program aborts or prints a wrong result where it does not.
 * Plain C, links only MPI. Prints "every collective ran and was right" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

static void expect(int ok, const char* what, int n) {
  if (!ok) {
    fprintf(stderr, "rank %d: %s with %d elements: wrong result\n", rank, what, n);
    ++failures;
  }
}

/* Sum over ranks r of (r + 1) * (i + 1). */
static long sum_of(int i) { return (long)size * (size + 1) / 2 * (i + 1); }

static void intra(int n) {
  long* a = malloc(sizeof(long) * (size_t)n * size);
  long* b = malloc(sizeof(long) * (size_t)n * size);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  for (int r = 0; r < size; ++r) {
    counts[r] = n;
    displs[r] = r * n;
  }
  MPI_Request req;
  const int ops = 2; /* blocking, then nonblocking */
  for (int nb = 0; nb < ops; ++nb) {
#define RUN(blocking, nonblocking, ...)     \
  do {                                      \
    if (nb) {                               \
      MPI_##nonblocking(__VA_ARGS__, &req); \
      MPI_Wait(&req, MPI_STATUS_IGNORE);    \
    } else {                                \
      MPI_##blocking(__VA_ARGS__);          \
    }                                       \
  } while (0)
    for (int i = 0; i < n * size; ++i) a[i] = (long)(rank + 1) * (i % n + 1);
    RUN(Allreduce, Iallreduce, a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expect(b[n - 1] == sum_of(n - 1), "allreduce", n);
    RUN(Reduce, Ireduce, a, b, n, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) expect(b[0] == sum_of(0), "reduce", n);
    RUN(Reduce_scatter_block, Ireduce_scatter_block, a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expect(b[0] == sum_of(0), "reduce_scatter_block", n);
    RUN(Reduce_scatter, Ireduce_scatter, a, b, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expect(b[0] == sum_of(0), "reduce_scatter", n);
    RUN(Scan, Iscan, a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expect(b[0] == (long)(rank + 1) * (rank + 2) / 2, "scan", n);
    RUN(Exscan, Iexscan, a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0) expect(b[0] == (long)rank * (rank + 1) / 2, "exscan", n);
    for (int i = 0; i < n; ++i) a[i] = rank == 1 % size ? 7 : 0;
    RUN(Bcast, Ibcast, a, n, MPI_LONG, 1 % size, MPI_COMM_WORLD);
    expect(a[n - 1] == 7, "bcast", n);
    for (int i = 0; i < n; ++i) a[i] = rank;
    RUN(Allgather, Iallgather, a, n, MPI_LONG, b, n, MPI_LONG, MPI_COMM_WORLD);
    expect(b[(size - 1) * n] == size - 1, "allgather", n);
    RUN(Allgatherv, Iallgatherv, a, n, MPI_LONG, b, counts, displs, MPI_LONG, MPI_COMM_WORLD);
    expect(b[(size - 1) * n] == size - 1, "allgatherv", n);
    RUN(Gather, Igather, a, n, MPI_LONG, b, n, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) expect(b[(size - 1) * n] == size - 1, "gather", n);
    RUN(Gatherv, Igatherv, a, n, MPI_LONG, b, counts, displs, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) expect(b[(size - 1) * n] == size - 1, "gatherv", n);
    for (int i = 0; i < n * size; ++i) a[i] = i / n;
    RUN(Scatter, Iscatter, a, n, MPI_LONG, b, n, MPI_LONG, 0, MPI_COMM_WORLD);
    expect(b[0] == rank, "scatter", n);
    RUN(Scatterv, Iscatterv, a, counts, displs, MPI_LONG, b, n, MPI_LONG, 0, MPI_COMM_WORLD);
    expect(b[0] == rank, "scatterv", n);
    RUN(Alltoall, Ialltoall, a, n, MPI_LONG, b, n, MPI_LONG, MPI_COMM_WORLD);
    expect(b[0] == rank, "alltoall", n);
    RUN(Alltoallv, Ialltoallv, a, counts, displs, MPI_LONG, b, counts, displs, MPI_LONG,
        MPI_COMM_WORLD);
    expect(b[0] == rank, "alltoallv", n);
    MPI_Datatype types[64];
    int bytes_counts[64], bytes_displs[64];
    for (int r = 0; r < size && r < 64; ++r) {
      types[r] = MPI_LONG;
      bytes_counts[r] = n;
      bytes_displs[r] = r * n * (int)sizeof(long);
    }
    RUN(Alltoallw, Ialltoallw, a, bytes_counts, bytes_displs, types, b, bytes_counts, bytes_displs,
        types, MPI_COMM_WORLD);
    expect(b[0] == rank, "alltoallw", n);
    for (int i = 0; i < n * size; ++i) b[i] = rank * 1000 + i / n;
    RUN(Alltoall, Ialltoall, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_LONG, MPI_COMM_WORLD);
    expect(b[0] == rank, "alltoall in place", n);
    if (nb) {
      MPI_Ibarrier(MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  free(a);
  free(b);
  free(counts);
  free(displs);
}

static void neighbourhood(void) {
  MPI_Comm ring;
  int dims[1] = {size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  long mine = rank, got[2] = {-1, -1};
  MPI_Neighbor_allgather(&mine, 1, MPI_LONG, got, 1, MPI_LONG, ring);
  expect(got[1] == (rank + 1) % size, "neighbor_allgather", 1);
  MPI_Request req;
  MPI_Ineighbor_allgather(&mine, 1, MPI_LONG, got, 1, MPI_LONG, ring, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect(got[0] == (rank + size - 1) % size, "ineighbor_allgather", 1);
  long out[2] = {rank, rank}, in[2];
  MPI_Neighbor_alltoall(out, 1, MPI_LONG, in, 1, MPI_LONG, ring);
  expect(in[1] == (rank + 1) % size, "neighbor_alltoall", 1);
  MPI_Comm_free(&ring);
}

static void inter(void) {
  if (size < 2) return;
  MPI_Comm half, both;
  const int colour = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, colour == 0 ? 1 : 0, 17, &both);
  long mine = 1, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, both);
  expect(total == (colour == 0 ? size / 2 : (size + 1) / 2), "intercommunicator allreduce", 1);
  long value = 5;
  int local = 0;
  MPI_Comm_rank(half, &local);
  const int root = colour == 0 ? (local == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&value, 1, MPI_LONG, root, both);
  expect(value == 5, "intercommunicator bcast", 1);
  MPI_Barrier(both);
  MPI_Comm_free(&both);
  MPI_Comm_free(&half);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64) {
    if (rank == 0) fprintf(stderr, "every_collective: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  intra(1);
  intra(40000);
  neighbourhood();
  inter();
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(all == 0 ? "every collective ran and was right\n" : "%d wrong results\n", all);
    fflush(stdout);
  }
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
