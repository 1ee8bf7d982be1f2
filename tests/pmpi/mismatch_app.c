/* SPDX-License-Identifier: Apache-2.0 */
/* File: an MPI program whose MPI_Bcast has a wrong count on rank 1 (half the others'), run
 * with liboptcoll_pmpi.so under OPTCOLL_PMPI=always (ctest pmpi_mismatched_bcast). Under
 * MPI_ERRORS_RETURN every rank reports what its call returned and how long it took. The rank
 * that finds the mismatch tells the others: each rank still in the call fails at once naming
 * it (docs/c_api.md), none waits for its timeout (OPTCOLL_TIMEOUT_MS, 30 s by default); a
 * rank that had finished the call returns MPI_SUCCESS. Then a correct bcast works on every
 * rank. Exit 0 when all of that held. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCount = 100000 };
static const double kPromptSeconds = 5.0; /* far below the 30 s timeout */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int* buf = calloc(kCount, sizeof(int));
  const double start = MPI_Wtime();
  const int code = MPI_Bcast(buf, rank == 1 ? kCount / 2 : kCount, MPI_INT, 0, MPI_COMM_WORLD);
  const double took = MPI_Wtime() - start;
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (code != MPI_SUCCESS) MPI_Error_string(code, text, &length);
  printf("rank %d: %s after %.2f s%s%s\n", rank, code == MPI_SUCCESS ? "ok" : "failed", took,
         code == MPI_SUCCESS ? "" : ": ", text);
  /* Rank 1 found the mismatch itself; a rank that failed otherwise was told by it. */
  int ok = took < kPromptSeconds;
  if (rank == 1) ok = ok && code != MPI_SUCCESS && strstr(text, "expected") != NULL;
  if (rank != 1 && code != MPI_SUCCESS) ok = ok && strstr(text, "rank 1 failed") != NULL;
  /* The next call works on every rank. */
  for (int i = 0; i < kCount; ++i) buf[i] = rank == 0 ? i : -1;
  ok = ok && MPI_Bcast(buf, kCount, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
  for (int i = 0; i < kCount; ++i) ok = ok && buf[i] == i;
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    printf("mismatch_app: %s\n", all ? "every rank failed promptly or finished" : "FAILED");
  free(buf);
  MPI_Finalize();
  return all ? 0 : 1;
}
