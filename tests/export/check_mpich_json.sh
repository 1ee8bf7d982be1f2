#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does MPICH run what `optcoll export --format mpich-json` names, and does the file serve
# every collective? Skipped (77) without MPICH (mpicc.mpich, mpiexec.mpich). At p ranks:
#   1. export a file for every collective MPICH has rules for;
#   2. every_collective.c (each collective, blocking, nonblocking, neighbourhood, in place,
#      intercommunicator) runs under it at p, p + 1 and p + 2 ranks and gets right results:
#      MPICH takes the file instead of its own, so a collective the file misses, or a
#      choice whose restrictions fail, aborts or computes wrongly;
#   3. for allreduce and reduce at a small and a large count (MPI_SUM on doubles): the
#      algorithm the file names (read by csel_lookup.py, independently of optcoll) has the
#      signature of the run with the file (order_signature.c), compared with each algorithm
#      forced by MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM, and another algorithm differs.
# MPIR_CVAR_DEVICE_COLLECTIVES=none: MPICH's device layer would otherwise run reduce on
# node subcommunicators first (docs/export.md).
#
# usage: check_mpich_json.sh OPTCOLL SOURCE_DIR P WORKDIR
set -euo pipefail
optcoll=$1 src=$2 p=$3 work=$4
if ! command -v mpicc.mpich >/dev/null || ! command -v mpiexec.mpich >/dev/null; then
  echo "SKIP: MPICH (mpicc.mpich, mpiexec.mpich) is not installed"
  exit 77
fi
mkdir -p "$work"
mpicc.mpich -O2 -Wall -Werror -o "$work/order_signature" "$src/order_signature.c" -lm
mpicc.mpich -O2 -Wall -Werror -o "$work/every_collective" "$src/every_collective.c"
file=$work/csel_p$p.json
"$optcoll" export --format mpich-json -p "$p" --min-bytes 8 --max-bytes 1M --factor 4 \
  --out "$file" --report "$work/report_p$p.md" >/dev/null

# Only MPICH's own settings: an inherited MPIR_CVAR_* could change the selection.
for v in $(env | sed -n 's/^\(MPIR_CVAR_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export MPIR_CVAR_DEVICE_COLLECTIVES=none

status=0
# At p + 1 and p + 2 the file's rules for p hold too: there the choices made for p meet
# other rank counts (non-powers of two, counts below pof2), which the guards must catch.
for np in "$p" $((p + 1)) $((p + 2)); do
  if out=$(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$file timeout 120 \
    mpiexec.mpich -n "$np" "$work/every_collective" 2>&1) &&
    grep -q "every collective ran and was right" <<<"$out"; then
    echo "ok: every collective ran under the file for p = $p at $np ranks, results right"
  else
    echo "FAIL: every_collective under the file for p = $p at $np ranks:"
    echo "$out" | head -20
    status=1
  fi
done

sig() { # sig COLLECTIVE COUNT [VAR=VALUE]
  env ${3:+"$3"} timeout 120 mpiexec.mpich -n "$p" "$work/order_signature" "$1" "$2" sum |
    awk '/^signature/ { print $4 }'
}
declare -A prefix=([allreduce]=MPIR_Allreduce_intra_ [reduce]=MPIR_Reduce_intra_)
declare -A candidates=([allreduce]="recursive_doubling reduce_scatter_allgather"
  [reduce]="binomial reduce_scatter_gather")
for case in "allreduce 1" "allreduce 65536" "reduce 1" "reduce 65536"; do
  read -r what count <<<"$case"
  bytes=$((count * 8))
  named=$(python3 "$src/csel_lookup.py" "$file" "$what" "$p" "$bytes" "$count")
  short=${named#"${prefix[$what]}"}
  var=MPIR_CVAR_${what^^}_INTRA_ALGORITHM
  with_file=$(sig "$what" "$count" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$file")
  forced=$(sig "$what" "$count" "$var=$short")
  differing=""
  for other in ${candidates[$what]}; do
    [[ $other == "$short" ]] && continue
    other_sig=$(MPIR_CVAR_COLLECTIVE_FALLBACK=error sig "$what" "$count" "$var=$other" 2>/dev/null || true)
    [[ -n $other_sig && $other_sig != "$with_file" ]] && differing+=" $other"
  done
  if [[ -z $with_file || $with_file != "$forced" ]]; then
    echo "FAIL: $what of $bytes B at p = $p: the file names $named, but the run with the" \
      "file has signature '$with_file' and $short forced '$forced'"
    status=1
  elif [[ -z $differing && $count -ge $p ]]; then
    echo "FAIL: $what of $bytes B at p = $p: no other algorithm's signature differs from" \
      "$short's; the check cannot tell them apart"
    status=1
  else
    echo "ok: $what of $bytes B at p = $p runs $named as the file says (signature" \
      "$with_file;${differing:- the others cannot run at this count}${differing:+ differ})"
  fi
done
exit $status
