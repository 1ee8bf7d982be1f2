// SPDX-License-Identifier: Apache-2.0
// File: MPI's persistent collectives in the PMPI library (persistent.h): the init calls,
// MPI_Start, MPI_Startall and MPI_Cancel. The init calls are MPI 4.0's MPI_<Name>_init where
// the MPI library is MPI 4 (MPICH 4), else Open MPI's MPIX_<Name>_init from its pcollreq
// extension (Open MPI 4.1, mpi-ext.h); with neither, there is nothing to intercept. Each is
// routed like its blocking twin (calls.h: same spec, model and margin; gatherv and scatterv
// exchange their counts first, at init, once); one that route() sends to optcoll becomes an
// OPTCOLL_<Name>_init request behind an MPI persistent request (persistent.h), the others go
// to the MPI library's own PMPI_<Name>_init (PMPIX_) unchanged. The info argument is passed
// to the MPI library and not read by optcoll. An init call may wait for the other ranks (MPI
// 4.1, section 6.13: persistent collective initialization procedures are nonlocal, and
// follow the ordering rules of collectives), which is what lets gatherv and scatterv
// exchange their counts there, once, where their nonblocking forms cannot.
#include <string>
#include <unordered_map>
#include <vector>

#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "optcoll.h"
#include "optcoll/capi/mpi_context.h"
#include "pmpi/calls.h"
#include "pmpi/persistent.h"
#include "pmpi/route.h"

using optcoll::CollectiveKind;
using optcoll::pmpi::dispatch;
using optcoll::pmpi::InOptcoll;
using optcoll::pmpi::movement;
using optcoll::pmpi::Persistent;
using optcoll::pmpi::reduction;

namespace optcoll::pmpi {
namespace {

// The MPI requests that stand for optcoll persistent collectives, and their collectives.
std::unordered_map<MPI_Request, Persistent>& table() {
  static auto* map = new std::unordered_map<MPI_Request, Persistent>;
  return *map;
}

// Makes the optcoll request (`init`, an OPTCOLL_<Name>_init call into its argument) and the
// MPI request that stands for it.
template <typename Init>
int init_behind(const char* function, MPI_Comm comm, MPI_Request* request, Init&& init) {
  if (request == nullptr) {
    return capi::report_error(comm, MPI_ERR_REQUEST,
                              std::string(function) + ": the request pointer is NULL");
  }
  OPTCOLL_Request ours = OPTCOLL_REQUEST_NULL;
  const int code = init(&ours);
  if (code != MPI_SUCCESS) return code;
  MPI_Request handle = MPI_REQUEST_NULL;
  const int made = PMPI_Recv_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &handle);
  if (made != MPI_SUCCESS) {
    OPTCOLL_Request_free(&ours);
    return made;
  }
  Persistent p;
  p.request = ours;
  p.comm = comm;
  table().emplace(handle, p);
  *request = handle;
  return MPI_SUCCESS;
}

int start(Persistent& p) {
  if (p.active) {
    return capi::report_error(p.comm, MPI_ERR_REQUEST,
                              "MPI_Start of a persistent collective request that is already "
                              "active (started again before MPI_Wait or a completing MPI_Test)");
  }
  const InOptcoll inside;
  const int code = OPTCOLL_Start(&p.request);
  if (code != MPI_SUCCESS) return code;
  p.active = true;
  p.done = false;
  p.error = MPI_SUCCESS;
  return MPI_SUCCESS;
}

}  // namespace

bool any_persistent() { return !table().empty(); }

Persistent* find_persistent(MPI_Request handle) {
  auto& all = table();
  if (all.empty()) return nullptr;
  const auto it = all.find(handle);
  return it == all.end() ? nullptr : &it->second;
}

void progress(Persistent& p, bool wait) {
  if (!p.active || p.done) return;
  const InOptcoll inside;
  if (wait) {
    p.error = OPTCOLL_Wait(&p.request);
    p.done = true;
  } else {
    int flag = 0;
    p.error = OPTCOLL_Test(&p.request, &flag);
    p.done = flag != 0 || p.error != MPI_SUCCESS;
  }
}

int retire(Persistent& p) {
  const int error = p.error;
  p.active = false;
  p.done = false;
  p.error = MPI_SUCCESS;
  return error;
}

void empty_status(MPI_Request handle, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  MPI_Request inactive = handle;  // MPI_Wait leaves an inactive persistent request as it is
  PMPI_Wait(&inactive, status);
}

