#!/bin/sh
# Container entrypoint: set the hold up in the container's own network
# namespace (needs CAP_NET_ADMIN), then run HAProxy in master-worker mode as
# the container's main process. Reload from outside with
#   kubectl exec POD -- synplug-reload
# (or docker exec), which is the script below.
set -eu
# /run/synplug is the pod's emptyDir, which Kubernetes creates mode 0777;
# synplug refuses a state directory that others can write (exit 6), so make
# it this user's own first (created when missing: a plain docker run).
mkdir -p /run/synplug
chmod 0700 /run/synplug
synplug setup --addr 169.254.255.254
exec haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg -p /run/haproxy.pid
