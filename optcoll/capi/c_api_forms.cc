// SPDX-License-Identifier: Apache-2.0
// File: the three C forms of every collective of the table (c_api_bodies.h): blocking
// (OPTCOLL_<Name>), nonblocking (OPTCOLL_I<lower>, started at once) and persistent
// (OPTCOLL_<Name>_init, started by OPTCOLL_Start), all three running the collective's body.
#include "optcoll.h"
#include "optcoll/capi/c_api_bodies.h"
#include "optcoll/capi/call.h"
#include "optcoll/capi/requests.h"

// (parameters..., OPTCOLL_Request* request)
#define OPTCOLL_C_WITH_REQUEST(...) (__VA_ARGS__, OPTCOLL_Request * request)
// (call, arguments...)
#define OPTCOLL_C_CALL_ARGS(...) (call, __VA_ARGS__)

#define OPTCOLL_C_FORMS(Name, lower, Params, Args)                                                 \
  int OPTCOLL_##Name Params {                                                                      \
    return optcoll::capi::guarded(comm, [&](optcoll::capi::Call& call) {                           \
      optcoll::capi::lower##_body OPTCOLL_C_CALL_ARGS Args;                                        \
    });                                                                                            \
  }                                                                                                \
  int OPTCOLL_I##lower OPTCOLL_C_WITH_REQUEST Params {                                             \
    return optcoll::capi::make_request(                                                            \
        comm, optcoll::capi::CallMode::kNonblocking, request,                                      \
        [&](optcoll::capi::Call& call) { optcoll::capi::lower##_body OPTCOLL_C_CALL_ARGS Args; }); \
  }                                                                                                \
  int OPTCOLL_##Name##_init OPTCOLL_C_WITH_REQUEST Params {                                        \
    return optcoll::capi::make_request(                                                            \
        comm, optcoll::capi::CallMode::kPersistent, request,                                       \
        [&](optcoll::capi::Call& call) { optcoll::capi::lower##_body OPTCOLL_C_CALL_ARGS Args; }); \
  }

extern "C" {
OPTCOLL_C_COLLECTIVES(OPTCOLL_C_FORMS)
}  // extern "C"
