#!/bin/bash
# The emulated cluster end to end, small: two hosts (namespaces octest0/1 on 10.78.0.0/24,
# so a cluster someone has up is left alone) with 1 Gbit/s links; each rank must run on
# its own host (hostname), the links must be shaped (tc), and `optcoll bench` across them
# must agree with the MPI library on every row. Exit 77 (skipped) without root or netns.
# Usage: cluster_smoke.sh OPTCOLL_BINARY
set -u
tool="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cluster="$here/../../tools/cluster/emulated_cluster.sh"
export OPTCOLL_CLUSTER_PREFIX=octest OPTCOLL_CLUSTER_SUBNET=10.78.0
if [[ $(id -u) != 0 ]] || ! ip netns add octestprobe 2> /dev/null; then
  echo "cluster_smoke: skipped (needs root and network namespaces)"
  exit 77
fi
ip netns del octestprobe
"$cluster" down
trap '"$cluster" down' EXIT
"$cluster" up 2 1gbit || exit 1
fail() { echo "cluster_smoke: $*"; exit 1; }
[[ "$("$cluster" status | grep -c 'tbf.*rate 1Gbit')" == 2 ]] || fail "links are not shaped"
names=$("$cluster" run 2 hostname | sort | tr '\n' ' ')
[[ "$names" == "octest0 octest1 " ]] || fail "ranks ran on '$names', expected octest0 and octest1"
out=$("$cluster" run 2 "$tool" bench --max-bytes 4096 --factor 64 --iterations 2 \
  --collectives allreduce,gatherv --dists spikes --format csv) || fail "bench failed: $out"
echo "$out"
# 2 sizes x (allreduce + gatherv planned + gatherv through the C API)
[[ "$(echo "$out" | grep -c ',yes$')" == 6 ]] || fail "expected 6 rows agreeing with MPI"
"$cluster" run 3 hostname > /dev/null 2>&1 && fail "3 ranks on 2 hosts should be refused"
echo "cluster_smoke: ok"
