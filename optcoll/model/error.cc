// SPDX-License-Identifier: Apache-2.0
// File: out-of-line parts of error.h.
#include "optcoll/model/error.h"

namespace optcoll {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotApplicable:
      return "not applicable";
    case ErrorCode::kParse:
      return "parse error";
    case ErrorCode::kTransport:
      return "transport error";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

namespace detail {
void throw_check_failure(std::string_view condition, const std::string& message, const char* file,
                         int line) {
  throw InternalError(fmt::format("optcoll internal check failed: {} ({}) at {}:{}", message,
                                  condition, file, line));
}
}  // namespace detail

}  // namespace optcoll
