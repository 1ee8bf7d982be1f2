#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the dependency direction of docs/design.md (Architecture in brief, Layers) on
# #include lines, which CMake's target links cannot see in header-only code:
#   model <- schedule <- {algorithms, verify, sim, exec} <- plan <- api <- {cli, capi}
# Prints every upward or sideways include and exits 1 if there is one.
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
  while IFS=: read -r file line text; do
    target=$(sed -E 's/.*#include "optcoll\/([a-z_]+)\/.*/\1/' <<<"$text")
    if [[ "$ok" != *" $target "* ]]; then
      echo "$file:$line: $layer must not include optcoll/$target/ ($text)"
      status=1
    fi
  done < <(grep -rn '#include "optcoll/' "$dir" || true)
done
if [[ $status -eq 0 ]]; then echo "layering: ok"; fi
exit $status
