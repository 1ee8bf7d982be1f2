// SPDX-License-Identifier: Apache-2.0
// File: the PMPI library's persistent collectives (persistent.cc) as the request calls
// (requests.cc) see them. A persistent collective init call that route() sends through
// optcoll makes an OPTCOLL_Request (OPTCOLL_<Name>_init) and gives the program a real MPI
// persistent request that stands for it: an inactive receive from MPI_PROC_NULL
// (PMPI_Recv_init), which MPI accepts in every request call and which stays valid, inactive,
// from start to start. MPI_Start never starts it: the optcoll request is what runs. So the
// MPI library always sees it inactive (MPI_Wait on it returns at once with an empty status;
// MPI_Waitany and _Testany skip it), and the request calls complete these requests
// themselves, then hand the array to the MPI library for the others.
#pragma once

#include <mpi.h>

#include "optcoll.h"

namespace optcoll::pmpi {

// An optcoll persistent collective behind an MPI request.
struct Persistent {
  OPTCOLL_Request request = OPTCOLL_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // the init call's, for error reports
  bool active = false;            // started, and no completion call has reported it yet
  bool done = false;              // its collective completed (it stays active until reported)
  int error = MPI_SUCCESS;        // what completing it returned
};

// Whether any persistent request is alive (made and not freed).
bool any_persistent();
// The optcoll persistent collective behind `handle`, or null.
Persistent* find_persistent(MPI_Request handle);
// Moves an active collective on (`wait`: to completion); marks it done once complete.
void progress(Persistent& p, bool wait);
// Reports a done (or inactive) request complete: it becomes inactive; returns its error.
int retire(Persistent& p);
// Writes an empty status (MPI's, of the inactive request `handle`) to `status` unless it is
// MPI_STATUS_IGNORE.
void empty_status(MPI_Request handle, MPI_Status* status);
// MPI_Request_free of `*request` (whose collective is `p`): an error while it is active;
// else frees the optcoll request and the MPI one.
int free_persistent(MPI_Request* request, Persistent& p);

}  // namespace optcoll::pmpi
