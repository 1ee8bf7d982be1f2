// SPDX-License-Identifier: Apache-2.0
// File: MPI's nonblocking collectives in the PMPI library, and the request calls that
// complete them. A nonblocking collective that route() sends through optcoll runs as an
// OPTCOLL_Request; the program gets an MPI generalized request (MPI_Grequest_start) that
// stands for it. The request calls (MPI_Wait, _Test, _Waitall, _Testall, _Waitany,
// _Testany, _Waitsome, _Testsome, _Request_free, _Request_get_status) first advance and
// complete the optcoll requests among theirs (MPI_Grequest_complete), then hand the array
// to the MPI library, which then completes the generalized requests as it does any other.
// While no optcoll request is in flight they go straight to the MPI library.
//
// Routed like the blocking calls (same spec, same model, same margin): MPI_Ibcast, _Ireduce,
// _Iallreduce, _Igather, _Iscatter, _Iallgather, _Iallgatherv, _Ialltoall,
// _Ireduce_scatter_block, _Ireduce_scatter, _Iscan, _Iexscan, _Ibarrier. MPI_Igatherv,
// _Iscatterv and _Ialltoallv go to the MPI library: deciding needs counts that MPI gives at
// one rank only, and exchanging them would make the call wait for the other ranks. Neither
// are the persistent MPI_*_init calls intercepted (MPI 4.0; Open MPI 4.1 has them as MPIX_).
// Freeing an active request (MPI_Request_free) waits for its collective first.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "optcoll.h"
#include "pmpi/calls.h"
#include "pmpi/route.h"

using optcoll::CollectiveKind;
using optcoll::pmpi::movement;
using optcoll::pmpi::reduction;

namespace {

// An optcoll collective standing behind a generalized request.
struct Pending {
  OPTCOLL_Request request = OPTCOLL_REQUEST_NULL;
  int error = MPI_SUCCESS;  // what completing it returned
};

// The generalized requests that stand for optcoll collectives, and their collectives.
std::unordered_map<MPI_Request, Pending>& pending() {
  static auto* map = new std::unordered_map<MPI_Request, Pending>;
  return *map;
}

int query(void*, MPI_Status* status) {
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int free_nothing(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }  // collectives are not cancelled

// Starts `start` (an OPTCOLL_I* call into its request) behind a new generalized request.
template <typename Start>
int start_behind(MPI_Request* request, Start&& start) {
  OPTCOLL_Request ours = OPTCOLL_REQUEST_NULL;
  const int code = start(&ours);
  if (code != MPI_SUCCESS) return code;
  PMPI_Grequest_start(query, free_nothing, cancel_nothing, nullptr, request);
  pending().emplace(*request, Pending{ours, MPI_SUCCESS});
  return MPI_SUCCESS;
}

// Advances (`wait`: completes) the optcoll collective behind `request`, if there is one;
// once it is complete, completes the generalized request. Returns whether `request` was one
// of ours and complete.
bool advance(MPI_Request request, bool wait) {
  const auto it = pending().find(request);
  if (it == pending().end()) return false;
  Pending& p = it->second;
  if (p.request != OPTCOLL_REQUEST_NULL) {
    int done = 0;
    if (wait) {
      p.error = OPTCOLL_Wait(&p.request);
      done = 1;
    } else {
      p.error = OPTCOLL_Test(&p.request, &done);
    }
    if (p.error != MPI_SUCCESS) {
      p.request = OPTCOLL_REQUEST_NULL;  // a failed nonblocking request was freed
      done = 1;
    }
    if (done == 0) return false;
    PMPI_Grequest_complete(request);
  }
  return true;
}

// The optcoll error of `request` (once complete), and forgets it; MPI_SUCCESS for others.
int take_error(MPI_Request request) {
  const auto it = pending().find(request);
  if (it == pending().end()) return MPI_SUCCESS;
  const int error = it->second.error;
  pending().erase(it);
  return error;
}

// Advances every optcoll request of `requests` (without waiting); true if one completed.
bool advance_all(int count, const MPI_Request requests[]) {
  bool any = false;
  for (int i = 0; i < count; ++i) any = advance(requests[i], false) || any;
  return any;
}

// The first optcoll error among `before` (the handles as given) whose entries in `after`
// the MPI library has completed (set to MPI_REQUEST_NULL).
int take_errors(int count, const std::vector<MPI_Request>& before, const MPI_Request after[]) {
  int first = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    if (after[i] != MPI_REQUEST_NULL || before[static_cast<std::size_t>(i)] == MPI_REQUEST_NULL)
      continue;
    const int error = take_error(before[static_cast<std::size_t>(i)]);
    if (first == MPI_SUCCESS) first = error;
  }
  return first;
}

bool any_ours(int count, const MPI_Request requests[]) {
  if (pending().empty() || requests == nullptr) return false;
  return std::any_of(requests, requests + count,
                     [](MPI_Request r) { return pending().count(r) > 0; });
}

// The result of a request call over an array: optcoll's error if one of its collectives
// failed, else the MPI library's.
int combined(int mpi_code, int optcoll_error) {
  return optcoll_error != MPI_SUCCESS ? optcoll_error : mpi_code;
}

}  // namespace

