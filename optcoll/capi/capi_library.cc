// SPDX-License-Identifier: Apache-2.0
// File: liboptcoll_capi.so, the C API (include/optcoll.h) as one shared library for C
// programs: its functions come from liboptcoll_c.a, linked in whole, and only they are
// exported (optcoll_capi.map); the C++ libraries inside it stay private. A C project then
// links this and MPI's C library alone: find_package(optcoll) in a C project gives
// optcoll::optcoll_capi (examples/c_quickstart). This file gives the library a source of its
// own.
#include "optcoll.h"
