// SPDX-License-Identifier: Apache-2.0
// File: MPI's nonblocking collectives in the PMPI library, and the request calls that
// complete them and the persistent collectives (persistent.h). A nonblocking collective that
// route() sends through optcoll runs as an OPTCOLL_Request; the program gets an MPI
// generalized request (MPI_Grequest_start) that stands for it. A persistent one (made by
// persistent.cc's init calls) stands behind an MPI persistent request that the MPI library
// always sees inactive, since a generalized request cannot be started again. The request
// calls (MPI_Wait, _Test, _Waitall, _Testall, _Waitany, _Testany, _Waitsome, _Testsome,
// _Request_free, _Request_get_status) first advance and complete the optcoll requests among
// theirs (MPI_Grequest_complete for the nonblocking ones; the persistent ones become inactive
// and get an empty status), then hand the array to the MPI library for the others; where
// the MPI library skips inactive requests (MPI_Waitany, _Testany, _Waitsome, _Testsome) the
// completed persistent ones are reported beside what it returns, and MPI_Testall leaves
// everything as it is while a persistent collective still runs. While no optcoll request is
// alive (or optcoll's own transport calls them) they go straight to the MPI library.
//
// Routed like the blocking calls (same spec, same model, same margin): MPI_Ibcast, _Ireduce,
// _Iallreduce, _Igather, _Iscatter, _Iallgather, _Iallgatherv, _Ialltoall,
// _Ireduce_scatter_block, _Ireduce_scatter, _Iscan, _Iexscan, _Ibarrier, and _Ialltoallv
// (like MPI_Alltoallv: through optcoll only under `always`, where OPTCOLL_Ialltoallv runs
// alltoallv/linear or pairwise from each rank's own counts). MPI_Igatherv and _Iscatterv go
// to the MPI library: deciding needs counts that MPI gives at one rank only, and exchanging
// them would make the call wait for the other ranks (their persistent forms exchange them at
// init, which MPI lets wait: persistent.cc). Freeing an
// active nonblocking request (MPI_Request_free) waits for its collective first; freeing an
// active persistent one is refused (MPI_ERR_REQUEST).
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "optcoll.h"
#include "pmpi/calls.h"
#include "pmpi/persistent.h"
#include "pmpi/route.h"

using optcoll::CollectiveKind;
using optcoll::pmpi::any_persistent;
using optcoll::pmpi::empty_status;
using optcoll::pmpi::find_persistent;
using optcoll::pmpi::free_persistent;
using optcoll::pmpi::InOptcoll;
using optcoll::pmpi::movement;
using optcoll::pmpi::Persistent;
using optcoll::pmpi::progress;
using optcoll::pmpi::reduction;
using optcoll::pmpi::retire;

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
    const InOptcoll inside;
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

// Advances (`wait`: completes) every optcoll collective of `requests`, nonblocking and
// persistent.
void advance_all(int count, const MPI_Request requests[], bool wait) {
  for (int i = 0; i < count; ++i) {
    if (Persistent* p = find_persistent(requests[i])) {
      progress(*p, wait);
    } else {
      advance(requests[i], wait);
    }
  }
}

// Whether a persistent collective of `requests` is active and still running.
bool persistent_running(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) {
    const Persistent* p = find_persistent(requests[i]);
    if (p != nullptr && p->active && !p->done) return true;
  }
  return false;
}

int first_error(int a, int b) { return a != MPI_SUCCESS ? a : b; }

// Reports every done persistent collective of `requests` complete (inactive); the first
// error among them.
int retire_done(int count, const MPI_Request requests[]) {
  int error = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    Persistent* p = find_persistent(requests[i]);
    if (p != nullptr && p->active && p->done) error = first_error(error, retire(*p));
  }
  return error;
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

// Whether no optcoll request of the program's is alive (or this call is optcoll's own, from
// inside one of its collectives): the request calls then go straight to the MPI library.
bool none_alive() { return InOptcoll::now() || (pending().empty() && !any_persistent()); }

