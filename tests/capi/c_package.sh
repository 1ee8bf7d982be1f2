#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C API from a C-only CMake project: installs the "capi" component of this build into a
# fresh prefix, configures examples/c_quickstart (LANGUAGES C) against it with
# find_package(optcoll), checks that the configure never looked for a C++ dependency (Boost,
# fmt, MPI's C++ bindings), builds it and runs it under mpirun.
# Usage: c_package.sh BUILD_DIR SOURCE_DIR WORKDIR MPIEXEC NP
set -euo pipefail
build=$1 source=$2 work=$3 mpiexec=$4 np=$5
rm -rf "$work"
cmake --install "$build" --component capi --prefix "$work/prefix"
cmake -S "$source/examples/c_quickstart" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix"
for dependency in Boost_DIR fmt_DIR nlohmann_json_DIR MPI_CXX_COMPILER; do
  if grep -q "^$dependency:" "$work/build/CMakeCache.txt"; then
    echo "c_package: the C project's configure looked for a C++ dependency ($dependency)"
    exit 1
  fi
done
cmake --build "$work/build"
"$mpiexec" -np "$np" "$work/build/c_quickstart"
