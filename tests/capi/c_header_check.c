/* SPDX-License-Identifier: Apache-2.0 */
/* File: include/optcoll.h used from C (compiled as C11): an allreduce and a gatherv with
 * irregular counts, then the same allreduce nonblocking and persistent (OPTCOLL_Request),
 * checked against the values every rank can compute. */
#include <stdio.h>
#include <stdlib.h>

#include "optcoll.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0, ok = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long mine = rank + 1, sum = 0;
  if (OPTCOLL_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
      sum != (long long)size * (size + 1) / 2) {
    ok = 0;
  }
  /* rank r contributes r copies of r */
  int* in = malloc(sizeof(int) * (size_t)(rank + 1));
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = r;
    displs[r] = total;
    total += r;
  }
  for (int i = 0; i < rank; ++i) in[i] = rank;
  int* out = malloc(sizeof(int) * (size_t)(total + 1));
  if (OPTCOLL_Gatherv(in, rank, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD) !=
      MPI_SUCCESS) {
    ok = 0;
  }
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < r; ++i) {
        if (out[displs[r] + i] != r) ok = 0;
      }
    }
  }
  /* Nonblocking, then persistent twice with new data. */
  OPTCOLL_Request request = OPTCOLL_REQUEST_NULL;
  sum = 0;
  if (OPTCOLL_Iallreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request) !=
          MPI_SUCCESS ||
      OPTCOLL_Wait(&request) != MPI_SUCCESS || request != OPTCOLL_REQUEST_NULL ||
      sum != (long long)size * (size + 1) / 2) {
    ok = 0;
  }
  if (OPTCOLL_Allreduce_init(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request) !=
      MPI_SUCCESS) {
    ok = 0;
  }
  for (int step = 1; step <= 2; ++step) {
    mine = (long long)step * (rank + 1);
    int flag = 0;
    if (OPTCOLL_Start(&request) != MPI_SUCCESS) ok = 0;
    while (!flag) {
      if (OPTCOLL_Test(&request, &flag) != MPI_SUCCESS) break;
    }
    if (sum != (long long)step * size * (size + 1) / 2) ok = 0;
  }
  if (OPTCOLL_Request_free(&request) != MPI_SUCCESS || request != OPTCOLL_REQUEST_NULL) ok = 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("C header check: %s\n", all_ok ? "ok" : "FAILED");
  free(in);
  free(counts);
  free(displs);
  free(out);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
