// SPDX-License-Identifier: Apache-2.0
// File: what every OPTCOLL_* function shares (see call.h).
#include "optcoll/capi/call.h"

#include <cstdio>
#include <new>
#include <optional>

#include "optcoll/api/hang_report.h"
#include "optcoll/exec/wait_error.h"

namespace optcoll::capi {

void check_count(long long count, const char* what) {
  if (count < 0) throw_call(MPI_ERR_COUNT, "{} is negative ({})", what, count);
}

void check_root(int root, Rank size) {
  if (root < 0 || root >= size) {
    throw_call(MPI_ERR_ROOT, "root {} is not a rank of this {}-rank communicator", root, size);
  }
}

void check_counts(const int* counts, Rank size, const char* what) {
  if (counts == nullptr) throw_call(MPI_ERR_COUNT, "{} is NULL", what);
  for (Rank i = 0; i < size; ++i) {
    if (counts[i] < 0) throw_call(MPI_ERR_COUNT, "{}[{}] is negative ({})", what, i, counts[i]);
  }
}

Count bytes_of(int count, const char* count_name, MPI_Datatype type, const char* type_name) {
  check_count(count, count_name);
  return Count{count} * static_cast<Count>(contiguous_bytes(type, type_name));
}

Count total_of(std::span<const Count> counts) {
  Count total = 0;
  for (const Count c : counts) total += c;
  return total;
}

bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }

std::vector<std::byte> copy_of(const void* data, Count offset, Count bytes) {
  const auto* from = static_cast<const std::byte*>(data) + offset;
  return {from, from + bytes};
}

const void* checked_contribution(Call& call, bool in_place_allowed, const void* sendbuf,
                                 int sendcount, MPI_Datatype sendtype, const void* recvbuf,
                                 const int* displs, std::size_t recv_bytes, Count expected,
                                 std::vector<std::byte>& own) {
  if (in_place_allowed && in_place(sendbuf)) {
    if (displs == nullptr) throw_call(MPI_ERR_ARG, "displs is NULL");
    return in_place_input(call, recvbuf, Count{displs[call.rank]} * static_cast<Count>(recv_bytes),
                          expected, own);
  }
  const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
  if (mine != expected) {
    throw_call(MPI_ERR_COUNT, "rank {} sends {} bytes but recvcounts[{}] says {}", call.rank, mine,
               call.rank, expected);
  }
  return sendbuf;
}

std::vector<Count> scaled(const int* counts, Rank n, std::size_t bytes) {
  std::vector<Count> out;
  assign_scaled(out, counts, n, bytes);
  return out;
}

void assign_scaled(std::vector<Count>& out, const int* counts, Rank n, std::size_t bytes) {
  out.resize(static_cast<std::size_t>(n));
  for (Rank i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] = Count{counts[i]} * static_cast<Count>(bytes);
}

bool packed(const int* displs, std::span<const Count> byte_counts, std::size_t bytes) {
  if (displs == nullptr) throw_call(MPI_ERR_ARG, "displs is NULL");
  Count at = 0;
  for (std::size_t i = 0; i < byte_counts.size(); ++i) {
    if (Count{displs[i]} * static_cast<Count>(bytes) != at) return false;
    at += byte_counts[i];
  }
  return true;
}

void unpack(const std::byte* packed_data, std::span<const Count> byte_counts, const int* displs,
            std::size_t bytes, std::byte* spread) {
  Count at = 0;
  for (std::size_t i = 0; i < byte_counts.size(); ++i) {
    const auto n = static_cast<std::size_t>(byte_counts[i]);
    std::byte* to =
        spread + static_cast<std::ptrdiff_t>(displs[i]) * static_cast<std::ptrdiff_t>(bytes);
    if (n > 0 && to != packed_data + at) std::memmove(to, packed_data + at, n);
    at += byte_counts[i];
  }
}

void pack(const std::byte* spread, std::span<const Count> byte_counts, const int* displs,
          std::size_t bytes, std::byte* packed_data) {
  Count at = 0;
  for (std::size_t i = 0; i < byte_counts.size(); ++i) {
    const auto n = static_cast<std::size_t>(byte_counts[i]);
    const std::byte* from =
        spread + static_cast<std::ptrdiff_t>(displs[i]) * static_cast<std::ptrdiff_t>(bytes);
    if (n > 0) std::memmove(packed_data + at, from, n);
    at += byte_counts[i];
  }
}

