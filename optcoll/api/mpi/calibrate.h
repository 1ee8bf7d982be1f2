// SPDX-License-Identifier: Apache-2.0
// File: calibration over the processes of MPI_COMM_WORLD (`optcoll calibrate --backend mpi`):
// calibrate_node (optcoll/api/calibrate_node.h) on MpiTransport, with what the MPI backend
// knows of where its processes run.
#pragma once

#include "optcoll/api/calibrate_node.h"

namespace optcoll {

// calibrate_node over MPI_COMM_WORLD; collective: every process calls it with the same
// options. Needs MPI initialized (world.h) and at least 2 processes (calibrate_node's
// "calibration needs at least 2 ranks"). Over the caller's options it sets the processors
// the processes share (`cores`: per machine, the processes that report one kernel boot id,
// the union of their affinity masks; summed over machines, so that nodes on one machine, as
// the emulated cluster's namespaces, count once), when every process is on one node the
// send modes the MPI backend may have there (port, or shared from the same-node channel's
// threshold: sends of one buffer to several ranks share their copy, docs/design.md, "The
// same-node channel"); over several nodes it adds the two levels and the placement
// (calibrate_levels, which keeps `cores` where the ranks outnumber them). The result is
// complete on rank 0.
NodeCalibration calibrate_on_mpi(NodeCalibrationOptions options);

}  // namespace optcoll
