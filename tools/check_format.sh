#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The format gate: every C and C++ source of the repository as .clang-format formats it.
# Prints the files that are not and exits 1 if there is one. clang-format's output differs
# between major versions, so the gate holds for the version the project is formatted with
# (Debian 12's, 14); without it installed, or with another version, it says so and exits 77
# (ctest: skipped). Fix with: clang-format -i FILE...
set -euo pipefail
cd "$(dirname "$0")/.."
readonly wanted=14
if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format is not installed (the README's test command installs it)"
  exit 77
fi
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [[ $version != "$wanted" ]]; then
  echo "check_format: clang-format $version; the sources are formatted with version $wanted"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c')
else
  mapfile -t files < <(find . \( -path ./build -o -path ./.git -o -path ./.node \) -prune -o \
                         \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print)
fi
# Batches of files per clang-format process (one process per file spent most of the check
# starting processes); each violation names its file first on its line.
status=0
report=$(printf '%s\n' "${files[@]}" | xargs -d '\n' -n 64 -P "$(nproc)" clang-format --dry-run \
  --Werror 2>&1 >/dev/null) || status=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
  <<<"$report" | sort -u)
if ((status != 0 && ${#bad[@]} == 0)); then
  echo "$report"
  echo "check_format: clang-format failed (status $status)"
  exit 1
fi
if ((${#bad[@]} > 0)); then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted (clang-format -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: all ${#files[@]} files are formatted"
