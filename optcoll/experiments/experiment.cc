// SPDX-License-Identifier: Apache-2.0
// File: the experiment registry, expanded from experiments.def.
#include "optcoll/experiments/experiment.h"

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::experiments {

#define OPTCOLL_EXPERIMENT(id, name, run, summary) ExperimentResult run(const ExperimentOptions&);
#include "optcoll/experiments/experiments.def"
#undef OPTCOLL_EXPERIMENT

namespace {
constexpr ExperimentInfo kExperiments[] = {
#define OPTCOLL_EXPERIMENT(id, name, run, summary) ExperimentInfo{name, #id, summary, &run},
#include "optcoll/experiments/experiments.def"
#undef OPTCOLL_EXPERIMENT
};
}  // namespace

std::span<const ExperimentInfo> all_experiments() { return kExperiments; }

const ExperimentInfo& find_experiment(std::string_view name) {
  for (const auto& info : kExperiments) {
    if (info.name == name) return info;
  }
  std::string known;
  for (const auto& info : kExperiments)
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  throw_invalid("unknown experiment '{}' (known: {})", name, known);
}

}  // namespace optcoll::experiments
