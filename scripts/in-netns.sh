#!/usr/bin/env bash
# Run a command as root in a fresh network namespace with `lo` up.
# Used by the live tests and benchmarks: nothing they do touches the host's network.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "in-netns.sh: live tests need root (CAP_NET_ADMIN) to create a network namespace; run as root" >&2
  exit 2
fi
if [ "${SYNPLUG_IN_NETNS:-}" = 1 ]; then exec "$@"; fi
exec unshare --net -- env SYNPLUG_IN_NETNS=1 bash -c 'ip link set lo up && exec "$@"' in-netns "$@"
