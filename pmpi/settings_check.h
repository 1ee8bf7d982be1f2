// SPDX-License-Identifier: Apache-2.0
// File: the PMPI library's check of its settings at MPI_Init (optcoll/capi/settings.h: the
// table of OPTCOLL_* variables). Reporting them is this library's documented job: the
// application knows nothing of optcoll, so a bad setting would otherwise go unseen.
#pragma once

namespace optcoll::pmpi {

// The exit status of every rank when a setting stops the program at MPI_Init.
inline constexpr int kSettingsStopStatus = 2;

// Collective over MPI_COMM_WORLD, right after MPI_Init: reads the settings; the lowest rank
// whose settings have problems prints them on stderr (and the lowest rank that a fatal one
// stops, if another). When one stops any rank (OPTCOLL_STRICT not 0), every rank finalizes
// MPI and exits with kSettingsStopStatus, before the program's first MPI call; otherwise
// the bad values are replaced by their defaults and the program runs.
void check_settings_at_init();

}  // namespace optcoll::pmpi
