/* SPDX-License-Identifier: Apache-2.0
 * File: an MPI program that knows nothing of optcoll, using persistent collectives (MPI 4's
 * MPI_<Name>_init, or Open MPI 4.1's MPIX_<Name>_init): allreduce, bcast (root p - 1),
 * gatherv of skewed counts into reversed, gapped displacements, scatterv, reduce_scatter_block
 * and barrier, started five times with new data beside persistent point-to-point requests
 * (MPI_Send_init, MPI_Recv_init), nonblocking ones (MPI_Iallreduce, MPI_Isend, MPI_Irecv)
 * and, under Open MPI, a persistent gather of a strided datatype that the library leaves to
 * the MPI library.
 * Each round starts them differently (MPI_Startall of the mixture, or MPI_Start one by one)
 * and completes them differently (MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Waitsome,
 * MPI_Wait and MPI_Test); every result is checked against values each rank computes, and
 * every persistent handle must come back unchanged, inactive, after every round, and
 * MPI_Request_free must set it to MPI_REQUEST_NULL. With the argument "optcoll" (the
 * library routes them through optcoll) it also checks what only the library promises: empty
 * statuses for the collectives, and that starting an active request again, freeing or
 * cancelling an active one fail with MPI_ERR_REQUEST on a communicator whose handler
 * returns. Run with liboptcoll_pmpi.so preloaded (ctest pmpi_persistent_*); prints
 * "persistent_app: all results correct" from rank 0 when every rank's are. */
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define INIT(Name) MPI_##Name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define INIT(Name) MPIX_##Name##_init
#else
#error "this MPI has no persistent collectives (MPI 4, or Open MPI's pcollreq extension)"
#endif

#if defined(OPEN_MPI)
#define OPEN_MPI_LIBRARY 1
#else
#define OPEN_MPI_LIBRARY 0
#endif

#define N 1000   /* allreduce elements */
#define M 300    /* bcast elements */
#define B 3      /* reduce_scatter_block elements per rank */
#define BIG 3000 /* the last rank's gatherv block */
#define ROUNDS 5
/* The requests, in the order every rank starts them. THEIRS is a persistent collective that
 * the library leaves to the MPI library whatever the policy (a gather of a strided datatype,
 * which optcoll does not move), among the library's own: the MPI library's own persistent
 * collectives in MPI_Testall fail in MPICH 4.0.2 (MPI_ERR_IN_STATUS, also without the
 * library), so there it is a persistent receive of a message to self instead (not one from
 * MPI_PROC_NULL: MPICH 4.0.2's MPI_Testany takes a started one for inactive). */
enum {
  AR,
  BC,
  GV,
  THEIRS,
  RSB,
  BAR,
  SV,
  SEND,
  RECV,
  NPERSISTENT,
  NB_AR = NPERSISTENT,
  NB_RECV,
  NB_SEND,
  NREQ
};
static const int ours[] = {AR, BC, GV, RSB, BAR, SV}; /* collectives optcoll may run */
#define NOURS 6

static int ok = 1;
static int rank = 0;

static void expect(int condition, const char* what, int round, long long index) {
  if (!condition && ok) {
    fprintf(stderr, "persistent_app: rank %d round %d: wrong %s (index %lld)\n", rank, round, what,
            index);
  }
  if (!condition) ok = 0;
}

static int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

