// SPDX-License-Identifier: Apache-2.0
// File: the C API's error type: an optcoll Error that also carries the MPI error class the
// C call returns (MPI_ERR_COUNT, MPI_ERR_ROOT, MPI_ERR_TYPE, ...).
#pragma once

#include <string>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::capi {

class CallError : public Error {
 public:
  // `transport_intact`: raised after the collective completed on this rank (a mismatch
  // found by comparing what arrived with what the caller declared): the other ranks are
  // not told and the communicator stays usable.
  CallError(int mpi_class, const std::string& what, bool transport_intact = false)
      : Error(ErrorCode::kInvalidArgument, what),
        mpi_class_(mpi_class),
        transport_intact_(transport_intact) {}
  int mpi_class() const { return mpi_class_; }
  bool transport_intact() const { return transport_intact_; }

 private:
  int mpi_class_;
  bool transport_intact_;
};

template <typename... Args>
[[noreturn]] void throw_call(int mpi_class, fmt::format_string<Args...> format, Args&&... args) {
  throw CallError(mpi_class, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace optcoll::capi
