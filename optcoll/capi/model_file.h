// SPDX-License-Identifier: Apache-2.0
// File: reading the files the C API and the PMPI library take by path: a model file
// (model.json, as `optcoll calibrate` writes it: OPTCOLL_Set_model and $OPTCOLL_MODEL) and a
// tuning table (as `optcoll tune` writes it: $OPTCOLL_TUNING).
#pragma once

#include <string_view>

#include "optcoll/model/cost_model.h"
#include "optcoll/plan/tuning.h"

namespace optcoll::capi {

// The parsed and validated model of the file at `path`, over the reference cluster model
// (the one rule of docs/cost_model.md: fields the file lacks keep the reference's values,
// unless the file names its "base"). Throws Error(kInvalidArgument) naming the path:
// unreadable, a directory, or the parser's or validator's message.
CostModel read_model_file(std::string_view path);

// The tuning table of the file at `path` (parse_tuning_json). Throws Error(kInvalidArgument)
// naming the path, as read_model_file does.
TuningTable read_tuning_file(std::string_view path);

}  // namespace optcoll::capi