int free_persistent(MPI_Request* request, Persistent& p) {
  if (p.active) {
    return capi::report_error(p.comm, MPI_ERR_REQUEST,
                              "MPI_Request_free of an active persistent collective request: "
                              "complete it first (MPI_Wait, or MPI_Test until it completes)");
  }
  OPTCOLL_Request_free(&p.request);
  table().erase(*request);
  return PMPI_Request_free(request);
}

}  // namespace optcoll::pmpi

extern "C" {

// ---- starting, and cancelling (refused)

int MPI_Start(MPI_Request* request) {
  if (InOptcoll::now() || request == nullptr) return PMPI_Start(request);
  Persistent* p = optcoll::pmpi::find_persistent(*request);
  return p == nullptr ? PMPI_Start(request) : optcoll::pmpi::start(*p);
}

// Starts in array order (the program's collectives must start in the same order on every
// rank); runs of the MPI library's requests go to PMPI_Startall together.
int MPI_Startall(int count, MPI_Request requests[]) {
  if (InOptcoll::now() || !optcoll::pmpi::any_persistent() || requests == nullptr || count < 0) {
    return PMPI_Startall(count, requests);
  }
  int i = 0;
  while (i < count) {
    if (Persistent* p = optcoll::pmpi::find_persistent(requests[i])) {
      const int code = optcoll::pmpi::start(*p);
      if (code != MPI_SUCCESS) return code;
      ++i;
      continue;
    }
    int j = i + 1;
    while (j < count && optcoll::pmpi::find_persistent(requests[j]) == nullptr) ++j;
    const int code = PMPI_Startall(j - i, requests + i);
    if (code != MPI_SUCCESS) return code;
    i = j;
  }
  return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request* request) {
  if (InOptcoll::now() || request == nullptr) return PMPI_Cancel(request);
  const Persistent* p = optcoll::pmpi::find_persistent(*request);
  if (p == nullptr) return PMPI_Cancel(request);
  return optcoll::capi::report_error(
      p->comm, MPI_ERR_REQUEST,
      "MPI_Cancel of a persistent collective request: collectives cannot be cancelled");
}

}  // extern "C"

// ---- the init calls, under the MPI library's names for them

#if MPI_VERSION >= 4
#define OPTCOLL_PMPI_INIT(Name) MPI_##Name##_init
#define OPTCOLL_PMPI_OWN_INIT(Name) PMPI_##Name##_init
#define OPTCOLL_PMPI_INIT_NAME(Name) "MPI_" #Name "_init"
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define OPTCOLL_PMPI_INIT(Name) MPIX_##Name##_init
#define OPTCOLL_PMPI_OWN_INIT(Name) PMPIX_##Name##_init
#define OPTCOLL_PMPI_INIT_NAME(Name) "MPIX_" #Name "_init"
#endif

#ifdef OPTCOLL_PMPI_INIT

// dispatch() of an init call: `ours` is OPTCOLL_<Name>_init's call into its request.
#define OPTCOLL_PMPI_DISPATCH(Name, route, ours, theirs)                               \
  dispatch(                                                                            \
      OPTCOLL_PMPI_INIT_NAME(Name), route,                                             \
      [&] {                                                                            \
        return optcoll::pmpi::init_behind(OPTCOLL_PMPI_INIT_NAME(Name), comm, request, \
                                          [&](OPTCOLL_Request* r) { return ours; });   \
      },                                                                               \
      [&] { return theirs; })

extern "C" {

int OPTCOLL_PMPI_INIT(Bcast)(void* buffer, int count, MPI_Datatype datatype, int root,
                             MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Bcast,
      movement(comm, optcoll::pmpi::movable_bytes(datatype), CollectiveKind::kBcast, count, root),
      OPTCOLL_Bcast_init(buffer, count, datatype, root, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Bcast)(buffer, count, datatype, root, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Reduce)(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Reduce, reduction(comm, datatype, op, CollectiveKind::kReduce, count, root),
      OPTCOLL_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Reduce)(sendbuf, recvbuf, count, datatype, op, root, comm, info,
                                    request));
}

