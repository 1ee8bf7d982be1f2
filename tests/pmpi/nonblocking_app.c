/* SPDX-License-Identifier: Apache-2.0
 * File: an MPI program that knows nothing of optcoll, using nonblocking collectives
 * (MPI_Iallreduce, _Ibcast, _Iallgather, _Iallgatherv, _Ireduce, _Ireduce_scatter,
 * _Ialltoallv, _Ibarrier) several at once, mixed with
 * point-to-point requests in one MPI_Waitall, completed also by MPI_Test loops, MPI_Waitany
 * and MPI_Waitsome; every result is checked against values each rank computes. Run with
 * liboptcoll_pmpi.so preloaded (ctest pmpi_nonblocking_*); prints "nonblocking_app: all
 * results correct" from rank 0 when every rank's are. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, ok = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long* in = malloc(sizeof(long long) * N);
  long long* sum = malloc(sizeof(long long) * N);
  long long* max = malloc(sizeof(long long) * N);
  long long* root_sum = malloc(sizeof(long long) * N);
  long long* message = malloc(sizeof(long long) * N);
  int* all = malloc(sizeof(int) * (size_t)size);
  /* allgatherv: rank q gives q % 2 + 1 ints, placed in reverse rank order with a gap */
  int* vcounts = malloc(sizeof(int) * (size_t)size);
  int* vdispls = malloc(sizeof(int) * (size_t)size);
  int vtotal = 1;
  for (int q = size - 1; q >= 0; --q) {
    vcounts[q] = q % 2 + 1;
    vdispls[q] = vtotal;
    vtotal += vcounts[q] + 1;
  }
  int* vall = malloc(sizeof(int) * (size_t)vtotal);
  int vmine[2];
  /* reduce_scatter: two ints per rank */
  int* rs_in = malloc(sizeof(int) * (size_t)(2 * size));
  int* rs_counts = malloc(sizeof(int) * (size_t)size);
  for (int q = 0; q < size; ++q) rs_counts[q] = 2;
  int rs_out[2];
  /* alltoallv: rank q sends (q + j) % 3 ints to rank j (zeros included), valued
   * 1000 q + 10 j + round; received in reverse rank order with a gap */
  int* a2a_sendcounts = malloc(sizeof(int) * (size_t)size);
  int* a2a_sdispls = malloc(sizeof(int) * (size_t)size);
  int* a2a_recvcounts = malloc(sizeof(int) * (size_t)size);
  int* a2a_rdispls = malloc(sizeof(int) * (size_t)size);
  int a2a_stotal = 0, a2a_rtotal = 1;
  for (int j = 0; j < size; ++j) {
    a2a_sendcounts[j] = (rank + j) % 3;
    a2a_sdispls[j] = a2a_stotal;
    a2a_stotal += a2a_sendcounts[j];
  }
  for (int q = size - 1; q >= 0; --q) {
    a2a_recvcounts[q] = (q + rank) % 3;
    a2a_rdispls[q] = a2a_rtotal;
    a2a_rtotal += a2a_recvcounts[q] + 1;
  }
  int* a2a_in = malloc(sizeof(int) * (size_t)(a2a_stotal + 1));
  int* a2a_out = malloc(sizeof(int) * (size_t)a2a_rtotal);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < N; ++i) {
      in[i] = (long long)(rank + 1) * (i + 1) + round;
      message[i] = rank == 0 ? 7 * i + round : -1;
    }
    int mine = rank * 10 + round;
    int token = rank, received = -1;
    MPI_Request r[11];
    for (int j = 0; j < size; ++j) {
      for (int i = 0; i < a2a_sendcounts[j]; ++i) {
        a2a_in[a2a_sdispls[j] + i] = 1000 * rank + 10 * j + round;
      }
    }
    vmine[0] = vmine[1] = 100 * rank + round;
    for (int i = 0; i < 2 * size; ++i) rs_in[i] = rank + i + round;
    MPI_Iallreduce(in, sum, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Iallreduce(in, max, N, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &r[1]);
    MPI_Ibcast(message, N, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &r[2]);
    MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &r[3]);
    MPI_Ireduce(in, root_sum, N, MPI_LONG_LONG, MPI_SUM, size - 1, MPI_COMM_WORLD, &r[4]);
    /* A ring of point-to-point messages among them. */
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, round, MPI_COMM_WORLD, &r[5]);
    MPI_Irecv(&received, 1, MPI_INT, (rank + size - 1) % size, round, MPI_COMM_WORLD, &r[6]);
    MPI_Ibarrier(MPI_COMM_WORLD, &r[7]);
    MPI_Iallgatherv(vmine, rank % 2 + 1, MPI_INT, vall, vcounts, vdispls, MPI_INT, MPI_COMM_WORLD,
                    &r[8]);
    MPI_Ireduce_scatter(rs_in, rs_out, rs_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[9]);
    MPI_Ialltoallv(a2a_in, a2a_sendcounts, a2a_sdispls, MPI_INT, a2a_out, a2a_recvcounts,
                   a2a_rdispls, MPI_INT, MPI_COMM_WORLD, &r[10]);
    if (round == 0) {
      MPI_Waitall(11, r, MPI_STATUSES_IGNORE);
    } else if (round == 1) {
      for (int k = 0; k < 11; ++k) {
        int flag = 0;
        while (!flag) MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE);
      }
    } else {
      int done = 0, index = 0;
      while (done < 4) {
        MPI_Waitany(11, r, &index, MPI_STATUS_IGNORE);
        ++done;
      }
      int outcount = 0, indices[11];
      while (done < 11) {
        MPI_Waitsome(11, r, &outcount, indices, MPI_STATUSES_IGNORE);
        if (outcount == MPI_UNDEFINED) break;
        done += outcount;
      }
    }
    for (int k = 0; k < 11; ++k) {
      if (r[k] != MPI_REQUEST_NULL) ok = 0;
    }
    for (int q = 0; q < size; ++q) {
      for (int i = 0; i < a2a_recvcounts[q]; ++i) {
        if (a2a_out[a2a_rdispls[q] + i] != 1000 * q + 10 * rank + round) ok = 0;
      }
    }
    for (int q = 0; q < size; ++q) {
      for (int i = 0; i < vcounts[q]; ++i) {
        if (vall[vdispls[q] + i] != 100 * q + round) ok = 0;
      }
    }
    for (int i = 0; i < 2; ++i) {
      /* sum over q of (q + 2 * rank + i + round) */
      const int expected = size * (size - 1) / 2 + size * (2 * rank + i + round);
      if (rs_out[i] != expected) ok = 0;
    }
    const long long ranks_sum = (long long)size * (size + 1) / 2;
    for (int i = 0; i < N; ++i) {
      if (sum[i] != ranks_sum * (i + 1) + (long long)size * round) ok = 0;
      if (max[i] != (long long)size * (i + 1) + round) ok = 0;
      if (message[i] != 7 * i + round) ok = 0;
      if (rank == size - 1 && root_sum[i] != sum[i]) ok = 0;
    }
    for (int q = 0; q < size; ++q) {
      if (all[q] != q * 10 + round) ok = 0;
    }
    if (received != (rank + size - 1) % size) ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("nonblocking_app: %s\n", all_ok ? "all results correct" : "WRONG results");
  free(in);
  free(sum);
  free(max);
  free(root_sum);
  free(message);
  free(all);
  free(vcounts);
  free(vdispls);
  free(vall);
  free(rs_in);
  free(rs_counts);
  free(a2a_sendcounts);
  free(a2a_sdispls);
  free(a2a_recvcounts);
  free(a2a_rdispls);
  free(a2a_in);
  free(a2a_out);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
