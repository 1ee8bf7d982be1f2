#!/bin/bash
# An emulated cluster on one machine: N "hosts", each a network namespace with one link of a
# fixed bandwidth into a switch, and MPICH running one rank per host over TCP.
#
#   emulated_cluster.sh up N RATE     make hosts oc0..oc<N-1>; RATE is a tc rate (1gbit, 200mbit)
#   emulated_cluster.sh down          remove them
#   emulated_cluster.sh status        list the hosts, their addresses and link shaping
#   emulated_cluster.sh run [--mpi openmpi|mpich] [--per-host M] NP CMD..
#                                     run CMD on NP ranks, rank i on host oc<i> (needs up NP);
#                                     with --per-host M, M ranks per host in blocks (ranks
#                                     0..M-1 on oc0, ...; needs up ceil(NP/M)): a host's ranks
#                                     share its namespace and its shaped link, and talk to
#                                     each other through shared memory;
#                                     the MPI library is the one CMD links (ldd), or --mpi
#
# Topology: a Linux bridge oc-br (10.77.0.254/24, in the caller's namespace: hydra's mpiexec
# runs there) and per host a veth pair: oc-v<i> on the bridge, eth0 (10.77.0.<i+1>) in the
# namespace oc<i>. Both ends are shaped by a token bucket (tbf) to RATE, so every host has a
# full-duplex link of RATE into a non-blocking switch, like a NIC into a top-of-rack switch.
# The kernel here has no netem, so no latency can be added: the link latency is the veth's
# (about 20-40 us for an MPI message over TCP, measured by `optcoll calibrate`).
#
# Both MPI libraries see N separate nodes: their launchers start one daemon per host through
# netns_launch.sh (as they would through ssh), which enters the namespace and a UTS namespace
# with the host's own name; the daemons reach the launcher over the bridge. Open MPI runs with
# the TCP BTL on 10.77.0.0/24; MPICH (Debian's, ch4:ucx) with UCX_TLS=tcp,self on eth0. So
# every message crosses a shaped link; there is no shared memory between the hosts. Waiting
# ranks yield the CPU (mpi_yield_when_idle; MPIR_CVAR_POLLS_BEFORE_YIELD), since the emulated
# hosts share this machine's cores. TCP's slow start after idle is off in the namespaces
# (every collective would otherwise restart each connection's window).
#
# Needs root (ip netns, tc), iproute2, and openmpi-bin or mpich. A program built against
# MPICH needs a second build directory (docs/performance.md, "Emulated clusters").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Names and addresses; tests use their own (OPTCOLL_CLUSTER_PREFIX=octest, ..._SUBNET=10.78.0)
# so as not to touch a cluster someone has up.
prefix="${OPTCOLL_CLUSTER_PREFIX:-oc}"
subnet="${OPTCOLL_CLUSTER_SUBNET:-10.77.0}"
[[ "$prefix" =~ ^[a-z]{1,8}$ ]] || { echo "emulated_cluster.sh: OPTCOLL_CLUSTER_PREFIX '$prefix' must be 1-8 lowercase letters" >&2; exit 2; }
[[ "$subnet" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "emulated_cluster.sh: OPTCOLL_CLUSTER_SUBNET '$subnet' must look like 10.77.0" >&2; exit 2; }
bridge="$prefix-br"

die() {
  echo "emulated_cluster.sh: $*" >&2
  exit 2
}

hosts() { ip netns list | awk '{print $1}' | grep -E "^$prefix[0-9]+\$" | sort -V || true; }

# Token bucket on one interface: RATE, a bucket of 0.1 ms at that rate (at least two jumbo
# frames), so that even short bursts run at RATE, and a queue of 50 ms before drops.
shape() {
  local netns="$1" dev="$2" rate="$3" bytes_per_s burst
  bytes_per_s=$(tc_rate_bytes "$rate")
  burst=$((bytes_per_s / 10000))
  ((burst < 18000)) && burst=18000
  ip ${netns:+-n "$netns"} link set "$dev" mtu 9000
  tc ${netns:+-n "$netns"} qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 50ms
}

# tc rate text (e.g. 1gbit, 200mbit, 500kbit, 10mbps) in bytes per second.
tc_rate_bytes() {
  local text="${1,,}" number unit
  [[ "$text" =~ ^([0-9]+)([kmg]?)(bit|bps)$ ]] || die "RATE '$1' is not a tc rate like 1gbit or 200mbit"
  number="${BASH_REMATCH[1]}"
  unit="${BASH_REMATCH[2]}"
  case "$unit" in
    k) number=$((number * 1000)) ;;
    m) number=$((number * 1000000)) ;;
    g) number=$((number * 1000000000)) ;;
  esac
  ((number > 0)) || die "RATE '$1' must be positive"
  if [[ "${BASH_REMATCH[3]}" == bit ]]; then echo $((number / 8)); else echo "$number"; fi
}

