// SPDX-License-Identifier: Apache-2.0
// File: libFuzzer target for the schedule JSON parser (same properties as the text target).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "optcoll/model/error.h"
#include "optcoll/schedule/io/io.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  optcoll::Schedule schedule;
  try {
    schedule = optcoll::io::parse_json(text);
  } catch (const optcoll::InternalError&) {
    throw;
  } catch (const optcoll::Error&) {
    return 0;
  }
  optcoll::fuzz::check_parsed_schedule(schedule, /*as_json=*/true);
  return 0;
}
