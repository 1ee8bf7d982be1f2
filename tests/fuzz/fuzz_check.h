// SPDX-License-Identifier: Apache-2.0
// File: properties every fuzz target checks on a schedule it managed to parse or build.
// A violated property aborts (__builtin_trap), which libFuzzer reports with the input.
#pragma once

#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/io/io.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"

namespace optcoll::fuzz {

inline void require(bool property) {
  if (!property) __builtin_trap();
}

// Round trip; the verifier never throws; an accepted schedule simulates cleanly.
inline void check_parsed_schedule(const Schedule& schedule, bool as_json) {
  const std::string written = as_json ? io::to_json(schedule) : io::to_text(schedule);
  const Schedule again = as_json ? io::parse_json(written) : io::parse_text(written);
  require(again == schedule);
  if (schedule.op_count() > 20000) return;  // keep each input fast
  const VerifyReport report = verify(schedule);
  if (!report.ok()) return;
  CostModel model;
  model.alpha = 3;
  model.beta = 1;
  model.gamma = 2;
  model.copy = 1;
  const SimResult result = simulate(schedule, model);
  require(result.status == SimStatus::kOk);  // verified deadlock-free
}

}  // namespace optcoll::fuzz
