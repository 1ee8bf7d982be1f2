/* SPDX-License-Identifier: Apache-2.0
 * File: an MPI program one of whose ranks holds a collective up, for the hang reports
 * (optcoll/api/hang_report.h; tests/capi/check_hang.sh runs it and `optcoll diagnose` on its
 * stderr). Every rank makes four OPTCOLL_Allreduce calls on MPI_COMM_WORLD under
 * MPI_ERRORS_RETURN; before the third, rank STALL either skips the rest ("skip": it never
 * reaches call #3) or sleeps SECONDS first ("late"). A rank whose call fails stops calling.
 *
 *   stall_app skip|late STALL SECONDS
 *   prints on stdout "stall_app: rank R: call K failed" for each failed call
 */
#include <unistd.h>

#include <mpi.h>
#include <optcoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: stall_app skip|late STALL SECONDS\n");
    MPI_Finalize();
    return 2;
  }
  /* Ring: every step of a rank waits for its left neighbour's previous one, so a rank that
   * arrives late can never complete the call the others gave up on. (Under recursive
   * doubling at p = 4, rank 2 found every message it needed already sent and completed call
   * #3 whenever the others' abort notice arrived after them: the test failed under load.) */
  OPTCOLL_Set_algorithm("allreduce", "ring");
  const int skip = strcmp(argv[1], "skip") == 0;
  const int stall = atoi(argv[2]);
  const int seconds = atoi(argv[3]);
  for (int call = 1; call <= 4; ++call) {
    if (call == 3 && rank == stall) {
      if (skip) break;
      sleep((unsigned)seconds);
    }
    int in = rank + 1, out = 0;
    if (OPTCOLL_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
      printf("stall_app: rank %d: call %d failed\n", rank, call);
      fflush(stdout);
      break;
    }
  }
  MPI_Finalize();
  return 0;
}
