/* SPDX-License-Identifier: Apache-2.0 */
/* File: the C API from a C program (examples/c_quickstart/CMakeLists.txt builds it against
 * an installed optcoll): an MPI program switches a collective to optcoll by renaming it.
 * An allreduce and an irregular gatherv with counts at the root only, each checked against
 * what every rank computes by itself; exit 0 when all are right on every rank.
 *
 *   mpirun -np 4 ./c_quickstart */
#include <optcoll.h> /* includes <mpi.h> */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = 1;

  /* MPI_Allreduce renamed: the sum of the ranks' values. */
  double mine[3] = {rank, 2.0 * rank, 1.0};
  double sum[3] = {0, 0, 0};
  ok = ok && OPTCOLL_Allreduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
  const double ranks = size * (size - 1) / 2.0;
  ok = ok && sum[0] == ranks && sum[1] == 2 * ranks && sum[2] == size;

  /* MPI_Gatherv renamed: rank r sends r + 1 ints; the counts are known at the root only. */
  const int root = size - 1;
  int* block = malloc(sizeof(int) * (size_t)(rank + 1));
  for (int i = 0; i <= rank; ++i) block[i] = 100 * rank + i;
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = r + 1;
    displs[r] = total;
    total += r + 1;
  }
  int* all = malloc(sizeof(int) * (size_t)total);
  ok = ok &&
       OPTCOLL_Gatherv(block, rank + 1, MPI_INT, all, rank == root ? counts : NULL,
                       rank == root ? displs : NULL, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS;
  if (rank == root) {
    for (int r = 0; r < size; ++r)
      for (int i = 0; i <= r; ++i) ok = ok && all[displs[r] + i] == 100 * r + i;
  }

  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("c_quickstart on %d ranks: %s\n", size, all_ok ? "correct" : "WRONG");
  free(block);
  free(counts);
  free(displs);
  free(all);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
