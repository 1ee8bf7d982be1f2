// SPDX-License-Identifier: Apache-2.0
// File: the settings check at MPI_Init (settings_check.h).
#include "pmpi/settings_check.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <mpi.h>

#include "optcoll/capi/settings.h"

namespace optcoll::pmpi {
namespace {

void print_lines(int rank, const std::string& text) {
  const std::string who = rank == 0 ? "optcoll: " : fmt::format("optcoll: rank {}: ", rank);
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += who + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void check_settings_at_init() {
  const capi::EnvSettings& settings = capi::process_settings();
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // The lowest rank with problems, and the lowest one they stop (INT_MAX: none).
  const int mine[2] = {settings.problems.empty() ? INT_MAX : rank,
                       settings.stops() ? rank : INT_MAX};
  int lowest[2] = {INT_MAX, INT_MAX};
  PMPI_Allreduce(mine, lowest, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == lowest[0] || rank == lowest[1]) print_lines(rank, settings.report());
  if (lowest[1] == INT_MAX) return;
  if (rank == lowest[1]) {
    print_lines(rank,
                "stopping at MPI_Init (liboptcoll_pmpi.so): fix the setting, or set "
                "OPTCOLL_STRICT=0 to run with its default");
  }
  PMPI_Finalize();
  std::exit(kSettingsStopStatus);  // every rank alike, before the program's first MPI call
}

}  // namespace optcoll::pmpi
