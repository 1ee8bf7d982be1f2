// SPDX-License-Identifier: Apache-2.0
// File: libFuzzer target for cost-model files: rejected with optcoll::Error, or a valid
// model that writes back to JSON which parses to the same model.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  optcoll::CostModel model;
  try {
    model = optcoll::parse_cost_model_json(text);
  } catch (const optcoll::InternalError&) {
    throw;
  } catch (const optcoll::Error&) {
    return 0;
  }
  optcoll::validate(model);  // must not throw: the parser validated
  optcoll::fuzz::require(optcoll::parse_cost_model_json(optcoll::cost_model_to_json(model)) ==
                         model);
  return 0;
}
