// SPDX-License-Identifier: Apache-2.0
// File: libFuzzer target for the CLI's PROBLEM and MODEL options: the input is split into
// arguments at newlines and parsed as `plan`'s options would be. Every input is either
// rejected (a CLI11 parse error or optcoll::Error) or yields a valid spec and model from
// which every registry algorithm either builds a well-formed schedule or says why not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/options.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"plan"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char ch = static_cast<char>(data[i]);
    if (ch == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  args.push_back(current);
  if (args.size() > 24) return 0;
  optcoll::cli::ProblemOptions problem;
  optcoll::cli::ModelOptions model_options;
  CLI::App app{"fuzz"};
  problem.add_to(app);
  model_options.add_to(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 takes them reversed
  optcoll::CollectiveSpec spec;
  optcoll::CostModel model;
  try {
    app.parse(reversed);
    spec = problem.spec();
    model = model_options.model();
  } catch (const CLI::Error&) {
    return 0;
  } catch (const optcoll::InternalError&) {
    throw;
  } catch (const optcoll::Error&) {
    return 0;
  }
  optcoll::validate(spec);  // must not throw: spec() validated
  optcoll::validate(model);
  if (spec.nranks > 64 || optcoll::Layout(spec).total() > 100000) return 0;  // keep inputs fast
  for (const auto* info : optcoll::algorithms::algorithms_for(spec.kind)) {
    try {
      const auto schedule = optcoll::algorithms::build(*info, spec, {}, model);
      optcoll::fuzz::require(optcoll::structure_issues(schedule).empty());
    } catch (const optcoll::InternalError&) {
      throw;
    } catch (const optcoll::Error& e) {
      // Only "not applicable" (why_not) or a model that does not fit the spec are expected.
      optcoll::fuzz::require(e.code() == optcoll::ErrorCode::kNotApplicable ||
                             e.code() == optcoll::ErrorCode::kInvalidArgument);
    }
  }
  return 0;
}
