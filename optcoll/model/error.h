// SPDX-License-Identifier: Apache-2.0
// File: optcoll's exception types and the always-on invariant check.
//
// Caller errors (bad spec, unknown algorithm, malformed file) throw `Error` with a code.
// Broken invariants (bugs) throw `InternalError` through OPTCOLL_CHECK, in every build type.
// Transport and timeout failures are converted once per backend into `TransportError`.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace optcoll {

enum class ErrorCode {
  kInvalidArgument,  // a spec, model, parameter or option is wrong
  kNotApplicable,    // an algorithm cannot serve this spec (carries the why_not reason)
  kParse,            // a schedule, model or counts file is malformed
  kTransport,        // a rank failed, stalled or a message was wrong
  kInternal,         // a bug in optcoll
};

std::string_view error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what) : Error(ErrorCode::kInternal, what) {}
};

class TransportError : public Error {
 public:
  explicit TransportError(const std::string& what) : Error(ErrorCode::kTransport, what) {}
};

namespace detail {
// (__FILE__/__LINE__ rather than std::source_location, which clang 14 with libstdc++ 12,
// the fuzzing toolchain, does not provide.)
[[noreturn]] void throw_check_failure(std::string_view condition, const std::string& message,
                                      const char* file, int line);
}  // namespace detail

// Throws InvalidArgument built from a fmt format string.
template <typename... Args>
[[noreturn]] void throw_invalid(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ErrorCode::kInvalidArgument, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace optcoll

// Always-on invariant check: OPTCOLL_CHECK(slice.count >= 0, "rank {} op {}", r, i).
#define OPTCOLL_CHECK(cond, ...)                                                          \
  do {                                                                                    \
    if (!(cond)) [[unlikely]] {                                                           \
      ::optcoll::detail::throw_check_failure(#cond, ::fmt::format(__VA_ARGS__), __FILE__, \
                                             __LINE__);                                   \
    }                                                                                     \
  } while (false)
