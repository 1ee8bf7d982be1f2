// SPDX-License-Identifier: Apache-2.0
// File: the C API's settings and error reporting under mpirun, one mode per launch (ctest
// capi_settings_*, tests/capi/CMakeLists.txt):
//   strict:        $OPTCOLL_MODEL is bad: every call fails with MPI_ERR_ARG naming it (not
//                  only the first), and OPTCOLL_Last_error says how to run anyway.
//   lenient:       the same with OPTCOLL_STRICT=0: calls run on the default model, correct,
//                  and OPTCOLL_Last_error holds the warning.
//   bad-algorithm: OPTCOLL_Set_algorithm with an unknown name under MPI's default error
//                  handler (fatal): a settings call is local, on no communicator, so it
//                  returns MPI_ERR_ARG with the message instead of ending the job (whose
//                  reports Open MPI 4.1 garbles at np 4); rank 0 prints it, and the
//                  collectives run on (auto).
// Prints "settings check: ok" on rank 0 when every rank saw what it should.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "optcoll.h"

namespace {

int error_class(int code) {
  int cls = 0;
  MPI_Error_class(code, &cls);
  return cls;
}

bool last_error_has(const char* text) { return std::strstr(OPTCOLL_Last_error(), text) != nullptr; }

// Every call fails, and names the setting.
bool strict(int size) {
  bool ok = true;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ok = ok && error_class(OPTCOLL_Barrier(MPI_COMM_WORLD)) == MPI_ERR_ARG;
    ok = ok && last_error_has("OPTCOLL_MODEL: cannot read the model file '/nope.json'") &&
         last_error_has("OPTCOLL_STRICT=0");
  }
  std::vector<int> in(4, 1), out(4, 0);
  ok = ok && error_class(OPTCOLL_Allreduce(in.data(), out.data(), 4, MPI_INT, MPI_SUM,
                                           MPI_COMM_WORLD)) == MPI_ERR_ARG;
  (void)size;
  return ok;
}

// Calls run (on the default model) and the warning is there to read.
bool lenient(int size) {
  const bool warned = last_error_has("") && OPTCOLL_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS &&
                      last_error_has(
                          "warning: OPTCOLL_MODEL: cannot read the model file '/nope.json'; using "
                          "the default (the MPI backend's default: its one-node model on one "
                          "node, else the reference cluster)");
  std::vector<int> in(4, 1), out(4, 0);
  const bool ran = OPTCOLL_Allreduce(in.data(), out.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD) ==
                       MPI_SUCCESS &&
                   out == std::vector<int>(4, size);
  return warned && ran;
}

// The settings call fails alike on every rank, returning its code; the calls run on.
bool bad_algorithm(int rank, int size) {
  const int code = OPTCOLL_Set_algorithm("allreduce", "nosuch");
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  if (rank == 0) std::printf("OPTCOLL_Set_algorithm returned: %s\n", text);
  std::vector<int> in(4, 1), out(4, 0);
  return error_class(code) == MPI_ERR_ARG &&
         last_error_has("unknown algorithm 'nosuch' for allreduce") &&
         OPTCOLL_Allreduce(in.data(), out.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD) ==
             MPI_SUCCESS &&
         out == std::vector<int>(4, size);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "";
  bool mine = false;
  if (mode == "bad-algorithm") {  // under MPI's default (fatal) handler
    mine = bad_algorithm(rank, size);
  } else {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mine = mode == "strict" ? strict(size) : mode == "lenient" && lenient(size);
  }
  if (mode != "bad-algorithm" || !mine) {
    std::printf("rank %d: %s: %s\n", rank, mine ? "ok" : "FAILED", OPTCOLL_Last_error());
  }
  int all = 0;
  int own = mine ? 1 : 0;
  MPI_Allreduce(&own, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::printf("settings check: %s\n", all == 1 ? "ok" : "FAILED");
  MPI_Finalize();
  return all == 1 ? 0 : 1;
}
