// SPDX-License-Identifier: Apache-2.0
// File: the unrooted C API calls (OPTCOLL_Allreduce, _Allgather(v), _Reduce_scatter(_block),
// _Alltoall(v), _Scan, _Exscan, _Barrier) and the settings. MPI_IN_PLACE is served by copying the
// in-place data into a private input first (optcoll's input and output never alias).
#include <vector>

#include "optcoll.h"
#include "optcoll/capi/call.h"

using namespace optcoll;        // NOLINT(google-build-using-namespace)
using namespace optcoll::capi;  // NOLINT(google-build-using-namespace)

namespace {

// Runs a reduction whose input is `sendbuf`, or (MPI_IN_PLACE) the first `in_elements`
// elements of recvbuf.
void reduction(Call& call, const CollectiveSpec& spec, const void* sendbuf, void* recvbuf,
               Count in_elements, MPI_Datatype datatype, MPI_Op op) {
  const Datatype type = element_type(datatype);
  const ReduceOp reduce = reduce_op(op, datatype, type);
  std::vector<std::byte> own;
  if (in_place(sendbuf)) {
    own = copy_of(recvbuf, 0, in_elements * static_cast<Count>(type.bytes));
    sendbuf = own.data();
  }
  run_spec(call, spec, type, reduce, sendbuf, recvbuf);
}

}  // namespace

extern "C" {

int OPTCOLL_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_count(count, "count");
    reduction(call, detail::regular(CollectiveKind::kAllreduce, count), sendbuf, recvbuf, count,
              datatype, op);
  });
}

int OPTCOLL_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_count(recvcount, "recvcount");
    reduction(call, detail::regular(CollectiveKind::kReduceScatterBlock, recvcount), sendbuf,
              recvbuf, Count{recvcount} * call.size, datatype, op);
  });
}

int OPTCOLL_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_counts(recvcounts, call.size, "recvcounts");
    const std::vector<Count> counts = scaled(recvcounts, call.size, 1);
    const Count total = total_of(counts);
    reduction(call, detail::irregular(CollectiveKind::kReduceScatter, counts), sendbuf, recvbuf,
              total, datatype, op);
  });
}

int OPTCOLL_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    const Count block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
    std::vector<std::byte> own;
    if (in_place(sendbuf)) {
      own = copy_of(recvbuf, block * call.rank, block);
      sendbuf = own.data();
    } else {
      const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
      if (mine != block) {
        throw_call(MPI_ERR_COUNT, "rank {} sends {} bytes but receives {} per rank", call.rank,
                   mine, block);
      }
    }
    run_spec(call, detail::regular(CollectiveKind::kAllgather, block), byte_type(), no_reduction(),
             sendbuf, recvbuf);
  });
}

int OPTCOLL_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_counts(recvcounts, call.size, "recvcounts");
    const std::size_t recv_bytes = contiguous_bytes(recvtype, "recvtype");
    const std::vector<Count> byte_counts = scaled(recvcounts, call.size, recv_bytes);
    std::vector<std::byte> own;
    const void* mine =
        checked_contribution(call, true, sendbuf, sendcount, sendtype, recvbuf, displs, recv_bytes,
                             byte_counts[static_cast<std::size_t>(call.rank)], own);
    run_into_displs(call, detail::irregular(CollectiveKind::kAllgatherv, byte_counts), mine,
                    recvbuf, byte_counts, displs, recv_bytes);
  });
}

int OPTCOLL_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    const Count block = bytes_of(recvcount, "recvcount", recvtype, "recvtype");
    std::vector<std::byte> own;
    if (in_place(sendbuf)) {
      own = copy_of(recvbuf, 0, block * call.size);
      sendbuf = own.data();
    } else {
      const Count mine = bytes_of(sendcount, "sendcount", sendtype, "sendtype");
      if (mine != block) {
        throw_call(MPI_ERR_COUNT, "rank {} sends {} bytes per rank but receives {}", call.rank,
                   mine, block);
      }
    }
    run_spec(call, detail::regular(CollectiveKind::kAlltoall, block), byte_type(), no_reduction(),
             sendbuf, recvbuf);
  });
}

