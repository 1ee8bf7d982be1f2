/* SPDX-License-Identifier: Apache-2.0 */
/* File: an MPI program that knows nothing of optcoll: it calls MPI's collectives on integer
 * data and checks every result against values each rank computes by itself (exact integers,
 * so equal to what any correct MPI returns, bit for bit). ctest runs it plain and with
 * LD_PRELOAD=liboptcoll_pmpi.so. Exit 0 when every check passed on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_, size_, failures_;

static void check(int ok, const char* what, int round) {
  if (!ok) {
    ++failures_;
    fprintf(stderr, "rank %d: wrong result: %s (round %d)\n", rank_, what, round);
  }
}

/* The value rank r holds at index i in round k. */
static int value(int r, int i, int k) { return (r + 1) * 1000 + i * 7 + k; }

/* Rank r's irregular count in round k (zeros included). */
static int count_of(int r, int k) { return (r + k) % 3 == 0 ? 0 : 3 * r + k + 1; }

static void round_of_calls(int k, int n) {
  int* in = malloc(sizeof(int) * (size_t)(n * size_ + 1));
  int* out = malloc(sizeof(int) * (size_t)(n * size_ + 1));
  int* expect = malloc(sizeof(int) * (size_t)(n * size_ + 1));
  for (int i = 0; i < n * size_; ++i) in[i] = value(rank_, i, k);
  /* allreduce (sum) */
  MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int ok = 1;
  for (int i = 0; i < n; ++i) {
    long long sum = 0;
    for (int r = 0; r < size_; ++r) sum += value(r, i, k);
    ok = ok && out[i] == (int)sum;
  }
  check(ok, "MPI_Allreduce", k);
  /* reduce (max) to root k % size */
  const int root = k % size_;
  MPI_Reduce(in, out, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
  if (rank_ == root) {
    ok = 1;
    for (int i = 0; i < n; ++i) ok = ok && out[i] == value(size_ - 1, i, k);
    check(ok, "MPI_Reduce", k);
  }
  /* bcast from root */
  for (int i = 0; i < n; ++i) out[i] = rank_ == root ? value(root, i, k) : -1;
  MPI_Bcast(out, n, MPI_INT, root, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) ok = ok && out[i] == value(root, i, k);
  check(ok, "MPI_Bcast", k);
  /* allgather */
  MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < size_; ++r)
    for (int i = 0; i < n; ++i) ok = ok && out[r * n + i] == value(r, i, k);
  check(ok, "MPI_Allgather", k);
  /* reduce_scatter_block (sum): block b of rank r's input is in[b*n .. b*n+n) */
  MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) {
    long long sum = 0;
    for (int r = 0; r < size_; ++r) sum += value(r, rank_ * n + i, k);
    ok = ok && out[i] == (int)sum;
  }
  check(ok, "MPI_Reduce_scatter_block", k);
  /* alltoall: rank r's block b goes to rank b */
  MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < size_; ++r)
    for (int i = 0; i < n; ++i) ok = ok && out[r * n + i] == value(r, rank_ * n + i, k);
  check(ok, "MPI_Alltoall", k);
  /* scan (sum) */
  MPI_Scan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) {
    long long sum = 0;
    for (int r = 0; r <= rank_; ++r) sum += value(r, i, k);
    ok = ok && out[i] == (int)sum;
  }
  check(ok, "MPI_Scan", k);
  free(in);
  free(out);
  free(expect);
}

static void irregular_calls(int k) {
  const int root = (k + 1) % size_;
  int* counts = malloc(sizeof(int) * (size_t)size_);
  int* displs = malloc(sizeof(int) * (size_t)size_);
  int total = 0;
  for (int r = size_ - 1; r >= 0; --r) { /* blocks in reverse rank order, with gaps */
    counts[r] = count_of(r, k);
    displs[r] = total + 1;
    total += counts[r] + 1;
  }
  const int mine = counts[rank_];
  int* in = malloc(sizeof(int) * (size_t)(mine + 1));
  int* buf = malloc(sizeof(int) * (size_t)(total + 1));
  for (int i = 0; i < mine; ++i) in[i] = value(rank_, i, k);
  for (int i = 0; i < total; ++i) buf[i] = -7;
  /* gatherv: counts at the root only, as MPI allows */
  MPI_Gatherv(in, mine, MPI_INT, buf, rank_ == root ? counts : NULL, rank_ == root ? displs : NULL,
              MPI_INT, root, MPI_COMM_WORLD);
  if (rank_ == root) {
    int ok = 1;
    for (int r = 0; r < size_; ++r) {
      for (int i = 0; i < counts[r]; ++i) ok = ok && buf[displs[r] + i] == value(r, i, k);
      ok = ok && buf[displs[r] - 1] == -7; /* the gaps stay untouched */
    }
    check(ok, "MPI_Gatherv", k);
  }
  /* scatterv back from the root's buffer */
  for (int r = 0; r < size_; ++r)
    for (int i = 0; i < counts[r]; ++i) buf[displs[r] + i] = value(r, i, k + 100);
  int* got = malloc(sizeof(int) * (size_t)(mine + 1));
  MPI_Scatterv(buf, rank_ == root ? counts : NULL, rank_ == root ? displs : NULL, MPI_INT, got,
               mine, MPI_INT, root, MPI_COMM_WORLD);
  int ok = 1;
  for (int i = 0; i < mine; ++i) ok = ok && got[i] == value(rank_, i, k + 100);
  check(ok, "MPI_Scatterv", k);
  /* allgatherv */
  for (int i = 0; i < total; ++i) buf[i] = -7;
  MPI_Allgatherv(in, mine, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int r = 0; r < size_; ++r)
    for (int i = 0; i < counts[r]; ++i) ok = ok && buf[displs[r] + i] == value(r, i, k);
  check(ok, "MPI_Allgatherv", k);
  free(counts);
  free(displs);
  free(in);
  free(buf);
  free(got);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const int sizes[] = {0, 1, 100, 100000};
  for (int k = 0; k < 4; ++k) {
    round_of_calls(k, sizes[k]);
    /* Twice: the same calls again with others in between, as an application's loop makes
     * them (a preloaded library then routes them from what it remembers). */
    irregular_calls(k);
    irregular_calls(k);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&failures_, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0)
    printf("unaware_app: %s (%d wrong results)\n", total == 0 ? "all results correct" : "FAILED",
           total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
