// Times MPI_Gatherv and MPI_Scatterv (skewed counts) as an unaware program would call them.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int base = argc > 1 ? atoi(argv[1]) : 16;  // ints per rank (rank 0 and 1 get 2x)
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  int total = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = r < 2 ? 2 * base : base;
    displs[r] = total;
    total += counts[r];
  }
  int* in = calloc(counts[rank] + 1, sizeof(int));
  int* out = calloc(total + 1, sizeof(int));
  const int iters = 2000, reps = 7;
  double g[7], s[7];
  for (int k = 0; k < reps; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Gatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    g[k] = (MPI_Wtime() - t) / iters * 1e6;
    t = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Scatterv(out, counts, displs, MPI_INT, in, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    s[k] = (MPI_Wtime() - t) / iters * 1e6;
  }
  qsort(g, reps, sizeof(double), cmp);
  qsort(s, reps, sizeof(double), cmp);
  if (rank == 0)
    printf("p=%d bytes/rank=%d gatherv %.2f us scatterv %.2f us (median of %d x %d calls)\n", p,
           base * 4, g[reps / 2], s[reps / 2], reps, iters);
  MPI_Finalize();
  return 0;
}
