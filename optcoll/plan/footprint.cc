// SPDX-License-Identifier: Apache-2.0
// File: op-count estimates before building (footprint.h).
#include "optcoll/plan/footprint.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// A power law through the last two samples: n = n_last · (p / p_last)^a · (log2 p / log2
// p_last)^with_log.
struct Law {
  double a = 1;
  bool with_log = false;
};

double law_at(const Law& law, double p_last, double n_last, double p) {
  double n = n_last * std::pow(p / p_last, law.a);
  if (law.with_log) n *= std::log2(p) / std::log2(p_last);
  return n;
}

// Fits both laws through samples 1 and 2; keeps the one that predicts sample 0 better.
Law fit(const std::array<double, 3>& p, const std::array<double, 3>& n) {
  Law best;
  double best_error = INFINITY;
  for (const bool with_log : {false, true}) {
    Law law{0, with_log};
    const double ratio =
        with_log ? (n[2] / std::log2(p[2])) / (n[1] / std::log2(p[1])) : n[2] / n[1];
    law.a = std::clamp(std::log(ratio) / std::log(p[2] / p[1]), 0.0, 3.0);
    const double error = std::abs(std::log(law_at(law, p[2], n[2], p[0]) / n[0]));
    if (error < best_error) {
      best_error = error;
      best = law;
    }
  }
  return best;
}

// Sample `size` entries of `from` evenly (from.size() a multiple of the old rank count).
std::vector<Count> sampled(const std::vector<Count>& from, Rank old_p, Rank p, bool matrix) {
  const auto pick = [&](Rank i) {
    return static_cast<std::size_t>(static_cast<std::int64_t>(i) * old_p / p);
  };
  std::vector<Count> out;
  if (!matrix) {
    for (Rank i = 0; i < p; ++i) out.push_back(from[pick(i)]);
    return out;
  }
  for (Rank i = 0; i < p; ++i) {
    for (Rank j = 0; j < p; ++j)
      out.push_back(from[pick(i) * static_cast<std::size_t>(old_p) + pick(j)]);
  }
  return out;
}

std::size_t built_ops(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                      const algorithms::Params& params, const CostModel& model) {
  return algorithms::build(info, spec, params, model).op_count();
}

}  // namespace

CollectiveSpec scaled_spec(const CollectiveSpec& spec, Rank p) {
  CollectiveSpec scaled = spec;
  scaled.nranks = p;
  scaled.root = std::min(spec.root, p - 1);
  if (spec.counts_of) {  // (estimate_ops: no estimate; the caller builds as before)
    throw_invalid("one rank's alltoallv counts (rank {}'s row and column) do not scale to {} ranks",
                  *spec.counts_of, p);
  }
  if (!spec.counts.empty()) {
    scaled.counts = sampled(spec.counts, spec.nranks, p, spec.kind == CollectiveKind::kAlltoallv);
  }
  return scaled;
}

std::optional<OpEstimate> estimate_ops(const algorithms::AlgorithmInfo& info,
                                       const CollectiveSpec& spec, const algorithms::Params& params,
                                       const CostModel& model) {
  constexpr Rank kLargest = kFootprintSampleRanks[2];
  try {
    if (spec.nranks <= kLargest) {
      return OpEstimate{static_cast<double>(built_ops(info, spec, params, model)), "built"};
    }
    std::array<double, 3> p{};
    std::array<double, 3> n{};
    for (std::size_t i = 0; i < 3; ++i) {
      p[i] = kFootprintSampleRanks[i];
      n[i] = static_cast<double>(
          built_ops(info, scaled_spec(spec, kFootprintSampleRanks[i]), params, model));
      if (n[i] <= 0) return std::nullopt;
    }
    const Law law = fit(p, n);
    return OpEstimate{law_at(law, p[2], n[2], spec.nranks),
                      fmt::format("p^{:.1f}{}", law.a, law.with_log ? " log2 p" : "")};
  } catch (const Error&) {  // errors.md: no estimate; the caller builds (or refuses) as before
    return std::nullopt;
  }
}

}  // namespace optcoll
