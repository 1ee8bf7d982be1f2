/* SPDX-License-Identifier: Apache-2.0 */
/* File: optcoll's C API: MPI's collective signatures, served by optcoll's planned, verified
 * schedules over MPI point-to-point (docs/c_api.md). An MPI code switches a call by
 * renaming it:
 *
 *   MPI_Gatherv(sb, n, MPI_INT, rb, counts, displs, MPI_INT, 0, comm);      // linear in MPI
 *   OPTCOLL_Gatherv(sb, n, MPI_INT, rb, counts, displs, MPI_INT, 0, comm);  // best tree
 *
 * Semantics are MPI's: the same arguments, MPI_IN_PLACE where MPI allows it, the same
 * results (bit for bit on integer data). Where MPI gives counts only at the root
 * (OPTCOLL_Gatherv, OPTCOLL_Scatterv) or one row and column per rank (OPTCOLL_Alltoallv), the
 * counts are first exchanged with one small planned collective; OPTCOLL_Gatherv_known and
 * OPTCOLL_Scatterv_known skip that exchange when every rank passes all counts. Where the
 * model says linear cannot lose to any tree after the exchange (few ranks: docs/design.md
 * 34), OPTCOLL_Gatherv/Scatterv run linear without it, and so does every call whose
 * algorithm OPTCOLL_Set_algorithm forces to one that needs only each rank's own counts
 * (gatherv, scatterv: linear, lpt_star; alltoallv: linear, pairwise); a count that only one
 * side can see is wrong then fails the one message at its receiver (MPI_ERR_OTHER, naming
 * both sizes), as in MPI, instead of MPI_ERR_COUNT (docs/errors.md).
 *
 * Datatypes: any contiguous MPI datatype (lower bound 0, extent equal to its size);
 * reductions use optcoll's vector kernels for MPI_INT/INT32_T, MPI_LONG/LONG_LONG/INT64_T,
 * MPI_FLOAT and MPI_DOUBLE with MPI_SUM/PROD/MIN/MAX, and MPI_Reduce_local for every other
 * built-in or user MPI_Op, honouring MPI_Op_commutative (non-commutative operators combine
 * in rank order, left operand the lower ranks, as MPI requires).
 *
 * Errors: a call returns MPI_SUCCESS or an MPI error code whose class is MPI_ERR_ARG
 * (invalid arguments), MPI_ERR_COUNT, MPI_ERR_ROOT, MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_COMM,
 * MPI_ERR_OTHER (a rank failed or stalled: every rank fails within the timeout, naming the
 * rank, operation and peer) or MPI_ERR_INTERN, after invoking the communicator's error
 * handler like MPI does (MPI_ERRORS_ARE_FATAL by default). MPI_Error_string on the code,
 * or OPTCOLL_Last_error(), gives optcoll's message.
 *
 * The first call on a communicator duplicates it (collectively) for optcoll's traffic;
 * the duplicate is released when the communicator is freed, and at MPI_Finalize.
 * Plans are made once per distinct call and reused. Not thread-safe:
 * call from one thread per process (MPI_THREAD_FUNNELED or SERIALIZED use). */
#ifndef OPTCOLL_H_
#define OPTCOLL_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int OPTCOLL_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int OPTCOLL_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   int root, MPI_Comm comm);
int OPTCOLL_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm);
int OPTCOLL_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int OPTCOLL_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm);
int OPTCOLL_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int OPTCOLL_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm);
int OPTCOLL_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int OPTCOLL_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       MPI_Comm comm);
int OPTCOLL_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int OPTCOLL_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int OPTCOLL_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int OPTCOLL_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int OPTCOLL_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm);
/* Rank 0's recvbuf is left untouched (MPI leaves it undefined). */
int OPTCOLL_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);
int OPTCOLL_Barrier(MPI_Comm comm);

/* The fast paths: recvcounts (sendcounts) significant on every rank, all equal, so no
 * count exchange precedes the planned gatherv (scatterv). */
int OPTCOLL_Gatherv_known(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          int root, MPI_Comm comm);
int OPTCOLL_Scatterv_known(const void* sendbuf, const int sendcounts[], const int displs[],
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm);

