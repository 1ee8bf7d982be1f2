#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does Open MPI run what `optcoll export --format ompi-rules` names? For each case
# (collective, count of 8-byte elements) at p ranks:
#   1. look the call up in the exported file the way Open MPI 4.x's coll/tuned does (the
#      communicator-size entry with the largest size <= p, in it the rule with the largest
#      key <= the call's message key), independently of optcoll's code;
#   2. run order_signature with the file (coll_tuned_use_dynamic_rules), and once per
#      algorithm id of the collective forced by coll_tuned_<collective>_algorithm;
#   3. require that the run with the file has the signature of the named algorithm forced,
#      and that some other algorithm's signature differs from it (else the case proves
#      nothing and the check fails; the others are tried in order until one differs).
#
# usage: check_ompi_rules.sh OPTCOLL ORDER_SIGNATURE MPIEXEC P WORKDIR
set -euo pipefail
optcoll=$1 signature=$2 mpiexec=$3 p=$4 work=$5
if ! "$mpiexec" --version 2>&1 | grep -qiE "open ?mpi|openrte|open-mpi"; then
  echo "SKIP: $mpiexec is not Open MPI's"
  exit 77
fi
mkdir -p "$work"
rules=$work/rules_p$p.conf

# Collective name -> coll/tuned id and algorithm ids to compare with.
declare -A coll_id=([allreduce]=2 [reduce]=11)
declare -A alg_ids=([allreduce]="1 2 3 4 5 6" [reduce]="1 3 4 5 7")

"$optcoll" export --format ompi-rules -p "$p" --collectives allreduce,reduce \
  --min-bytes 8 --max-bytes 1M --factor 4 --out "$rules" --report "$work/report_p$p.md" >/dev/null

# lookup COLLECTIVE KEY -> "alg segsize", reading the file as Open MPI does: numbers in
# order, '#' to the end of the line a comment.
lookup() {
  local want=$1 key=$2
  sed 's/#.*//' "$rules" | tr -s ' \t\n' '\n' | grep -v '^$' | awk -v want="$want" -v p="$p" -v key="$key" '
    { v[n++] = $1 }
    END {
      i = 0; ncoll = v[i++]
      for (c = 0; c < ncoll; c++) {
        id = v[i++]; nsizes = v[i++]; found = ""
        for (s = 0; s < nsizes; s++) {
          size = v[i++]; nmsg = v[i++]; choice = ""
          for (m = 0; m < nmsg; m++) {
            k = v[i++]; alg = v[i++]; fan = v[i++]; seg = v[i++]
            if (k <= key) choice = alg " " seg
          }
          if (s == 0 || size <= p) found = choice
        }
        if (id == want) { print found; exit }
      }
      exit 1
    }'
}

sig() { # sig COLLECTIVE COUNT MCA-ARGS...
  local what=$1 count=$2
  shift 2
  "$mpiexec" -np "$p" --mca coll_tuned_use_dynamic_rules 1 "$@" "$signature" "$what" "$count" |
    awk '/^signature/ { print $4 }'
}

status=0
for case in "allreduce 1" "allreduce 65536" "reduce 1" "reduce 65536"; do
  read -r what count <<<"$case"
  key=$((count * 8))
  read -r alg seg < <(lookup "${coll_id[$what]}" "$key")
  with_file=$(sig "$what" "$count" --mca coll_tuned_dynamic_rules_filename "$rules")
  named=$(sig "$what" "$count" --mca coll_tuned_${what}_algorithm "$alg" \
    --mca coll_tuned_${what}_algorithm_segmentsize "$seg")
  differing=""  # the first other algorithm whose signature differs (one is enough)
  for other in ${alg_ids[$what]}; do
    [[ $other == "$alg" ]] && continue
    if [[ $(sig "$what" "$count" --mca coll_tuned_${what}_algorithm "$other") != "$with_file" ]]; then
      differing=" $other"
      break
    fi
  done
  if [[ -z $with_file || $with_file != "$named" ]]; then
    echo "FAIL: $what of $key B at p = $p: the file names algorithm $alg (segment $seg B)," \
      "but the run with the file has signature '$with_file', algorithm $alg forced '$named'"
    status=1
  elif [[ -z $differing ]]; then
    echo "FAIL: $what of $key B at p = $p: no other algorithm's signature differs from $alg's;" \
      "the check cannot tell them apart"
    status=1
  else
    echo "ok: $what of $key B at p = $p runs algorithm $alg (segment $seg B) as the file says" \
      "(signature $with_file; algorithm$differing differs)"
  fi
done
exit $status