bool any_ours(int count, const MPI_Request requests[]) {
  if (none_alive() || requests == nullptr) return false;
  return std::any_of(requests, requests + count, [](MPI_Request r) {
    return pending().count(r) > 0 || find_persistent(r) != nullptr;
  });
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

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return optcoll::pmpi::dispatch(
      "MPI_Ialltoallv", optcoll::pmpi::alltoallv_route(comm, sendbuf, sendtype, recvtype),
      [&] {
        return start_behind(request, [&](OPTCOLL_Request* r) {
          return OPTCOLL_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm, r);
        });
      },
      [&] {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, request);
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
  if (none_alive() || request == nullptr) return PMPI_Wait(request, status);
  const MPI_Request handle = *request;
  if (Persistent* p = find_persistent(handle)) {
    progress(*p, /*wait=*/true);
    const int error = retire(*p);
    return combined(PMPI_Wait(request, status), error);  // inactive to MPI: an empty status
  }
  if (!advance(handle, /*wait=*/true)) return PMPI_Wait(request, status);
  const int code = PMPI_Wait(request, status);
  return combined(code, take_error(handle));
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (none_alive() || request == nullptr) return PMPI_Test(request, flag, status);
  const MPI_Request handle = *request;
  if (Persistent* p = find_persistent(handle)) {
    progress(*p, /*wait=*/false);
    if (p->active && !p->done) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    const int error = retire(*p);
    return combined(PMPI_Test(request, flag, status), error);
  }
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
  advance_all(count, requests, /*wait=*/true);
  const int persistent_error = retire_done(count, requests);
  const int code = PMPI_Waitall(count, requests, statuses);
  return combined(code, first_error(take_errors(count, before, requests), persistent_error));
}

// All complete or none: while a persistent collective is still running, the others are left
// as they are (a done one stays active until a call reports it).
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!any_ours(count, requests)) return PMPI_Testall(count, requests, flag, statuses);
  advance_all(count, requests, /*wait=*/false);
  if (persistent_running(count, requests)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  const std::vector<MPI_Request> before(requests, requests + count);
  const int code = PMPI_Testall(count, requests, flag, statuses);
  const int persistent_error = *flag != 0 ? retire_done(count, requests) : MPI_SUCCESS;
  return combined(code, first_error(take_errors(count, before, requests), persistent_error));
}

// The MPI library skips the persistent ones (inactive to it): one of them is reported when
// the library finds nothing else complete.
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!any_ours(count, requests)) return PMPI_Testany(count, requests, index, flag, status);
  const std::vector<MPI_Request> before(requests, requests + count);
  advance_all(count, requests, /*wait=*/false);
  const int code = PMPI_Testany(count, requests, index, flag, status);
  if (code != MPI_SUCCESS || (*flag != 0 && *index != MPI_UNDEFINED)) {
    return combined(code, take_errors(count, before, requests));
  }
  bool running = false;
  for (int i = 0; i < count; ++i) {
    Persistent* p = find_persistent(requests[i]);
    if (p == nullptr || !p->active) continue;
    if (!p->done) {
      running = true;
      continue;
    }
    *index = i;
    *flag = 1;
    empty_status(requests[i], status);
    return retire(*p);
  }
  if (running) {  // not "all inactive" (flag 1, MPI_UNDEFINED): one is still to come
    *flag = 0;
    *index = MPI_UNDEFINED;
  }
  return code;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!any_ours(count, requests)) return PMPI_Waitany(count, requests, index, status);
  int flag = 0;
  int code = MPI_SUCCESS;
  while (flag == 0 && code == MPI_SUCCESS)
    code = MPI_Testany(count, requests, index, &flag, status);
  return code;
}

// The persistent ones done are appended to what the MPI library reports.
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!any_ours(incount, requests)) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  const std::vector<MPI_Request> before(requests, requests + incount);
  advance_all(incount, requests, /*wait=*/false);
  const int code = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS) {
    return combined(code, take_errors(incount, before, requests));
  }
  bool any_active = *outcount != MPI_UNDEFINED;
  int n = any_active ? *outcount : 0;
  int persistent_error = MPI_SUCCESS;
  for (int i = 0; i < incount; ++i) {
    Persistent* p = find_persistent(requests[i]);
    if (p == nullptr || !p->active) continue;
    any_active = true;
    if (!p->done) continue;
    indices[n] = i;
    empty_status(requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n]);
    persistent_error = first_error(persistent_error, retire(*p));
    ++n;
  }
  *outcount = any_active ? n : MPI_UNDEFINED;
  return combined(code, first_error(take_errors(incount, before, requests), persistent_error));
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
  if (none_alive() || request == nullptr) return PMPI_Request_free(request);
  const MPI_Request handle = *request;
  if (Persistent* p = find_persistent(handle)) return free_persistent(request, *p);
  if (!advance(handle, /*wait=*/true)) return PMPI_Request_free(request);
  take_error(handle);  // nobody is left to tell
  return PMPI_Request_free(request);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (none_alive()) return PMPI_Request_get_status(request, flag, status);
  if (Persistent* p = find_persistent(request)) {
    progress(*p, /*wait=*/false);
    if (p->active && !p->done) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    return PMPI_Request_get_status(request, flag, status);  // complete: an empty status
  }
  advance(request, /*wait=*/false);
  return PMPI_Request_get_status(request, flag, status);
}

}  // extern "C"
