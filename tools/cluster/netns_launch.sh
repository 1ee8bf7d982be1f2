#!/bin/sh
# Launcher for MPICH's hydra (`mpiexec.mpich -launcher ssh -launcher-exec netns_launch.sh`):
# hydra calls it like ssh, `netns_launch.sh [-x] HOST "proxy command"`, and it runs the proxy
# inside the network namespace named HOST (made by emulated_cluster.sh up), in its own UTS
# namespace with the hostname HOST, so that every emulated host looks like a separate node.
while [ $# -gt 0 ]; do
  case "$1" in
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "netns_launch.sh: expected HOST COMMAND, got: $*" >&2
  exit 2
fi
host="$1"
shift
if ! ip netns list | grep -qw "^$host"; then
  echo "netns_launch.sh: no network namespace '$host' (run emulated_cluster.sh up first)" >&2
  exit 2
fi
exec ip netns exec "$host" unshare --uts sh -c "hostname '$host' && exec $*"
