# SPDX-License-Identifier: Apache-2.0
# Shared by the node scripts (run.sh, ab.sh), sourced after setting `name`: results go to
# $OUT/$name (OUT: the device tool's folder that comes back; /tmp/node-out elsewhere), and
# the whole folder is tarred into $OUT/$name.tgz after every step, so that a step that runs
# out of time keeps the earlier ones.
out=${OUT:-/tmp/node-out}
res=$out/$name
mkdir -p "$res"
p=${NODE_RANKS:-16}  # ranks per run (a smaller NODE_RANKS tries the scripts out on a smaller machine)
pack() { tar -czf "$out/$name.tgz" -C "$out" "$name"; }
step() {  # step NAME SECONDS COMMAND...: COMMAND under `timeout`, its output in NAME.txt/.err
  local step_name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$res/$step_name.txt" 2> "$res/$step_name.err"
  echo "$step_name: exit $? in $((SECONDS - start)) s" >> "$res/steps.txt"
  pack
}