/* Nonblocking and persistent collectives (docs/c_api.md). OPTCOLL_I<name> starts the
 * collective and returns at once; OPTCOLL_<Name>_init plans it, exchanges the counts MPI
 * gives at one rank only, checks it, and returns an inactive request that OPTCOLL_Start runs
 * any number of times (every rank makes the init call, in the same order as its other
 * collectives: it is a collective call that may wait for the others). Every rank starts its
 * collectives, blocking or not, in the same order. They progress inside optcoll's calls
 * (OPTCOLL_Test, OPTCOLL_Wait and every OPTCOLL_* collective on the communicator): call
 * OPTCOLL_Test while computing to move them on. Requests are optcoll's own, not MPI_Request
 * (MPI's generalized requests cannot be progressed by MPI_Wait). OPTCOLL_Wait/Test complete
 * a request: a nonblocking one is then freed (set to OPTCOLL_REQUEST_NULL), a persistent one
 * becomes inactive until the next OPTCOLL_Start; OPTCOLL_Request_free frees an inactive
 * request. Refused with an error: starting an active request, freeing an active request, a
 * nonblocking alltoallv forced to an algorithm that needs every rank's counts (use
 * OPTCOLL_Alltoallv_init). A nonblocking MPI-semantics gatherv, scatterv or alltoallv runs
 * linear (or the forced lpt_star, resp. pairwise) without a count exchange (an exchange
 * would make it wait for the other ranks). */
typedef struct OPTCOLL_Request_s* OPTCOLL_Request;
#ifdef __cplusplus
#define OPTCOLL_REQUEST_NULL (static_cast<OPTCOLL_Request>(nullptr))
#else
#define OPTCOLL_REQUEST_NULL ((OPTCOLL_Request)0)
#endif

int OPTCOLL_Start(OPTCOLL_Request* request);
int OPTCOLL_Wait(OPTCOLL_Request* request);
int OPTCOLL_Test(OPTCOLL_Request* request, int* flag);
int OPTCOLL_Waitall(int count, OPTCOLL_Request requests[]);
int OPTCOLL_Request_free(OPTCOLL_Request* request);

int OPTCOLL_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   OPTCOLL_Request* request);
int OPTCOLL_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                       OPTCOLL_Request* request);
int OPTCOLL_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    OPTCOLL_Request* request);
int OPTCOLL_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        OPTCOLL_Request* request);
int OPTCOLL_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     OPTCOLL_Request* request);
int OPTCOLL_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         OPTCOLL_Request* request);
int OPTCOLL_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Igatherv_known(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Gatherv_known_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               OPTCOLL_Request* request);
int OPTCOLL_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Iscatterv_known(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm,
                            OPTCOLL_Request* request);
int OPTCOLL_Scatterv_known_init(const void* sendbuf, const int sendcounts[], const int displs[],
                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                OPTCOLL_Request* request);
int OPTCOLL_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  OPTCOLL_Request* request);
int OPTCOLL_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      OPTCOLL_Request* request);
int OPTCOLL_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                            OPTCOLL_Request* request);
int OPTCOLL_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                OPTCOLL_Request* request);
int OPTCOLL_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       OPTCOLL_Request* request);
int OPTCOLL_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           OPTCOLL_Request* request);
int OPTCOLL_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      OPTCOLL_Request* request);
int OPTCOLL_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          OPTCOLL_Request* request);
int OPTCOLL_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       OPTCOLL_Request* request);
int OPTCOLL_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           OPTCOLL_Request* request);
int OPTCOLL_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Ibarrier(MPI_Comm comm, OPTCOLL_Request* request);
int OPTCOLL_Barrier_init(MPI_Comm comm, OPTCOLL_Request* request);

/* Settings; call them on every rank alike, before the collectives they should affect
 * (communicators keep their transport; their plans are made afresh). They are local, on no
 * communicator: they return MPI_SUCCESS or their error code (MPI_ERR_ARG, the message in
 * OPTCOLL_Last_error) without calling an error handler, so check it.
 * OPTCOLL_Set_model: the cost model (a model.json as written by `optcoll calibrate`) that
 * `auto` selection minimizes; NULL restores the default (also read from $OPTCOLL_MODEL).
 * OPTCOLL_Set_algorithm: use `algorithm` (a registry name such as "ring", or "auto") for
 * `collective` ("allreduce", ...). OPTCOLL_Set_timeout: milliseconds a rank waits for a
 * peer before failing (default 30000; also $OPTCOLL_TIMEOUT_MS). The OPTCOLL_* environment
 * variables are read once, at the first call; while one is bad (and OPTCOLL_STRICT is not
 * 0) every call fails with MPI_ERR_ARG naming it (docs/c_api.md, "Settings"). */
int OPTCOLL_Set_model(const char* model_json_path);
int OPTCOLL_Set_algorithm(const char* collective, const char* algorithm);
int OPTCOLL_Set_timeout(int milliseconds);

/* The message of the last error this process returned ("" if none). */
const char* OPTCOLL_Last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* OPTCOLL_H_ */
