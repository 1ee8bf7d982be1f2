// SPDX-License-Identifier: Apache-2.0
// File: the C API's requests (OPTCOLL_Request: nonblocking and persistent collectives). A
// request holds the communicator it was made on (alive after a settings change), the
// optcoll requests of its collective, and what the call keeps beside them (call.h,
// Deferred). docs/c_api.md, "Nonblocking and persistent collectives".
#pragma once

#include <functional>

#include <mpi.h>

#include "optcoll.h"
#include "optcoll/capi/call.h"

namespace optcoll::capi {

// Runs `body` on a new request of `mode` (nonblocking: started; persistent: prepared) and
// stores it in *request; MPI_SUCCESS or an MPI error code, as guarded().
int make_request(MPI_Comm comm, CallMode mode, OPTCOLL_Request* request,
                 const std::function<void(Call&)>& body) noexcept;

}  // namespace optcoll::capi
