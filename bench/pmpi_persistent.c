/* SPDX-License-Identifier: Apache-2.0
 * File: the PMPI library's persistent gatherv against the MPI library's gatherv, per call, in
 * a plain C MPI program run with liboptcoll_pmpi.so preloaded (results: docs/results/nonblocking/):
 *
 *   mpirun -np P --bind-to none -x LD_PRELOAD=build/release/pmpi/liboptcoll_pmpi.so \
 *       -x OPTCOLL_PMPI=always build/release/bench/bench_pmpi_persistent [repetitions [calls]]
 *
 * Four variants, taking turns within every repetition (in a new order each time, after a
 * warm-up), on the same skewed counts as bench_nonblocking's part 2 (int64 elements to root
 * 0; one rank holds most of the data):
 *   persistent   MPI_Gatherv_init (MPIX_ under Open MPI 4.1) + MPI_Start + MPI_Wait, through
 *                the library (routed at init; the counts exchanged once, there)
 *   blocking     MPI_Gatherv through the library (routed per call, after its count exchange)
 *   MPI_Gatherv  the MPI library's own blocking call (PMPI_Gatherv: not intercepted)
 *   MPI_init     the MPI library's own persistent gatherv (PMPI(X)_Gatherv_init, PMPI_Start,
 *                PMPI_Wait)
 * Every cell is the median over `repetitions` (default 11) of the slowest rank's time per
 * call over `calls` calls (default 200) after a barrier. Every variant's result is checked
 * against the values each rank sent (exit 1 on a wrong one). The timing harness calls
 * PMPI_ only, so its own barriers and reductions never go through optcoll. */
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define GATHERV_INIT MPI_Gatherv_init
#define OWN_GATHERV_INIT PMPI_Gatherv_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define GATHERV_INIT MPIX_Gatherv_init
#define OWN_GATHERV_INIT PMPIX_Gatherv_init
#else
#error "this MPI has no persistent collectives (MPI 4, or Open MPI's pcollreq extension)"
#endif

enum { PERSISTENT, BLOCKING, MPI_BLOCKING, MPI_PERSISTENT, VARIANTS };
static const char* const names[VARIANTS] = {"persistent", "blocking", "MPI_Gatherv", "MPI_init"};

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare);
  return v[n / 2];
}

/* What every variant's call needs. */
struct Gatherv {
  int64_t* block;
  int mine;
  int64_t* out;
  const int* counts;
  const int* displs;
  MPI_Request persistent, own;
};

static void run(int variant, struct Gatherv* g) {
  switch (variant) {
    case PERSISTENT:
      MPI_Start(&g->persistent);
      MPI_Wait(&g->persistent, MPI_STATUS_IGNORE);
      break;
    case BLOCKING:
      MPI_Gatherv(g->block, g->mine, MPI_INT64_T, g->out, g->counts, g->displs, MPI_INT64_T, 0,
                  MPI_COMM_WORLD);
      break;
    case MPI_BLOCKING:
      PMPI_Gatherv(g->block, g->mine, MPI_INT64_T, g->out, g->counts, g->displs, MPI_INT64_T, 0,
                   MPI_COMM_WORLD);
      break;
    default:
      PMPI_Start(&g->own);
      PMPI_Wait(&g->own, MPI_STATUS_IGNORE);
  }
}

/* Seconds per call, the slowest rank's, over `calls` calls. */
static double time_calls(int variant, struct Gatherv* g, int calls) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) run(variant, g);
  const double mine = (MPI_Wtime() - start) / calls;
  double slowest = 0;
  PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/* 0 .. VARIANTS - 1 in a random order (Fisher-Yates on a 64-bit LCG; `seed` advances). */
static void shuffled(int* order, uint64_t* seed) {
  for (int v = 0; v < VARIANTS; ++v) order[v] = v;
  for (int v = VARIANTS - 1; v > 0; --v) {
    *seed = *seed * 6364136223846793005u + 1442695040888963407u;
    const int k = (int)((*seed >> 33) % (uint64_t)(v + 1));
    const int swap = order[v];
    order[v] = order[k];
    order[k] = swap;
  }
}

