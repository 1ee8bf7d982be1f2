// SPDX-License-Identifier: Apache-2.0
// File: the C API's requests (requests.h): making them (OPTCOLL_I*, *_init), starting,
// testing, waiting for and freeing them, and what happens to them when their communicator
// goes away.
#include <exception>
#include <map>
#include <memory>
#include <set>

#include "optcoll.h"
#include "optcoll/capi/call.h"
#include "optcoll/capi/requests.h"

using namespace optcoll;        // NOLINT(google-build-using-namespace)
using namespace optcoll::capi;  // NOLINT(google-build-using-namespace)

// One nonblocking or persistent C call.
struct OPTCOLL_Request_s {
  MPI_Comm comm = MPI_COMM_NULL;   // the application's, for error handlers
  CommContext* context = nullptr;  // null once the communicator went away
  std::shared_ptr<Communicator> communicator;
  Deferred deferred;
  bool active = false;
};

namespace {

// Every request alive, by context (orphan_requests).
std::multimap<CommContext*, OPTCOLL_Request_s*>& live_requests() {
  static auto* live = new std::multimap<CommContext*, OPTCOLL_Request_s*>;
  return *live;
}

void forget(OPTCOLL_Request_s* r) {
  auto& live = live_requests();
  const auto [first, last] = live.equal_range(r->context);
  for (auto it = first; it != last; ++it) {
    if (it->second == r) {
      live.erase(it);
      return;
    }
  }
}

void destroy(OPTCOLL_Request* request) {
  forget(*request);
  delete *request;  // NOLINT(cppcoreguidelines-owning-memory): the C handle owns it
  *request = OPTCOLL_REQUEST_NULL;
}

// Waits for (or, when `test_only`, tests) every optcoll request of `r`; true when all have
// completed, after the steps that follow completion (unpacking).
bool complete(OPTCOLL_Request_s& r, bool test_only) {
  for (Request& request : r.deferred.requests) {
    if (test_only) {
      if (!request.test()) return false;
    } else {
      request.wait();
    }
  }
  for (const auto& step : r.deferred.after_completion) step();
  r.active = false;
  return true;
}

// Where a request's errors go: its communicator's error handler, or MPI_COMM_WORLD's once
// the communicator was freed.
MPI_Comm error_comm(const OPTCOLL_Request_s& r) {
  return r.context != nullptr ? r.comm : MPI_COMM_WORLD;
}

// A request's failure, reported as the blocking call's would be (the other ranks are told);
// a nonblocking request is freed.
int fail(OPTCOLL_Request* request) {
  OPTCOLL_Request_s& r = **request;
  r.active = false;
  const MPI_Comm comm = error_comm(r);
  CommContext* context = r.context;
  if (r.deferred.mode == CallMode::kNonblocking) destroy(request);
  return report_exception(comm, context);
}

// Misuse of a request, found before anything is sent: this rank's error alone.
int misuse(const OPTCOLL_Request_s& r, const char* message) {
  return report_error(error_comm(r), MPI_ERR_REQUEST, message);
}

constexpr const char* kFreedCommunicator =
    "the communicator of this request was freed (or MPI finalized)";

int null_request(const char* what) {
  return report_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                      fmt::format("{}: the request pointer is NULL", what));
}

}  // namespace

namespace optcoll::capi {

int make_request(MPI_Comm comm, CallMode mode, OPTCOLL_Request* request,
                 const std::function<void(Call&)>& body) noexcept {
  if (request == nullptr) return null_request("a nonblocking or persistent collective");
  *request = OPTCOLL_REQUEST_NULL;
  Call call;
  std::unique_ptr<OPTCOLL_Request_s> made;
  try {
    open_call(comm, call);
    made = std::make_unique<OPTCOLL_Request_s>();
    made->comm = comm;
    made->context = call.context;
    made->communicator = call.context->shared_communicator();
    made->deferred.mode = mode;
    call.comm = made->communicator.get();
    call.deferred = &made->deferred;
    body(call);
    made->active = mode == CallMode::kNonblocking;
    live_requests().emplace(made->context, made.get());
    *request = made.release();
    return MPI_SUCCESS;
  } catch (...) {
    // What was started already uses this request's buffers: it completes (or fails) first.
    if (made != nullptr) {
      for (Request& started : made->deferred.requests) {
        try {
          started.wait();
        } catch (...) {  // NOLINT(bugprone-empty-catch): the first error is the one to report
        }
      }
    }
    return report_exception(comm, call.context);
  }
}

void orphan_requests(CommContext* context) {
  auto& live = live_requests();
  const auto [first, last] = live.equal_range(context);
  for (auto it = first; it != last; ++it) {
    OPTCOLL_Request_s& r = *it->second;
    r.deferred.requests.clear();  // what is in flight completes in the communicator
    r.communicator.reset();
    r.context = nullptr;
    r.active = false;
  }
  live.erase(first, last);
}

}  // namespace optcoll::capi

