// SPDX-License-Identifier: Apache-2.0
// File: what every OPTCOLL_* function shares: argument checks, the byte/element views of
// MPI buffers, displacement (un)packing, running a spec on the communicator's context,
// and the guard that turns exceptions into MPI error codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
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

// How a C call runs: to completion (OPTCOLL_<Name>), started (OPTCOLL_I<name>) or prepared
// to be started any number of times (OPTCOLL_<Name>_init).
enum class CallMode : std::uint8_t { kBlocking, kNonblocking, kPersistent };

// What a nonblocking or persistent call keeps beside its optcoll requests: buffers of its
// own (in-place copies, packed inputs, staging for outputs laid out by displacements), the
// steps to take before each start (a persistent call's in-place copies and packing: the
// application's data of that start) and after each completion (unpacking into recvbuf).
struct Deferred {
  CallMode mode = CallMode::kNonblocking;
  std::vector<std::vector<std::byte>> buffers;  // (moving a vector keeps its data in place)
  std::vector<std::function<void()>> before_start;
  std::vector<std::function<void()>> after_completion;
  std::vector<Request> requests;
  std::byte* buffer(std::size_t bytes);  // a new buffer of its own
};

// One call on one communicator: its context, and this rank's place in it; `deferred` for a
// nonblocking or persistent call (null: blocking).
struct Call {
  CommContext* context = nullptr;
  Communicator* comm = nullptr;
  Rank size = 0;
  Rank rank = 0;
  Deferred* deferred = nullptr;
  bool persistent() const { return deferred != nullptr && deferred->mode == CallMode::kPersistent; }
  bool nonblocking() const {
    return deferred != nullptr && deferred->mode == CallMode::kNonblocking;
  }
};

// The input of an MPI_IN_PLACE call: `bytes` bytes of `from` at byte `offset`, copied (a
// persistent call copies them at every start). Blocking calls copy into `own`.
const void* in_place_input(Call& call, const void* from, Count offset, Count bytes,
                           std::vector<std::byte>& own);
// An output buffer of `bytes` whose contents nobody reads (data set aside): `local` for a
// blocking call, one of the call's own otherwise.
void* scratch_output(Call& call, Count bytes, std::vector<std::byte>& local);
// `spread` (blocks at `displs`, in units of `elem_bytes`) packed in rank order (a persistent
// call packs at every start). Blocking calls pack into `local`.
const void* packed_input(Call& call, const void* spread, std::span<const Count> byte_counts,
                         const int* displs, std::size_t elem_bytes, std::vector<std::byte>& local);
// Whether the MPI-semantics gatherv / scatterv of `kind` runs linear without the count
// exchange: Communicator::counts_free, and always for a nonblocking call (a count exchange
// would make it wait for the other ranks; docs/c_api.md).
bool counts_free(Call& call, CollectiveKind kind);
// A rank whose arguments disagree with the others' (a count mismatch) fails alone: a
// blocking call first takes the others' data aside (run), a nonblocking or persistent one
// fails at once (the others then fail at their timeout, or by the abort notice).
[[noreturn]] void fail_count_mismatch(Call& call, const std::string& message,
                                      const std::function<void()>& run);

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
const void* checked_contribution(Call& call, bool in_place_allowed, const void* sendbuf,
                                 int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                                 const int* displs, std::size_t recv_bytes, Count expected,
                                 std::vector<std::byte>& own);

// counts[i] * bytes for i < n, as optcoll counts; the same into `out` (reusing its storage).
std::vector<Count> scaled(const int* counts, Rank n, std::size_t bytes);
void assign_scaled(std::vector<Count>& out, const int* counts, Rank n, std::size_t bytes);
// Whether displs[i] * bytes are the prefix sums of byte_counts (the data lies packed).
bool packed(const int* displs, std::span<const Count> byte_counts, std::size_t bytes);
// Copies blocks between a packed buffer and one laid out by displacements.
void unpack(const std::byte* packed_data, std::span<const Count> byte_counts, const int* displs,
            std::size_t bytes, std::byte* spread);
void pack(const std::byte* spread, std::span<const Count> byte_counts, const int* displs,
          std::size_t bytes, std::byte* packed_data);

// Runs `spec` (nranks, elem_bytes and commutative are filled in here, on a copy in the
// context's scratch spec, unless `spec` is that spec) with the buffers the layout says this
// rank uses: `in` and `out` must hold at least that much. `algorithm`, if not empty,
// overrides the communicator's choice. A nonblocking call starts it, a persistent one
// prepares it (call.deferred keeps the request).
void run_spec(Call& call, const CollectiveSpec& spec, const Datatype& type, const ReduceOp& op,
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

// The context is going away (its communicator freed, or MPI finalized): the requests made on
// it complete what they have in flight and refuse further use (c_api_requests.cc).
void orphan_requests(CommContext* context);

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
