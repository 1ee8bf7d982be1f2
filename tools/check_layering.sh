#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the dependency direction of docs/design.md (Architecture in brief, Layers) on
# #include lines, which CMake's target links cannot see in header-only code:
#   model <- schedule <- {algorithms, verify, sim, exec} <- plan <- api <- {cli, capi}
# with experiments (the paper reproductions) beside api, under the CLI and the tests only:
# no library folder includes optcoll/experiments/, and no CMake target but the CLI's and the
# tests' links optcoll_experiments (so the installed optcoll::optcoll does not carry it).
# Prints every upward or sideways include (or link) and exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

allowed() {
  case "$1" in
    model) echo "model" ;;
    schedule) echo "model schedule" ;;
    algorithms) echo "model schedule algorithms" ;;
    verify) echo "model schedule verify" ;;
    sim) echo "model schedule sim" ;;
    exec) echo "model schedule exec" ;;
    plan) echo "model schedule algorithms verify sim plan" ;;
    api) echo "model schedule algorithms verify sim exec plan api" ;;
    experiments) echo "model schedule algorithms verify sim exec plan api experiments" ;;
    capi) echo "model schedule algorithms verify sim exec plan api capi" ;;
    *) echo "" ;;
  esac
}

status=0
for dir in optcoll/*/; do
  layer=$(basename "$dir")
  ok=" $(allowed "$layer") "
  # file:line:target:text, the target layer put in by one sed for the whole directory.
  while IFS=: read -r file line target text; do
    if [[ "$ok" != *" $target "* ]]; then
      echo "$file:$line: $layer must not include optcoll/$target/ ($text)"
      status=1
    fi
  done < <(grep -rn '#include "optcoll/' "$dir" |
    sed -E 's/^([^:]*):([0-9]*):(.*#include "optcoll\/([a-z_]+)\/.*)$/\1:\2:\4:\3/' || true)
done
while IFS=: read -r file line text; do
  [[ "$text" =~ ^[[:space:]]*# ]] && continue  # a comment
  case "$file" in
    optcoll/experiments/* | cli/* | tests/*) ;;
    *)
      echo "$file:$line: only the CLI and the tests link optcoll_experiments ($text)"
      status=1
      ;;
  esac
done < <(grep -rn --include=CMakeLists.txt --include='*.cmake' optcoll_experiments \
  CMakeLists.txt cmake optcoll cli tests bench examples pmpi 2>/dev/null || true)
if [[ $status -eq 0 ]]; then echo "layering: ok"; fi
exit $status
