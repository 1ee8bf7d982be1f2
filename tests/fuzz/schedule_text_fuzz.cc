// SPDX-License-Identifier: Apache-2.0
// File: libFuzzer target for the schedule text parser. Any input must either be rejected with
// optcoll::Error or parse into a schedule that (1) writes back to text that parses to the
// same schedule, (2) the verifier judges without crashing, and (3) if the verifier accepts
// it, the simulator prices without error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "optcoll/model/error.h"
#include "optcoll/schedule/io/io.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  optcoll::Schedule schedule;
  try {
    schedule = optcoll::io::parse_text(text);
  } catch (const optcoll::InternalError&) {
    throw;  // a bug: let the fuzzer report it
  } catch (const optcoll::Error&) {
    return 0;  // rejected with a message: fine
  }
  optcoll::fuzz::check_parsed_schedule(schedule, /*as_json=*/false);
  return 0;
}
