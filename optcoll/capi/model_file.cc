// SPDX-License-Identifier: Apache-2.0
// File: reading a model file (model_file.h).
#include "optcoll/capi/model_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "optcoll/model/error.h"

namespace optcoll::capi {

CostModel read_model_file(std::string_view path) {
  const std::string name(path);
  std::error_code ec;
  if (std::filesystem::is_directory(name, ec)) {
    throw_invalid("'{}' is a directory, not a model file", name);
  }
  std::ifstream file(name);
  if (!file) throw_invalid("cannot read the model file '{}'", name);
  std::stringstream text;
  text << file.rdbuf();
  try {
    CostModel model = parse_cost_model_json(text.str());
    validate(model);
    return model;
  } catch (const Error& e) {
    throw_invalid("model file '{}': {}", name, e.what());
  }
}

}  // namespace optcoll::capi