int OPTCOLL_PMPI_INIT(Allreduce)(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Allreduce, reduction(comm, datatype, op, CollectiveKind::kAllreduce, count, 0),
      OPTCOLL_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Reduce_scatter_block)(const void* sendbuf, void* recvbuf, int recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                            MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Reduce_scatter_block,
      reduction(comm, datatype, op, CollectiveKind::kReduceScatterBlock, recvcount, 0),
      OPTCOLL_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Reduce_scatter_block)(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                                  info, request));
}

int OPTCOLL_PMPI_INIT(Reduce_scatter)(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Reduce_scatter, optcoll::pmpi::reduce_scatter_route(comm, recvcounts, datatype, op),
      OPTCOLL_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Reduce_scatter)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                            request));
}

int OPTCOLL_PMPI_INIT(Scan)(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Scan, reduction(comm, datatype, op, CollectiveKind::kScan, count, 0),
      OPTCOLL_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Scan)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Exscan)(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Exscan, reduction(comm, datatype, op, CollectiveKind::kExscan, count, 0),
      OPTCOLL_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Exscan)(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Gather)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Gather,
      optcoll::pmpi::gather_route(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, root),
      OPTCOLL_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          r),
      OPTCOLL_PMPI_OWN_INIT(Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Scatter)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Scatter,
      optcoll::pmpi::scatter_route(comm, sendcount, sendtype, recvbuf, recvcount, recvtype, root),
      OPTCOLL_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                           r),
      OPTCOLL_PMPI_OWN_INIT(Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     root, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Allgather)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Allgather,
      optcoll::pmpi::regular_route(comm, CollectiveKind::kAllgather, sendbuf, sendtype, recvcount,
                                   recvtype),
      OPTCOLL_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm, info, request));
}

int OPTCOLL_PMPI_INIT(Alltoall)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Alltoall,
      optcoll::pmpi::regular_route(comm, CollectiveKind::kAlltoall, sendbuf, sendtype, recvcount,
                                   recvtype),
      OPTCOLL_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, info, request));
}

int OPTCOLL_PMPI_INIT(Allgatherv)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Allgatherv,
      optcoll::pmpi::allgatherv_route(comm, sendbuf, sendtype, recvcounts, displs, recvtype),
      OPTCOLL_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                              comm, r),
      OPTCOLL_PMPI_OWN_INIT(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm, info, request));
}

// The counts are exchanged here, at init (a PMPI_Allgather of p integers, as the blocking
// call does on every call), and optcoll's request is made with them: no exchange per start.
int OPTCOLL_PMPI_INIT(Gatherv)(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  std::vector<int> byte_counts;
  const optcoll::pmpi::Route route = optcoll::pmpi::gatherv_route(
      comm, sendbuf, sendcount, sendtype, recvcounts, recvtype, root, &byte_counts);
  return OPTCOLL_PMPI_DISPATCH(
      Gatherv, route,
      optcoll::pmpi::comm_rank(comm) == root
          ? OPTCOLL_Gatherv_known_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, root, comm, r)
          : OPTCOLL_Gatherv_known_init(sendbuf, sendcount, sendtype, nullptr, byte_counts.data(),
                                       nullptr, MPI_BYTE, root, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, root, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Scatterv)(const void* sendbuf, const int sendcounts[], const int displs[],
                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  std::vector<int> byte_counts;
  const optcoll::pmpi::Route route = optcoll::pmpi::scatterv_route(
      comm, sendcounts, sendtype, recvbuf, recvtype, root, &byte_counts);
  return OPTCOLL_PMPI_DISPATCH(
      Scatterv, route,
      optcoll::pmpi::comm_rank(comm) == root
          ? OPTCOLL_Scatterv_known_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm, r)
          : OPTCOLL_Scatterv_known_init(nullptr, byte_counts.data(), nullptr, MPI_BYTE, recvbuf,
                                        recvcount, recvtype, root, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                      recvtype, root, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Alltoallv)(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(
      Alltoallv, optcoll::pmpi::alltoallv_route(comm, sendbuf, sendtype, recvtype),
      OPTCOLL_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm, r),
      OPTCOLL_PMPI_OWN_INIT(Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, info, request));
}

int OPTCOLL_PMPI_INIT(Barrier)(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return OPTCOLL_PMPI_DISPATCH(Barrier, optcoll::pmpi::barrier_route(comm),
                               OPTCOLL_Barrier_init(comm, r),
                               OPTCOLL_PMPI_OWN_INIT(Barrier)(comm, info, request));
}

}  // extern "C"

#endif  // OPTCOLL_PMPI_INIT