extern "C" {

// ---- the nonblocking collectives

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ibcast",
      movement(comm, optcoll::pmpi::movable_bytes(datatype), CollectiveKind::kBcast, count, root),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ibcast(buffer, count, datatype, root, comm, r);
        });
      },
      [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ireduce", reduction(comm, datatype, op, CollectiveKind::kReduce, count, root),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r);
        });
      },
      [&] { return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request); });
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Iallreduce", reduction(comm, datatype, op, CollectiveKind::kAllreduce, count, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
        });
      },
      [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request); });
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Iscan", reduction(comm, datatype, op, CollectiveKind::kScan, count, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iscan(sendbuf, recvbuf, count, datatype, op, comm, r);
        });
      },
      [&] { return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request); });
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Iexscan", reduction(comm, datatype, op, CollectiveKind::kExscan, count, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, r);
        });
      },
      [&] { return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request); });
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ireduce_scatter_block",
      reduction(comm, datatype, op, CollectiveKind::kReduceScatterBlock, recvcount, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
        });
      },
      [&] {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
      });
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  const bool at_root = optcoll::pmpi::comm_rank(comm) == root;
  const int count = at_root ? recvcount : sendcount;
  const std::size_t bytes = at_root ? optcoll::pmpi::both_movable(recvtype, sendtype)
                                    : optcoll::pmpi::movable_bytes(sendtype);
  return optcoll::pmpi::dispatch(
      "MPI_Igather", movement(comm, bytes, CollectiveKind::kGather, count, root),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm, r);
        });
      },
      [&] {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
      });
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  const bool at_root = optcoll::pmpi::comm_rank(comm) == root;
  const int count = at_root ? sendcount : recvcount;
  const std::size_t bytes = at_root ? optcoll::pmpi::both_movable(sendtype, recvtype)
                                    : optcoll::pmpi::movable_bytes(recvtype);
  return optcoll::pmpi::dispatch(
      "MPI_Iscatter", movement(comm, bytes, CollectiveKind::kScatter, count, root),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                  comm, r);
        });
      },
      [&] {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
      });
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const std::size_t bytes = sendbuf == MPI_IN_PLACE
                                ? optcoll::pmpi::movable_bytes(recvtype)
                                : optcoll::pmpi::both_movable(recvtype, sendtype);
  return optcoll::pmpi::dispatch(
      "MPI_Iallgather", movement(comm, bytes, CollectiveKind::kAllgather, recvcount, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, r);
        });
      },
      [&] {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
      });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const std::size_t bytes = sendbuf == MPI_IN_PLACE
                                ? optcoll::pmpi::movable_bytes(recvtype)
                                : optcoll::pmpi::both_movable(recvtype, sendtype);
  return optcoll::pmpi::dispatch(
      "MPI_Ialltoall", movement(comm, bytes, CollectiveKind::kAlltoall, recvcount, 0),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   r);
        });
      },
      [&] {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
      });
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Iallgatherv",
      optcoll::pmpi::allgatherv_route(comm, sendbuf, sendtype, recvcounts, displs, recvtype),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, comm, r);
        });
      },
      [&] {
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm, request);
      });
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ireduce_scatter", optcoll::pmpi::reduce_scatter_route(comm, recvcounts, datatype, op),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
        });
      },
      [&] {
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
      });
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ibarrier", optcoll::pmpi::barrier_route(comm),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) { return OPTCOLL_Ibarrier(comm, r); });
      },
      [&] { return PMPI_Ibarrier(comm, request); });
}

// ---- the request calls

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (pending().empty() || request == nullptr) return PMPI_Wait(request, status);
  const MPI_Request handle = *request;
  if (!advance(handle, /*wait=*/true)) return PMPI_Wait(request, status);
  const int code = PMPI_Wait(request, status);
  return combined(code, take_error(handle));
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (pending().empty() || request == nullptr) return PMPI_Test(request, flag, status);
  const MPI_Request handle = *request;
  if (pending().count(handle) == 0) return PMPI_Test(request, flag, status);
  if (!advance(handle, /*wait=*/false)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  const int code = PMPI_Test(request, flag, status);
  return combined(code, take_error(handle));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!any_ours(count, requests)) return PMPI_Waitall(count, requests, statuses);
  const std::vector<MPI_Request> before(requests, requests + count);
  for (int i = 0; i < count; ++i) advance(requests[i], /*wait=*/true);
  const int code = PMPI_Waitall(count, requests, statuses);
  return combined(code, take_errors(count, before, requests));
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!any_ours(count, requests)) return PMPI_Testall(count, requests, flag, statuses);
  const std::vector<MPI_Request> before(requests, requests + count);
  advance_all(count, requests);
  const int code = PMPI_Testall(count, requests, flag, statuses);
  return combined(code, take_errors(count, before, requests));
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!any_ours(count, requests)) return PMPI_Testany(count, requests, index, flag, status);
  const std::vector<MPI_Request> before(requests, requests + count);
  advance_all(count, requests);
  const int code = PMPI_Testany(count, requests, index, flag, status);
  return combined(code, take_errors(count, before, requests));
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!any_ours(count, requests)) return PMPI_Waitany(count, requests, index, status);
  int flag = 0;
  int code = MPI_SUCCESS;
  while (flag == 0 && code == MPI_SUCCESS)
    code = MPI_Testany(count, requests, index, &flag, status);
  return code;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!any_ours(incount, requests)) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  const std::vector<MPI_Request> before(requests, requests + incount);
  advance_all(incount, requests);
  const int code = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  return combined(code, take_errors(incount, before, requests));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!any_ours(incount, requests)) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  int code = MPI_SUCCESS;
  *outcount = 0;
  while (*outcount == 0 && code == MPI_SUCCESS) {
    code = MPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  return code;
}

int MPI_Request_free(MPI_Request* request) {
  if (pending().empty() || request == nullptr) return PMPI_Request_free(request);
  const MPI_Request handle = *request;
  if (!advance(handle, /*wait=*/true)) return PMPI_Request_free(request);
  take_error(handle);  // nobody is left to tell
  return PMPI_Request_free(request);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!pending().empty()) advance(request, /*wait=*/false);
  return PMPI_Request_get_status(request, flag, status);
}

}  // extern "C"