std::byte* Deferred::buffer(std::size_t bytes) {
  buffers.emplace_back(bytes);
  return buffers.back().data();
}

const void* in_place_input(Call& call, const void* from, Count offset, Count bytes,
                           std::vector<std::byte>& own) {
  if (call.deferred == nullptr) {
    own = copy_of(from, offset, bytes);
    return own.data();
  }
  std::byte* copy = call.deferred->buffer(static_cast<std::size_t>(bytes));
  const auto* source = static_cast<const std::byte*>(from) + offset;
  const auto n = static_cast<std::size_t>(bytes);
  auto take = [copy, source, n] {
    if (n > 0) std::memcpy(copy, source, n);
  };
  if (call.persistent()) {
    call.deferred->before_start.push_back(take);
  } else {
    take();
  }
  return copy;
}

void* scratch_output(Call& call, Count bytes, std::vector<std::byte>& local) {
  if (call.deferred == nullptr) {
    local.resize(static_cast<std::size_t>(bytes));
    return local.data();
  }
  return call.deferred->buffer(static_cast<std::size_t>(bytes));
}

const void* packed_input(Call& call, const void* spread, std::span<const Count> byte_counts,
                         const int* displs, std::size_t elem_bytes, std::vector<std::byte>& local) {
  const auto total = static_cast<std::size_t>(total_of(byte_counts));
  const auto* from = static_cast<const std::byte*>(spread);
  if (call.deferred == nullptr) {
    local.resize(total);
    pack(from, byte_counts, displs, elem_bytes, local.data());
    return local.data();
  }
  std::byte* packed_data = call.deferred->buffer(total);
  auto take = [packed_data, from,
               counts = std::vector<Count>(byte_counts.begin(), byte_counts.end()),
               at = std::vector<int>(displs, displs + byte_counts.size()),
               elem_bytes] { pack(from, counts, at.data(), elem_bytes, packed_data); };
  if (call.persistent()) {
    call.deferred->before_start.push_back(std::move(take));
  } else {
    take();
  }
  return packed_data;
}

bool counts_free(Call& call, CollectiveKind kind) {
  return call.nonblocking() || call.comm->counts_free(kind);
}

[[noreturn]] void fail_count_mismatch(Call& call, const std::string& message,
                                      const std::function<void()>& run) {
  if (call.deferred == nullptr) {
    run();
    throw CallError(MPI_ERR_COUNT, message, /*transport_intact=*/true);
  }
  throw CallError(MPI_ERR_COUNT, message, /*transport_intact=*/false);
}

void run_spec(Call& call, const CollectiveSpec& given, const Datatype& type, const ReduceOp& op,
              const void* in, void* out, std::string_view algorithm) {
  CollectiveSpec& spec = call.context->scratch().spec;
  if (&spec != &given) spec = given;  // (a copy into its storage: no allocation once warm)
  spec.nranks = call.size;
  spec.elem_bytes = type.bytes;
  spec.commutative = op.commutative;
  const Communicator::Prepared prepared = call.comm->prepare(spec, algorithm);
  const auto in_bytes = static_cast<std::size_t>(prepared.input_count()) * type.bytes;
  const auto out_bytes = static_cast<std::size_t>(prepared.output_count()) * type.bytes;
  if (in_bytes > 0 && in == nullptr) {
    throw_call(MPI_ERR_BUFFER, "sendbuf is NULL but must hold {} bytes", in_bytes);
  }
  if (out_bytes > 0 && out == nullptr) {
    throw_call(MPI_ERR_BUFFER, "recvbuf is NULL but must hold {} bytes", out_bytes);
  }
  const BufferBinding buffers{
      std::span<const std::byte>(static_cast<const std::byte*>(in), in_bytes),
      std::span<std::byte>(static_cast<std::byte*>(out), out_bytes)};
  call.context->set_step(spec.kind);
  if (call.deferred != nullptr) {
    call.deferred->requests.push_back(
        call.comm->start(prepared, buffers, type, op, call.persistent()));
    return;
  }
  call.comm->run(prepared, buffers, type, op);
}

const ReduceOp& no_reduction() { return detail::no_op(); }

