// SPDX-License-Identifier: Apache-2.0
// File: what every OPTCOLL_* function shares: argument checks, the byte/element views of
// MPI buffers, displacement (un)packing, running a spec on the communicator's context,
// and the guard that turns exceptions into MPI error codes.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/capi/call_error.h"
#include "optcoll/capi/mpi_context.h"
#include "optcoll/capi/mpi_types.h"
#include "optcoll/model/collective.h"

namespace optcoll::capi {

// One call on one communicator: its context, and this rank's place in it.
struct Call {
  CommContext* context = nullptr;
  Communicator* comm = nullptr;
  Rank size = 0;
  Rank rank = 0;
};

void check_count(long long count, const char* what);
void check_root(int root, Rank size);
void check_counts(const int* counts, Rank size, const char* what);  // non-null, none negative
bool in_place(const void* buffer);                                  // MPI_IN_PLACE

// count elements of `type` in bytes, after checking both (check_count, contiguous_bytes).
Count bytes_of(int count, const char* count_name, MPI_Datatype type, const char* type_name);
Count total_of(std::span<const Count> counts);
// `bytes` bytes of `data` from `offset` on (an MPI_IN_PLACE block, kept while the call runs).
std::vector<std::byte> copy_of(const void* data, Count offset, Count bytes);
// What this rank sends in a v-collective whose counts everyone knows (allgatherv, the
// planned gatherv): where MPI allows MPI_IN_PLACE on this rank (`in_place_allowed`) and it
// is given, its block of recvbuf at displs[call.rank] (copied into `own`); else sendbuf
// after checking that sendcount x sendtype is `expected` bytes.
const void* checked_contribution(const Call& call, bool in_place_allowed, const void* sendbuf,
                                 int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                                 const int* displs, std::size_t recv_bytes, Count expected,
                                 std::vector<std::byte>& own);

// counts[i] * bytes for i < n, as optcoll counts.
std::vector<Count> scaled(const int* counts, Rank n, std::size_t bytes);
// Whether displs[i] * bytes are the prefix sums of byte_counts (the data lies packed).
bool packed(const int* displs, std::span<const Count> byte_counts, std::size_t bytes);
// Copies blocks between a packed buffer and one laid out by displacements.
void unpack(const std::byte* packed_data, std::span<const Count> byte_counts, const int* displs,
            std::size_t bytes, std::byte* spread);
void pack(const std::byte* spread, std::span<const Count> byte_counts, const int* displs,
          std::size_t bytes, std::byte* packed_data);

// Runs `spec` (nranks, elem_bytes and commutative are filled in here) with the buffers the
// layout says this rank uses: `in` and `out` must hold at least that much. `algorithm`, if
// not empty, overrides the communicator's choice.
void run_spec(Call& call, CollectiveSpec spec, const Datatype& type, const ReduceOp& op,
              const void* in, void* out, std::string_view algorithm = {});
const ReduceOp& no_reduction();

// Runs the data-movement `spec` with this rank's output placed in `recvbuf` by `displs`
// (units of `recv_bytes`; `arriving` = the byte counts of the output's blocks): straight
// into recvbuf when the blocks lie packed there, else through a staging buffer.
void run_into_displs(Call& call, const CollectiveSpec& spec, const void* in, void* recvbuf,
                     std::span<const Count> arriving, const int* displs, std::size_t recv_bytes,
                     std::string_view algorithm = {});

// The MPI-ordered counts all ranks learn from each rank's own value (an allgather).
std::vector<Count> exchange_own(Call& call, Count mine);

// Opens a call on `comm` into `call`, field by field: once call.context is set, a failure
// (such as a fatal setting, check_environment) is told to the other ranks.
void open_call(MPI_Comm comm, Call& call);

// Runs body(call) and returns MPI_SUCCESS, or reports the exception as an MPI error code.
// An error once the context exists is told to the other ranks (abort): those still in this
// call fail it at once instead of at their timeout; those that finished it ignore the
// notice. The next call starts afresh on every rank (MpiTransport::begin_call).
template <typename Body>
int guarded(MPI_Comm comm, Body&& body) noexcept;

int report_exception(MPI_Comm comm, CommContext* context);  // inside a catch block
// The same for the settings calls (OPTCOLL_Set_*): local, on no communicator, so the code is
// returned without an error handler (error_code).
int report_settings_exception();  // inside a catch block

template <typename Body>
int guarded(MPI_Comm comm, Body&& body) noexcept {
  Call call;
  try {
    open_call(comm, call);
    body(call);
    return MPI_SUCCESS;
  } catch (...) {
    return report_exception(comm, call.context);
  }
}

}  // namespace optcoll::capi
