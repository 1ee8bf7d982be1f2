/* SPDX-License-Identifier: Apache-2.0
 * File: which algorithm did the MPI library run? A reduction's result tells, when its
 * operator is declared commutative but is neither commutative nor associative: every
 * algorithm combines the ranks' inputs in its own order and bracketing, so the result's
 * hash (the "signature") is the algorithm's fingerprint. check_selection.sh runs this once
 * with a selection file and once per algorithm forced by the library's own settings, and
 * matches the signatures. Plain C, links only MPI (Open MPI or MPICH).
 *
 *   order_signature COLLECTIVE COUNT [sum]
 *     COLLECTIVE: allreduce, reduce, reduce_scatter_block, scan or exscan
 *     COUNT: elements per rank (reduce_scatter_block: per block)
 *     sum: MPI_SUM on doubles instead (some MPICH algorithms take predefined operators
 *       only). Sums are commutative, so the inputs carry the order instead: even elements
 *       are quiet NaNs with a payload per rank and element (x86's addition of two NaNs
 *       keeps the first operand's payload, so the surviving payload tells the operand order
 *       and which rank added last); odd elements are finite values of widely spread
 *       magnitudes, whose rounded sum depends on the bracketing. x86 only.
 *   prints on rank 0: "signature COLLECTIVE COUNT HEX"
 */
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* inout = f(in, inout): neither commutative nor associative. */
static void combine(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const uint64_t* a = (const uint64_t*)in;
  uint64_t* b = (uint64_t*)inout;
  for (int i = 0; i < *len; ++i) b[i] = mix(a[i] * 0x100000001B3ull ^ (b[i] + 0x51ull));
}

static double sum_input(int rank, long i) {
  const uint64_t h = mix((uint64_t)rank * 1000003u + (uint64_t)i + 1u);
  if ((i & 1) == 0) {
    uint64_t bits = 0x7ff8000000000000ull | (h & 0x0007ffffffffffffull);
    if ((bits & 0x0007ffffffffffffull) == 0) bits |= 1;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  const double mantissa = 1.0 + (double)(h >> 12) / 4503599627370496.0;
  return ((h & 1) ? -1.0 : 1.0) * ldexp(mantissa, (int)((h >> 4) % 61) - 30);
}

static uint64_t fnv(const uint64_t* v, long n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (long i = 0; i < n; ++i) h = (h ^ v[i]) * 0x100000001b3ull;
  return h;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int use_sum = argc == 4 && strcmp(argv[3], "sum") == 0;
  if (argc != 3 && !use_sum) {
    if (rank == 0) fprintf(stderr, "usage: order_signature COLLECTIVE COUNT [sum]\n");
    MPI_Finalize();
    return 2;
  }
  const char* what = argv[1];
  const long count = atol(argv[2]);
  const int blocks = strcmp(what, "reduce_scatter_block") == 0 ? size : 1;
  const long in_count = count * blocks;
  uint64_t* in = malloc(sizeof(uint64_t) * (size_t)(in_count > 0 ? in_count : 1));
  uint64_t* out = calloc((size_t)(in_count > 0 ? in_count : 1), sizeof(uint64_t));
  for (long i = 0; i < in_count; ++i) {
    if (use_sum) {
      const double d = sum_input(rank, i);
      memcpy(&in[i], &d, sizeof d);
    } else {
      in[i] = mix((uint64_t)rank * 1000003u + (uint64_t)i + 1u);
    }
  }
  MPI_Op op = MPI_SUM;
  if (!use_sum) MPI_Op_create(&combine, /*commute=*/1, &op);
  const MPI_Datatype type = use_sum ? MPI_DOUBLE : MPI_UINT64_T;
  long out_count = count;
  int rc = MPI_SUCCESS;
  if (strcmp(what, "allreduce") == 0) {
    rc = MPI_Allreduce(in, out, (int)count, type, op, MPI_COMM_WORLD);
  } else if (strcmp(what, "reduce") == 0) {
    rc = MPI_Reduce(in, out, (int)count, type, op, 0, MPI_COMM_WORLD);
    if (rank != 0) out_count = 0;
  } else if (strcmp(what, "reduce_scatter_block") == 0) {
    rc = MPI_Reduce_scatter_block(in, out, (int)count, type, op, MPI_COMM_WORLD);
  } else if (strcmp(what, "scan") == 0) {
    rc = MPI_Scan(in, out, (int)count, type, op, MPI_COMM_WORLD);
  } else if (strcmp(what, "exscan") == 0) {
    rc = MPI_Exscan(in, out, (int)count, type, op, MPI_COMM_WORLD);
    if (rank == 0) out_count = 0; /* undefined there */
  } else {
    if (rank == 0) fprintf(stderr, "order_signature: unknown collective '%s'\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  /* Every rank's result counts (an algorithm may leave ranks with different brackets). */
  uint64_t mine = mix(fnv(out, out_count) + (uint64_t)rank * 0x9E3779B97F4A7C15ull);
  uint64_t all = 0;
  MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("signature %s %ld %016" PRIx64 "\n", what, count, all);
  fflush(stdout);
  if (!use_sum) MPI_Op_free(&op);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
