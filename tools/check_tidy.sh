#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lint gate: clang-tidy with the repository's check set (.clang-tidy, which says why each
# check is in it) on the C++ sources changed since the last commit at which the whole tree
# passed it (tools/tidy_baseline), or on every source with --all or when a .clang-tidy changed
# since that commit. A changed header is checked through one source that includes it. Prints
# each finding and exits 1 if there is one.
#
#   tools/check_tidy.sh [--all] [BUILD_DIR]     (BUILD_DIR: build/release, with its
#                                                compile_commands.json)
#
# After a clean `--all` run, write that commit into tools/tidy_baseline so that later runs
# check only what changed since. clang-tidy's findings differ between major versions: the
# gate holds for Debian 12's (14); without it, it says so and exits 77 (skipped), like
# tools/check_format.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly wanted=14
all=0
if [[ ${1:-} == --all ]]; then
  all=1
  shift
fi
build=${1:-build/release}
tidy=$(command -v clang-tidy-$wanted || command -v clang-tidy || true)
if [[ -z $tidy ]]; then
  echo "check_tidy: clang-tidy is not installed (the README's test command installs it)"
  exit 77
fi
version=$("$tidy" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [[ $version != "$wanted" ]]; then
  echo "check_tidy: clang-tidy $version; the check set is kept clean with version $wanted"
  exit 77
fi
if [[ ! -f $build/compile_commands.json ]]; then
  echo "check_tidy: no $build/compile_commands.json (configure the build first)"
  exit 2
fi

# The repository's translation units, as the build compiles them.
mapfile -t units < <(python3 - "$build/compile_commands.json" "$PWD" <<'EOF'
import json, os, sys
root = sys.argv[2] + "/"
seen = set()
for entry in json.load(open(sys.argv[1])):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if path.startswith(root) and "/build/" not in path[len(root) - 1:] and path.endswith(".cc"):
        seen.add(os.path.relpath(path, sys.argv[2]))
print("\n".join(sorted(seen)))
EOF
)

baseline=$(sed -n 's/^\([0-9a-f]\{40\}\).*/\1/p' tools/tidy_baseline 2>/dev/null || true)
# A changed check set (any .clang-tidy) applies to code that did not change: check it all.
if ((all == 0)) && [[ -n $baseline ]] && git cat-file -e "$baseline^{commit}" 2>/dev/null &&
  [[ -n $(git diff --name-only "$baseline" -- .clang-tidy '*/.clang-tidy') ]]; then
  echo "check_tidy: a .clang-tidy changed since ${baseline:0:12}; checking every source"
  all=1
fi
if ((all == 0)) && [[ -n $baseline ]] && git cat-file -e "$baseline^{commit}" 2>/dev/null; then
  mapfile -t changed < <({ git diff --name-only "$baseline" -- '*.cc' '*.h'
                           git ls-files --others --exclude-standard -- '*.cc' '*.h'; } | sort -u)
  declare -A pick=()
  for unit in "${units[@]}"; do
    for f in "${changed[@]}"; do
      [[ $f == "$unit" ]] && pick[$unit]=1
    done
  done
  for f in "${changed[@]}"; do
    [[ $f == *.h && -f $f ]] || continue
    for unit in "${units[@]}"; do
      if grep -q "#include \"$f\"" "$unit"; then
        pick[$unit]=1
        break
      fi
    done
  done
  files=("${!pick[@]}")
  scope="changed since ${baseline:0:12}"
else
  ((all == 1)) || echo "check_tidy: no baseline commit in this history; checking every source"
  files=("${units[@]}")
  scope="all"
fi
if ((${#files[@]} == 0)); then
  echo "check_tidy: no source changed since ${baseline:0:12}"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet >"$log" 2>&1 || status=$?
if ((status != 0)) || grep -q ': error: \|: warning: ' "$log"; then
  grep -A3 ': error: \|: warning: ' "$log" || cat "$log"
  echo "check_tidy: findings in ${#files[@]} sources ($scope); fix them or, where the code is"
  echo "right, say why in a NOLINT(check) comment"
  exit 1
fi
echo "check_tidy: ${#files[@]} sources clean ($scope)"