cmd_up() {
  [[ $# -eq 2 ]] || die "usage: up N RATE"
  local n="$1" rate="$2" i
  [[ "$n" =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 64)) || die "N '$n' must be a host count in 1..64"
  tc_rate_bytes "$rate" > /dev/null
  [[ -z "$(hosts)" ]] || die "a cluster is up already (hosts: $(hosts | tr '\n' ' ')); run down first"
  ip link add "$bridge" type bridge
  ip addr add "$subnet.254/24" dev "$bridge"
  ip link set "$bridge" up
  for ((i = 0; i < n; ++i)); do
    ip netns add "$prefix$i"
    ip link add "$prefix-v$i" type veth peer name eth0 netns "$prefix$i"
    ip link set "$prefix-v$i" master "$bridge"
    ip link set "$prefix-v$i" up
    ip -n "$prefix$i" addr add "$subnet.$((i + 1))/24" dev eth0
    ip -n "$prefix$i" link set eth0 up
    ip -n "$prefix$i" link set lo up
    ip netns exec "$prefix$i" sysctl -q -w net.ipv4.tcp_slow_start_after_idle=0
    shape "" "$prefix-v$i" "$rate"
    shape "$prefix$i" eth0 "$rate"
  done
  ip link set "$bridge" mtu 9000
  echo "emulated cluster: $n hosts $prefix""0..$prefix$((n - 1)), links of $rate, switch $bridge"
}

cmd_down() {
  local h
  for h in $(hosts); do
    ip link del "$prefix-v${h#"$prefix"}" 2> /dev/null || true
    ip netns del "$h"
  done
  ip link del "$bridge" 2> /dev/null || true
}

cmd_status() {
  local h
  [[ -n "$(hosts)" ]] || { echo "no emulated cluster"; return 0; }
  for h in $(hosts); do
    printf '%s %s %s\n' "$h" "$(ip -n "$h" -4 -o addr show dev eth0 | awk '{print $4}')" \
      "$(tc -n "$h" qdisc show dev eth0 | head -1)"
  done
}

cmd_run() {
  local mpi="" np i list="" per_host=1 hosts_needed usage
  usage="usage: run [--mpi openmpi|mpich] [--per-host M] NP COMMAND [ARGS...]"
  while [[ "${1:-}" == --* ]]; do
    case "$1" in
      --mpi) mpi="${2:-}" ;;
      --per-host) per_host="${2:-}" ;;
      *) die "unknown option '$1'; $usage" ;;
    esac
    shift 2 || die "$usage"
  done
  [[ $# -ge 2 ]] || die "$usage"
  [[ "$per_host" =~ ^[0-9]+$ ]] && ((per_host >= 1)) || die "--per-host '$per_host' must be a positive rank count"
  np="$1"
  shift
  [[ "$np" =~ ^[0-9]+$ ]] && ((np >= 1)) || die "NP '$np' must be a positive rank count"
  hosts_needed=$(((np + per_host - 1) / per_host))
  for ((i = 0; i < hosts_needed; ++i)); do
    ip netns list | grep -qw "^$prefix$i" || die "host $prefix$i is missing: 'up $hosts_needed RATE' first"
    list+="${list:+,}$prefix$i"
  done
  if [[ -z "$mpi" ]]; then
    mpi=openmpi
    if ldd "$(command -v "$1" || echo "$1")" 2> /dev/null | grep -q libmpich; then mpi=mpich; fi
  fi
  # A host's ranks talk through shared memory (as on a node); across hosts only TCP.
  local ucx_tls=tcp,self btl=self,tcp
  if ((per_host > 1)); then ucx_tls=tcp,self,sysv,posix btl=self,vader,tcp; fi
  case "$mpi" in
    mpich)
      command -v mpiexec.mpich > /dev/null || die "mpiexec.mpich not found (apt-get install mpich)"
      exec mpiexec.mpich -localhost "$subnet.254" -hosts "$list" -launcher ssh \
        -launcher-exec "$here/netns_launch.sh" -n "$np" -ppn "$per_host" \
        -genv UCX_TLS "$ucx_tls" -genv UCX_NET_DEVICES eth0 -genv UCX_WARN_UNUSED_ENV_VARS n \
        -genv MPIR_CVAR_POLLS_BEFORE_YIELD 100 "$@"
      ;;
    openmpi)
      command -v mpirun.openmpi > /dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin)"
      local slots=""
      for ((i = 0; i < hosts_needed; ++i)); do slots+="${slots:+,}$prefix$i:$per_host"; done
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 exec mpirun.openmpi \
        --mca plm_rsh_agent "$here/netns_launch.sh" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$subnet.0/24" --mca btl "$btl" \
        --mca btl_tcp_if_include "$subnet.0/24" --mca mpi_yield_when_idle 1 \
        -H "$slots" --map-by slot -np "$np" "$@"
      ;;
    *) die "unknown --mpi '$mpi' (openmpi, mpich)" ;;
  esac
}

[[ $# -ge 1 ]] || die "usage: up N RATE | down | status | run [--mpi openmpi|mpich] NP COMMAND..."
action="$1"
shift
case "$action" in
  up) cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  run) cmd_run "$@" ;;
  *) die "unknown action '$action' (up, down, status, run)" ;;
esac
