/* SPDX-License-Identifier: Apache-2.0 */
/* File: an MPI program with one call shape whose route depends on the transport the PMPI
 * library prices the MPI library's algorithms on (ctest pmpi_route_own_transport and
 * pmpi_route_library_rate): a gatherv to rank 0 in which the last rank sends N int64
 * (argv[1], default 4096: 32 KiB) and the others one each, 20 times. On one node under the
 * one-node default, optcoll's linear gatherv sends the large block through its same-node
 * channel, and the MPI library's linear waits for its handshake and then moves it at its own
 * rate (rendezvous_beta): at 32 KiB the handshake decides, at 1 MiB the rate. optcoll wins
 * the route (the two priced on one transport would tie, and the call would go to the MPI
 * library). Every result is checked against values each rank computes; exit 0 when all were
 * right on every rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCalls = 20 };

static int64_t value(int r, int i) { return (int64_t)r * 1000003 + i; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int large = argc > 1 ? atoi(argv[1]) : 4096;
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = r == size - 1 ? large : 1;
    displs[r] = total;
    total += counts[r];
  }
  int64_t* mine = malloc(sizeof(int64_t) * (size_t)counts[rank]);
  for (int i = 0; i < counts[rank]; ++i) mine[i] = value(rank, i);
  int64_t* gathered = malloc(sizeof(int64_t) * (size_t)total);
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    for (int i = 0; i < total; ++i) gathered[i] = -1;
    MPI_Gatherv(mine, counts[rank], MPI_INT64_T, gathered, counts, displs, MPI_INT64_T, 0,
                MPI_COMM_WORLD);
    if (rank == 0) {
      for (int r = 0; r < size; ++r) {
        for (int i = 0; i < counts[r]; ++i) wrong += gathered[displs[r] + i] != value(r, i);
      }
    }
  }
  int all = 0;
  MPI_Reduce(&wrong, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("route_app: %s (%d wrong)\n", all == 0 ? "all results correct" : "FAILED", all);
  free(mine);
  free(gathered);
  free(counts);
  free(displs);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
