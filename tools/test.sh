#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds optcoll and runs every test: a warnings-as-errors build with the full suite, the
# whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer, and the thread
# executor tests under ThreadSanitizer. Run from the repository root; the README's test
# command calls it after installing the dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# ccache (installed by the README's test command) makes rebuilds of unchanged files cheap;
# paths inside the repository are rewritten relative, so that clones share the cache.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

echo "== release build (warnings are errors) and full test suite"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTCOLL_WERROR=ON "${launcher[@]}"
cmake --build build/release -j"$jobs"
ctest --test-dir build/release -j"$jobs" --output-on-failure --timeout 600

echo "== clang-tidy (.clang-tidy's check set) on the sources changed since tools/tidy_baseline"
tools/check_tidy.sh build/release

echo "== install, then build and run examples/quickstart against the installed package"
rm -rf build/install build/quickstart
cmake --install build/release --prefix build/install
cmake -S examples/quickstart -B build/quickstart -DCMAKE_PREFIX_PATH="$PWD/build/install"
cmake --build build/quickstart -j"$jobs"
./build/quickstart/quickstart

echo "== build and run examples/c_quickstart (a C-only project: find_package(optcoll) gives the C API) against the installed package"
rm -rf build/c_quickstart
cmake -S examples/c_quickstart -B build/c_quickstart -DCMAKE_PREFIX_PATH="$PWD/build/install"
cmake --build build/c_quickstart -j"$jobs"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 4 \
  ./build/c_quickstart/c_quickstart

# The sanitizer builds register each test binary as 4 ctest tests (gtest's sharding,
# tests/CMakeLists.txt: OPTCOLL_TEST_SHARDS), so that one long binary (exec_test under
# ThreadSanitizer) is spread over the cores, and leave the source checks (format, layering,
# the docs' checkers) to the release suite above.
# The sanitizer builds keep line tables only (reports still name file and line): less
# to compile and link than full debug info, and 30 s per fuzz target. CI's 30 minutes are
# mostly the suites' CPU time on a 2-core machine: the whole run took 27 minutes on the
# project machine at b0367e6 (release 11.0 with ctest 475 s, ASan 11.6 with ctest 529 s and
# fuzzing 1.5, TSan 4.4 with ctest 244 s); what the sanitizer grids keep: docs/design.md,
# "Sanitizer builds run a lighter executor grid". (clang, the AddressSanitizer build, spells it
# -gline-tables-only; GCC, the ThreadSanitizer build, -g1.)
sanitizer_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG")
tsan_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

echo "== AddressSanitizer + UndefinedBehaviorSanitizer (clang, with the libFuzzer targets): full test suite"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTCOLL_SANITIZE="address;undefined" \
  -DCMAKE_CXX_COMPILER=clang++ -DOPTCOLL_FUZZ=ON -DOPTCOLL_BUILD_BENCH=OFF -DOPTCOLL_TEST_PER_CASE=OFF \
  -DOPTCOLL_TEST_SHARDS=4 "${sanitizer_flags[@]}" "${launcher[@]}"
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j"$jobs" --output-on-failure --timeout 900

echo "== fuzzing: each libFuzzer target for ${OPTCOLL_FUZZ_SECONDS:=30} s from the seed corpus"
tools/fuzz.sh build/asan "$OPTCOLL_FUZZ_SECONDS"

echo "== ThreadSanitizer: thread executor tests"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTCOLL_SANITIZE=thread \
  -DOPTCOLL_BUILD_BENCH=OFF -DOPTCOLL_TEST_PER_CASE=OFF -DOPTCOLL_TEST_SHARDS=4 "${tsan_flags[@]}" \
  "${launcher[@]}"
cmake --build build/tsan -j"$jobs" --target exec_test api_test torus_test circulant_allgather_test
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build/tsan -j"$jobs" --output-on-failure --timeout 900 \
  -L threads

echo "== all tests passed"
