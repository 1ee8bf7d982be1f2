// SPDX-License-Identifier: Apache-2.0
// File: reading model and tuning files (model_file.h).
#include "optcoll/capi/model_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "optcoll/model/error.h"

namespace optcoll::capi {
namespace {

// The text of the file at `path`; `what` names the kind of file in the errors.
std::string read_text(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw_invalid("'{}' is a directory, not a {} file", path, what);
  }
  std::ifstream file(path);
  if (!file) throw_invalid("cannot read the {} file '{}'", what, path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

CostModel read_model_file(std::string_view path) {
  const std::string name(path);
  const std::string text = read_text(name, "model");
  try {
    CostModel model = parse_cost_model_json(text, reference_cluster_model());
    validate(model);
    return model;
  } catch (const Error& e) {
    throw_invalid("model file '{}': {}", name, e.what());
  }
}

TuningTable read_tuning_file(std::string_view path) {
  const std::string name(path);
  const std::string text = read_text(name, "tuning");
  try {
    return parse_tuning_json(text);
  } catch (const Error& e) {
    throw_invalid("tuning file '{}': {}", name, e.what());
  }
}

}  // namespace optcoll::capi