int OPTCOLL_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    const Rank p = call.size;
    check_counts(recvcounts, p, "recvcounts");
    const std::size_t recv_bytes = contiguous_bytes(recvtype, "recvtype");
    const std::vector<Count> recv_counts = scaled(recvcounts, p, recv_bytes);
    std::vector<Count> send_counts;
    std::vector<std::byte> own;
    if (in_place(sendbuf)) {  // sends what recvbuf holds, laid out like the receives
      send_counts = recv_counts;
      const Count total = total_of(recv_counts);
      own.resize(static_cast<std::size_t>(total));
      if (rdispls == nullptr) throw_call(MPI_ERR_ARG, "rdispls is NULL");
      pack(static_cast<const std::byte*>(recvbuf), recv_counts, rdispls, recv_bytes, own.data());
    } else {
      check_counts(sendcounts, p, "sendcounts");
      const std::size_t send_bytes = contiguous_bytes(sendtype, "sendtype");
      send_counts = scaled(sendcounts, p, send_bytes);
      if (!packed(sdispls, send_counts, send_bytes)) {
        const Count total = total_of(send_counts);
        own.resize(static_cast<std::size_t>(total));
        pack(static_cast<const std::byte*>(sendbuf), send_counts, sdispls, send_bytes, own.data());
      }
    }
    if (!own.empty()) sendbuf = own.data();
    // MPI gives each rank its own row: every rank learns the whole matrix first.
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(p) * static_cast<std::size_t>(p));
    const std::vector<std::int64_t> row(send_counts.begin(), send_counts.end());
    call.comm->allgather<std::int64_t>(row, matrix);
    const auto me = static_cast<std::size_t>(call.rank);
    std::vector<Count> arriving(static_cast<std::size_t>(p));
    std::string mismatch;
    for (std::size_t from = 0; from < static_cast<std::size_t>(p); ++from) {
      arriving[from] = matrix[from * static_cast<std::size_t>(p) + me];
      if (mismatch.empty() && arriving[from] != recv_counts[from]) {
        mismatch = fmt::format(
            "rank {} sends {} bytes to rank {} but recvcounts[{}] says {} "
            "(recvbuf left unchanged)",
            from, arriving[from], call.rank, from, recv_counts[from]);
      }
    }
    const CollectiveSpec spec = detail::irregular(CollectiveKind::kAlltoallv,
                                                  std::vector<Count>(matrix.begin(), matrix.end()));
    if (mismatch.empty()) {
      run_into_displs(call, spec, sendbuf, recvbuf, recv_counts, rdispls, recv_bytes);
      return;
    }
    // The data arrives as sent: take it aside, then fail here alone.
    std::vector<std::byte> staging(static_cast<std::size_t>(total_of(arriving)));
    run_spec(call, spec, byte_type(), no_reduction(), sendbuf, staging.data());
    throw CallError(MPI_ERR_COUNT, mismatch, /*transport_intact=*/true);
  });
}

int OPTCOLL_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_count(count, "count");
    reduction(call, detail::regular(CollectiveKind::kScan, count), sendbuf, recvbuf, count,
              datatype, op);
  });
}

int OPTCOLL_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  return guarded(comm, [&](Call& call) {
    check_count(count, "count");
    reduction(call, detail::regular(CollectiveKind::kExscan, count), sendbuf, recvbuf, count,
              datatype, op);
  });
}

int OPTCOLL_Barrier(MPI_Comm comm) {
  return guarded(comm, [&](Call& call) { call.comm->barrier(); });
}

int OPTCOLL_Set_model(const char* model_json_path) {
  try {
    set_model_file(model_json_path);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

int OPTCOLL_Set_algorithm(const char* collective, const char* algorithm) {
  try {
    if (collective == nullptr || algorithm == nullptr) {
      throw_call(MPI_ERR_ARG, "OPTCOLL_Set_algorithm needs a collective and an algorithm");
    }
    set_algorithm(collective, algorithm);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

int OPTCOLL_Set_timeout(int milliseconds) {
  try {
    set_timeout_ms(milliseconds);
    return MPI_SUCCESS;
  } catch (...) {
    return report_settings_exception();
  }
}

const char* OPTCOLL_Last_error(void) { return last_error(); }

}  // extern "C"