extern "C" {

int OPTCOLL_Start(OPTCOLL_Request* request) {
  if (request == nullptr) return null_request("OPTCOLL_Start");
  if (*request == OPTCOLL_REQUEST_NULL) {
    return report_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "OPTCOLL_Start of OPTCOLL_REQUEST_NULL");
  }
  OPTCOLL_Request_s& r = **request;
  if (r.context == nullptr) return misuse(r, kFreedCommunicator);
  if (r.deferred.mode != CallMode::kPersistent) {
    return misuse(r,
                  "OPTCOLL_Start of a nonblocking request: only persistent requests (made by an "
                  "OPTCOLL_<Name>_init call) can be started");
  }
  if (r.active) {
    return misuse(r,
                  "OPTCOLL_Start of a persistent request that is already active (started twice "
                  "without OPTCOLL_Wait or a completing OPTCOLL_Test)");
  }
  try {
    r.context->begin_call();
    for (const auto& step : r.deferred.before_start) step();
    r.active = true;
    for (Request& each : r.deferred.requests) each.start();
    return MPI_SUCCESS;
  } catch (...) {
    r.active = false;
    return report_exception(r.comm, r.context);
  }
}

int OPTCOLL_Wait(OPTCOLL_Request* request) {
  if (request == nullptr) return null_request("OPTCOLL_Wait");
  if (*request == OPTCOLL_REQUEST_NULL || !(*request)->active) return MPI_SUCCESS;
  if ((*request)->context == nullptr) return misuse(**request, kFreedCommunicator);
  try {
    complete(**request, /*test_only=*/false);
    if ((*request)->deferred.mode == CallMode::kNonblocking) destroy(request);
    return MPI_SUCCESS;
  } catch (...) {
    return fail(request);
  }
}

int OPTCOLL_Test(OPTCOLL_Request* request, int* flag) {
  if (request == nullptr || flag == nullptr) return null_request("OPTCOLL_Test");
  *flag = 1;
  if (*request == OPTCOLL_REQUEST_NULL || !(*request)->active) return MPI_SUCCESS;
  if ((*request)->context == nullptr) return misuse(**request, kFreedCommunicator);
  try {
    if (!complete(**request, /*test_only=*/true)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    if ((*request)->deferred.mode == CallMode::kNonblocking) destroy(request);
    return MPI_SUCCESS;
  } catch (...) {
    return fail(request);
  }
}

int OPTCOLL_Waitall(int count, OPTCOLL_Request requests[]) {
  if (count < 0) {
    return report_error(MPI_COMM_WORLD, MPI_ERR_COUNT,
                        fmt::format("OPTCOLL_Waitall of {} requests", count));
  }
  if (count > 0 && requests == nullptr) return null_request("OPTCOLL_Waitall");
  int first_error = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const int code = OPTCOLL_Wait(&requests[i]);
    if (first_error == MPI_SUCCESS) first_error = code;
  }
  return first_error;
}

int OPTCOLL_Request_free(OPTCOLL_Request* request) {
  if (request == nullptr) return null_request("OPTCOLL_Request_free");
  if (*request == OPTCOLL_REQUEST_NULL) return MPI_SUCCESS;
  if ((*request)->active) {
    return misuse(**request,
                  "OPTCOLL_Request_free of an active request: complete it with OPTCOLL_Wait or "
                  "OPTCOLL_Test first");
  }
  destroy(request);
  return MPI_SUCCESS;
}

}  // extern "C"
