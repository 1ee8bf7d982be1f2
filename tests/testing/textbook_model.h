// SPDX-License-Identifier: Apache-2.0
// File: the textbook cost model that the closed-form tests price schedules under, and
// abstract models of given costs. The textbook model, in model units: α = 100 per message, β = 1
// and γ = 3 per element, no copy cost, one port, full duplex, no overlap of computation with
// communication. Small integers, so that every formula's value is exact and a test can state it by
// hand.
#pragma once

#include "optcoll/model/cost_model.h"

namespace optcoll::testing {

inline constexpr Time kAlpha = 100;
inline constexpr Time kBeta = 1;
inline constexpr Time kGamma = 3;

// A homogeneous model with these costs and every other field at its default (one port,
// full duplex, no overlap): the kind the cost formulas describe (algorithms/estimate.h).
inline CostModel abstract_model(Time alpha, Time beta, Time gamma, Time copy = 0) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.gamma = gamma;
  m.copy = copy;
  return m;
}

inline CostModel textbook_model() {
  CostModel m;
  m.alpha = kAlpha;
  m.beta = kBeta;
  m.gamma = kGamma;
  m.copy = 0;
  m.ports = 1;
  m.duplex = Duplex::kFull;
  m.overlap = false;
  return m;
}

}  // namespace optcoll::testing
