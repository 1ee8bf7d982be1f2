// SPDX-License-Identifier: Apache-2.0
// File: reading a model file (model.json, as `optcoll calibrate` writes it) for the C API:
// OPTCOLL_Set_model and $OPTCOLL_MODEL.
#pragma once

#include <string_view>

#include "optcoll/model/cost_model.h"

namespace optcoll::capi {

// The parsed and validated model of the file at `path`. Throws Error(kInvalidArgument)
// naming the path: unreadable, a directory, or the parser's or validator's message.
CostModel read_model_file(std::string_view path);

}  // namespace optcoll::capi