/* Whether the root holds every rank's block (rank q's element k is q * 2^32 + k). */
static int correct(int rank, int p, const int64_t* out, const int* counts, const int* displs) {
  if (rank != 0) return 1;
  for (int q = 0; q < p; ++q) {
    for (int k = 0; k < counts[q]; ++k) {
      if (out[displs[q] + k] != ((int64_t)q << 32) + k) return 0;
    }
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repetitions = argc > 1 ? atoi(argv[1]) : 11;
  const int calls = argc > 2 ? atoi(argv[2]) : 200;
  int rank = 0, p = 0, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (rank == 0) {
    printf("# gatherv, skewed counts, p = %d (us per call, median of %d, %d calls each)\n", p,
           repetitions, calls);
    printf("%-28s %11s %11s %11s %11s %9s %9s\n", "counts (int64)", names[PERSISTENT],
           names[BLOCKING], names[MPI_BLOCKING], names[MPI_PERSISTENT], "mpi/pers", "blk/pers");
  }
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  double* t[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v) t[v] = malloc(sizeof(double) * (size_t)repetitions);
  static const char* const skews[] = {"last rank 128K, others 16", "rank r: 2^r x 64",
                                      "last rank 4K, others 1"};
  uint64_t seed = 20261130;
  for (int s = 0; s < 3; ++s) {
    int total = 0;
    for (int q = 0; q < p; ++q) {
      counts[q] = s == 0   ? (q == p - 1 ? 131072 : 16)
                  : s == 1 ? 64 << (q < 14 ? q : 14)
                           : (q == p - 1 ? 4096 : 1);
      displs[q] = total;
      total += counts[q];
    }
    struct Gatherv g;
    g.mine = counts[rank];
    g.block = malloc(sizeof(int64_t) * (size_t)g.mine);
    for (int k = 0; k < g.mine; ++k) g.block[k] = ((int64_t)rank << 32) + k;
    g.out = malloc(sizeof(int64_t) * (size_t)(rank == 0 ? total : 1));
    g.counts = counts;
    g.displs = displs;
    GATHERV_INIT(g.block, g.mine, MPI_INT64_T, g.out, counts, displs, MPI_INT64_T, 0,
                 MPI_COMM_WORLD, MPI_INFO_NULL, &g.persistent);
    OWN_GATHERV_INIT(g.block, g.mine, MPI_INT64_T, g.out, counts, displs, MPI_INT64_T, 0,
                     MPI_COMM_WORLD, MPI_INFO_NULL, &g.own);
    for (int v = 0; v < VARIANTS; ++v) {
      if (rank == 0) memset(g.out, 0xff, sizeof(int64_t) * (size_t)total);
      run(v, &g);
      wrong += !correct(rank, p, g.out, counts, displs);
    }
    /* The variants take turns in an order shuffled anew for every repetition (the same on
     * every rank: a fixed seed), each timed batch after a warm-up of a quarter of its calls:
     * the variant timed right after another's large messages refills the caches they evicted
     * in its first calls (3-5 us per call over the first ten 1 MiB gathervs here), which a
     * fixed order would charge to the same variant every time. */
    for (int rep = 0; rep < repetitions; ++rep) {
      int order[VARIANTS];
      shuffled(order, &seed);
      for (int k = 0; k < VARIANTS; ++k) {
        const int v = order[k];
        for (int i = 0; i < calls / 4 + 1; ++i) run(v, &g);
        t[v][rep] = time_calls(v, &g, calls);
      }
    }
    wrong += !correct(rank, p, g.out, counts, displs);
    MPI_Request_free(&g.persistent);
    PMPI_Request_free(&g.own);
    double m[VARIANTS];
    for (int v = 0; v < VARIANTS; ++v) m[v] = median(t[v], repetitions);
    if (rank == 0) {
      printf("%-28s %11.1f %11.1f %11.1f %11.1f %9.2f %9.2f\n", skews[s], m[PERSISTENT] * 1e6,
             m[BLOCKING] * 1e6, m[MPI_BLOCKING] * 1e6, m[MPI_PERSISTENT] * 1e6,
             m[MPI_BLOCKING] / m[PERSISTENT], m[BLOCKING] / m[PERSISTENT]);
    }
    free(g.block);
    free(g.out);
  }
  int total_wrong = 0;
  PMPI_Allreduce(&wrong, &total_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total_wrong > 0) printf("WRONG RESULTS: %d\n", total_wrong);
  for (int v = 0; v < VARIANTS; ++v) free(t[v]);
  free(counts);
  free(displs);
  MPI_Finalize();
  return total_wrong > 0;
}