/* Misuse of an active optcoll persistent request: refused, and the request still works. */
static void check_misuse(int size) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  long long in = rank + 1, out = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  INIT(Allreduce)(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &r);
  const MPI_Request handle = r;
  expect(MPI_Start(&r) == MPI_SUCCESS, "first MPI_Start", -1, 0);
  int code = MPI_Start(&r);
  expect(error_class(code) == MPI_ERR_REQUEST, "error class of MPI_Start of an active request", -1,
         code);
  /* The message comes with the code (MPI_Add_error_string). MPICH 4.0.2's MPI_Error_string
   * does not return such strings (it prints an unrelated error stack): checked elsewhere. */
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  expect(!OPEN_MPI_LIBRARY || strstr(text, "already active") != NULL,
         "message of MPI_Start of an active request", -1, 0);
  code = MPI_Request_free(&r);
  expect(error_class(code) == MPI_ERR_REQUEST, "error class of MPI_Request_free while active", -1,
         code);
  MPI_Error_string(code, text, &length);
  expect(!OPEN_MPI_LIBRARY ||
             strstr(text, "MPI_Request_free of an active persistent collective request") != NULL,
         "message of MPI_Request_free while active", -1, 0);
  expect(r == handle, "handle after a refused MPI_Request_free", -1, 0);
  code = MPI_Cancel(&r);
  expect(error_class(code) == MPI_ERR_REQUEST, "error class of MPI_Cancel", -1, code);
  expect(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait after misuse", -1, 0);
  expect(out == (long long)size * (size + 1) / 2, "allreduce after misuse", -1, out);
  expect(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "MPI_Request_free", -1, 0);
  MPI_Comm_free(&comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int optcoll = argc > 1 && strcmp(argv[1], "optcoll") == 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* allreduce, bcast */
  long long* ar_in = malloc(sizeof(long long) * N);
  long long* ar_out = malloc(sizeof(long long) * N);
  int* bc = malloc(sizeof(int) * M);
  /* gatherv to root 0: rank q gives q + 1 ints, the last rank BIG; blocks in reverse rank
   * order, one unused int between them */
  int* gv_counts = malloc(sizeof(int) * (size_t)size);
  int* gv_displs = malloc(sizeof(int) * (size_t)size);
  int gv_total = 1;
  for (int q = size - 1; q >= 0; --q) {
    gv_counts[q] = q == size - 1 ? BIG : q + 1;
    gv_displs[q] = gv_total;
    gv_total += gv_counts[q] + 1;
  }
  const int gv_mine = gv_counts[rank];
  int* gv_block = malloc(sizeof(int) * (size_t)gv_mine);
  int* gv_all = malloc(sizeof(int) * (size_t)gv_total);
  /* scatterv from root size / 2: rank q gets 2 q + 1 ints, packed in rank order */
  const int sv_root = size / 2;
  int* sv_counts = malloc(sizeof(int) * (size_t)size);
  int* sv_displs = malloc(sizeof(int) * (size_t)size);
  int sv_total = 0;
  for (int q = 0; q < size; ++q) {
    sv_counts[q] = 2 * q + 1;
    sv_displs[q] = sv_total;
    sv_total += sv_counts[q];
  }
  int* sv_all = malloc(sizeof(int) * (size_t)sv_total);
  int* sv_mine = malloc(sizeof(int) * (size_t)sv_counts[rank]);
  /* reduce_scatter_block */
  int* rs_in = malloc(sizeof(int) * (size_t)(B * size));
  int rs_out[B];
  /* THEIRS: every rank's elements 0 and 2 gathered at rank 0 */
  int th_in[3];
  int* th_all = malloc(sizeof(int) * (size_t)(2 * size));
  /* point-to-point */
  int token_out = 0, token_in = -1, nb_out = 0, nb_in = -1;
  long long nb_sum_in = 0, nb_sum = 0;

  MPI_Request r[NREQ], handle[NPERSISTENT];
  INIT(Allreduce)(ar_in, ar_out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[AR]);
  INIT(Bcast)(bc, M, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[BC]);
  /* recvcounts and displs are significant at the root only */
  INIT(Gatherv)
  (gv_block, gv_mine, MPI_INT, rank == 0 ? gv_all : NULL, rank == 0 ? gv_counts : NULL,
   rank == 0 ? gv_displs : NULL, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[GV]);
  INIT(Reduce_scatter_block)
  (rs_in, rs_out, B, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[RSB]);
  INIT(Barrier)(MPI_COMM_WORLD, MPI_INFO_NULL, &r[BAR]);
  INIT(Scatterv)
  (rank == sv_root ? sv_all : NULL, rank == sv_root ? sv_counts : NULL,
   rank == sv_root ? sv_displs : NULL, MPI_INT, sv_mine, sv_counts[rank], MPI_INT, sv_root,
   MPI_COMM_WORLD, MPI_INFO_NULL, &r[SV]);
  MPI_Send_init(&token_out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[SEND]);
#if OPEN_MPI_LIBRARY /* Open MPI */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  INIT(Gather)(th_in, 1, strided, th_all, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[THEIRS]);
#else
  MPI_Recv_init(th_in, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &r[THEIRS]);
#endif
  MPI_Recv_init(&token_in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[RECV]);
  for (int k = 0; k < NPERSISTENT; ++k) {
    handle[k] = r[k];
    expect(r[k] != MPI_REQUEST_NULL, "persistent request after init", -1, k);
    int flag = 0;
    MPI_Request_get_status(r[k], &flag, MPI_STATUS_IGNORE);
    expect(flag == 1, "MPI_Request_get_status of an inactive request", -1, k);
  }

  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < N; ++i) ar_in[i] = (long long)(rank + 1) * (i + 1) + 7 * round;
    for (int i = 0; i < M; ++i) bc[i] = rank == size - 1 ? 1000 * round + i : -1;
    for (int k = 0; k < gv_mine; ++k) gv_block[k] = 100000 * rank + k + 7 * round;
    for (int k = 0; k < gv_total; ++k) gv_all[k] = -7;
    for (int k = 0; k < sv_total; ++k) sv_all[k] = rank == sv_root ? 50 * k + round : -1;
    for (int k = 0; k < sv_counts[rank]; ++k) sv_mine[k] = -1;
    for (int j = 0; j < B * size; ++j) rs_in[j] = rank + j + round;
    th_in[0] = 3 * rank + round;
    th_in[1] = -1; /* skipped by the strided type */
    th_in[2] = 3 * rank + round + 1;
    for (int k = 0; k < 2 * size; ++k) th_all[k] = -1;
    token_out = 10 * rank + round;
    token_in = -1;
    nb_out = 20 * rank + round;
    nb_in = -1;
    nb_sum_in = rank + round;

    /* start: the mixture at once, or one by one */
    if (round % 2 == 0) {
      MPI_Startall(NPERSISTENT, r);
    } else {
      MPI_Start(&r[RECV]); /* point-to-point first */
      MPI_Start(&r[SEND]);
      for (int k = 0; k < SEND; ++k) MPI_Start(&r[k]);
    }
#if !OPEN_MPI_LIBRARY
    MPI_Send(&th_in[2], 1, MPI_INT, rank, 6, MPI_COMM_WORLD); /* THEIRS receives it */
#endif
    MPI_Iallreduce(&nb_sum_in, &nb_sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r[NB_AR]);
    MPI_Irecv(&nb_in, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[NB_RECV]);
    MPI_Isend(&nb_out, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[NB_SEND]);

    /* complete */
    MPI_Status st[NREQ];
    for (int k = 0; k < NREQ; ++k) {
      st[k].MPI_SOURCE = -99;
      st[k].MPI_TAG = -99;
    }
    int completions[NREQ] = {0};
    if (round == 0) {
      MPI_Waitall(NREQ, r, st);
      for (int k = 0; k < NREQ; ++k) completions[k] = 1;
    } else if (round == 1) {
      int flag = 0;
      while (!flag) MPI_Testall(NREQ, r, &flag, st);
      for (int k = 0; k < NREQ; ++k) completions[k] = 1;
    } else if (round == 2) {
      for (int done = 0; done < NREQ; ++done) {
        int index = -1;
        MPI_Status s;
        MPI_Waitany(NREQ, r, &index, &s);
        expect(index >= 0 && index < NREQ, "MPI_Waitany index", round, index);
        if (index < 0 || index >= NREQ) break;
        ++completions[index];
        st[index] = s;
      }
      int index = 0;
      MPI_Waitany(NREQ, r, &index, MPI_STATUS_IGNORE); /* every request now inactive or null */
      expect(index == MPI_UNDEFINED, "MPI_Waitany of inactive requests", round, index);
    } else if (round == 3) {
      int done = 0;
      while (done < NREQ) {
        int outcount = 0, indices[NREQ];
        MPI_Status s[NREQ];
        MPI_Waitsome(NREQ, r, &outcount, indices, s);
        expect(outcount != MPI_UNDEFINED && outcount > 0, "MPI_Waitsome outcount", round, outcount);
        if (outcount == MPI_UNDEFINED || outcount <= 0) break;
        for (int j = 0; j < outcount; ++j) {
          ++completions[indices[j]];
          st[indices[j]] = s[j];
        }
        done += outcount;
      }
    } else {
      for (int k = 0; k < NREQ; ++k) {
        if (k % 2 == 0) {
          MPI_Wait(&r[k], &st[k]);
        } else {
          int flag = 0;
          while (!flag) MPI_Test(&r[k], &flag, &st[k]);
        }
        completions[k] = 1;
      }
    }

    /* the requests: persistent ones back, inactive; nonblocking ones gone */
    for (int k = 0; k < NREQ; ++k) expect(completions[k] == 1, "number of completions", round, k);
    for (int k = 0; k < NPERSISTENT; ++k) {
      expect(r[k] == handle[k], "persistent handle after completion", round, k);
      int flag = 0;
      MPI_Request_get_status(r[k], &flag, MPI_STATUS_IGNORE);
      expect(flag == 1, "MPI_Request_get_status after completion", round, k);
    }
    for (int k = NPERSISTENT; k < NREQ; ++k) {
      expect(r[k] == MPI_REQUEST_NULL, "nonblocking request after completion", round, k);
    }
    expect(st[RECV].MPI_SOURCE == left && st[RECV].MPI_TAG == 5, "persistent receive's status",
           round, st[RECV].MPI_SOURCE);
    expect(st[NB_RECV].MPI_SOURCE == right && st[NB_RECV].MPI_TAG == 9,
           "nonblocking receive's status", round, st[NB_RECV].MPI_SOURCE);
    if (optcoll) {
      for (int j = 0; j < NOURS; ++j) {
        const int k = ours[j];
        int count = -1;
        MPI_Get_count(&st[k], MPI_BYTE, &count);
        expect(st[k].MPI_SOURCE == MPI_ANY_SOURCE && st[k].MPI_TAG == MPI_ANY_TAG && count == 0,
               "empty status of a persistent collective", round, k);
      }
    }

    /* the results */
    for (int i = 0; i < N; ++i) {
      const long long want =
          (long long)(i + 1) * size * (size + 1) / 2 + 7LL * round * size; /* sum over ranks */
      expect(ar_out[i] == want, "allreduce", round, i);
    }
    for (int i = 0; i < M; ++i) expect(bc[i] == 1000 * round + i, "bcast", round, i);
    if (rank == 0) {
      int next = 0; /* the next index not inside a block */
      for (int q = size - 1; q >= 0; --q) {
        for (; next < gv_displs[q]; ++next) expect(gv_all[next] == -7, "gatherv gap", round, next);
        for (int k = 0; k < gv_counts[q]; ++k, ++next) {
          expect(gv_all[next] == 100000 * q + k + 7 * round, "gatherv", round, next);
        }
      }
      for (; next < gv_total; ++next) expect(gv_all[next] == -7, "gatherv gap", round, next);
    }
    for (int k = 0; k < sv_counts[rank]; ++k) {
      expect(sv_mine[k] == 50 * (sv_displs[rank] + k) + round, "scatterv", round, k);
    }
    for (int k = 0; k < B; ++k) {
      /* sum over q of (q + rank * B + k + round) */
      const int want = size * (size - 1) / 2 + size * (rank * B + k + round);
      expect(rs_out[k] == want, "reduce_scatter_block", round, k);
    }
#if OPEN_MPI_LIBRARY
    if (rank == 0) {
      for (int q = 0; q < size; ++q) {
        expect(th_all[2 * q] == 3 * q + round && th_all[2 * q + 1] == 3 * q + round + 1,
               "gather of a strided type", round, q);
      }
    }
#else
    expect(th_in[0] == 3 * rank + round + 1, "message to self", round, th_in[0]);
#endif
    expect(token_in == 10 * left + round, "persistent point-to-point", round, token_in);
    expect(nb_in == 20 * right + round, "nonblocking point-to-point", round, nb_in);
    expect(nb_sum == (long long)size * (size - 1) / 2 + (long long)size * round,
           "nonblocking allreduce", round, nb_sum);
  }

  for (int k = 0; k < NPERSISTENT; ++k) {
    expect(MPI_Request_free(&r[k]) == MPI_SUCCESS, "MPI_Request_free", -1, k);
    expect(r[k] == MPI_REQUEST_NULL, "request after MPI_Request_free", -1, k);
  }
  /* a new request after the frees (the MPI library may reuse the handles) */
  long long one = rank, total = 0;
  MPI_Request again = MPI_REQUEST_NULL;
  INIT(Allreduce)(&one, &total, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &again);
  for (int round = 0; round < 2; ++round) {
    total = -1;
    MPI_Start(&again);
    MPI_Wait(&again, MPI_STATUS_IGNORE);
    expect(total == size - 1, "allreduce after the frees", round, total);
  }
  MPI_Request_free(&again);
  if (optcoll) check_misuse(size);

  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && all_ok) printf("persistent_app: all results correct\n");
  free(ar_in);
  free(ar_out);
  free(bc);
  free(gv_counts);
  free(gv_displs);
  free(gv_block);
  free(gv_all);
  free(sv_counts);
  free(sv_displs);
  free(sv_all);
  free(sv_mine);
  free(rs_in);
  free(th_all);
#if OPEN_MPI_LIBRARY
  MPI_Type_free(&strided);
#endif
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