void run_into_displs(Call& call, const CollectiveSpec& spec, const void* in, void* recvbuf,
                     std::span<const Count> arriving, const int* displs, std::size_t recv_bytes,
                     std::string_view algorithm) {
  if (packed(displs, arriving, recv_bytes)) {
    run_spec(call, spec, byte_type(), no_reduction(), in, recvbuf, algorithm);
    return;
  }
  std::vector<std::byte> local;
  auto* staging = static_cast<std::byte*>(scratch_output(call, total_of(arriving), local));
  run_spec(call, spec, byte_type(), no_reduction(), in, staging, algorithm);
  auto* spread = static_cast<std::byte*>(recvbuf);
  if (call.deferred == nullptr) {
    unpack(staging, arriving, displs, recv_bytes, spread);
    return;
  }
  call.deferred->after_completion.push_back(
      [staging, spread, recv_bytes, counts = std::vector<Count>(arriving.begin(), arriving.end()),
       at = std::vector<int>(displs, displs + arriving.size())] {
        unpack(staging, counts, at.data(), recv_bytes, spread);
      });
}

std::vector<Count> exchange_own(Call& call, Count mine) {
  OPTCOLL_CHECK(!call.nonblocking(), "a nonblocking call exchanged counts");
  const std::int64_t own = mine;
  std::vector<std::int64_t> all(static_cast<std::size_t>(call.size));
  call.comm->allgather<std::int64_t>(std::span<const std::int64_t>(&own, 1), all);
  return {all.begin(), all.end()};
}

void open_call(MPI_Comm comm, Call& call) {
  call.context = &context_for(comm);
  call.context->begin_call();
  check_environment();
  call.comm = &call.context->communicator();
  call.size = call.context->transport().size();
  call.rank = call.context->transport().rank();
}

namespace {

// The exception being handled, as an MPI error class and message.
struct Failure {
  int mpi_class = MPI_ERR_INTERN;
  std::string message;
  bool transport_intact = false;  // CallError::transport_intact
  // A collective that ended waiting (WaitError): what it waited for.
  std::optional<std::vector<Rank>> waiting_for;
  bool timed_out = false;
};

Failure current_failure() {
  Failure f;
  try {
    throw;
  } catch (const CallError& e) {
    f.mpi_class = e.mpi_class();
    f.message = e.what();
    f.transport_intact = e.transport_intact();
  } catch (const WaitError& e) {
    f.mpi_class = MPI_ERR_OTHER;
    f.message = e.what();
    f.waiting_for = e.waiting_for();
    f.timed_out = e.timed_out();
  } catch (const Error& e) {
    switch (e.code()) {
      case ErrorCode::kTransport:
        f.mpi_class = MPI_ERR_OTHER;
        break;
      case ErrorCode::kInternal:
        f.mpi_class = MPI_ERR_INTERN;
        break;
      default:
        f.mpi_class = MPI_ERR_ARG;
        break;
    }
    f.message = e.what();
  } catch (const std::bad_alloc&) {
    f.mpi_class = MPI_ERR_NO_MEM;
    f.message = "out of memory";
  } catch (const std::exception& e) {
    f.message = e.what();
  } catch (...) {
    f.message = "unknown exception";
  }
  return f;
}

// One line on stderr for optcoll diagnose (optcoll/api/hang_report.h).
void write_hang_report(CommContext& context, const Failure& f) {
  HangReport r;
  r.rank = context.transport().rank();
  r.size = context.transport().size();
  r.call = context.call_number();
  if (const auto step = context.step()) {
    r.collective = std::string(collective_name(*step));
    const auto& plan = context.communicator().last_plan();
    if (plan && plan->schedule.spec.kind == *step) r.algorithm = plan->algorithm;
  }
  r.entered_ms = context.call_started_ms();
  r.failed_ms = wall_clock_ms();
  r.timed_out = f.timed_out;
  r.waiting_for = *f.waiting_for;
  r.reason = f.message;
  const std::string line = format_hang_report(r) + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

int report_exception(MPI_Comm comm, CommContext* context) {
  const Failure f = current_failure();
  if (context != nullptr && f.waiting_for) {
    try {
      write_hang_report(*context, f);
    } catch (...) {  // errors.md: reporting the first error matters more than this one
    }
  }
  // The others fail this call too, at once, unless they told this rank: a failure this rank
  // found itself (its transport's included: a message of the wrong size) is news to them.
  if (context != nullptr && !f.transport_intact && !context->transport().failed_by_notice()) {
    try {
      context->transport().abort(f.message);
    } catch (...) {  // errors.md: reporting the first error matters more than this one
    }
  }
  return report_error(comm, f.mpi_class, f.message);
}

int report_settings_exception() {
  const Failure f = current_failure();
  return error_code(f.mpi_class, f.message);
}

}  // namespace optcoll::capi
