#!/bin/sh
# Container entrypoint: set the holds up in the container's own network
# namespace (needs CAP_NET_ADMIN), then run HAProxy in master-worker mode as
# the container's main process. Reload from outside with
#   kubectl exec POD -- synplug-reload
# (or docker exec), which is reload.sh.
set -eu
# /run/synplug is the pod's emptyDir, which Kubernetes creates mode 0777;
# synplug refuses a state directory that others can write (exit 6), so make
# it this user's own first (created when missing: a plain docker run).
mkdir -p /run/synplug
chmod 0700 /run/synplug
# Clients in the pod (a sidecar) connect to 169.254.255.254:80: the local hold.
synplug setup --addr 169.254.255.254
# The Service's traffic arrives on eth0 to port 80 (its targetPort): the
# inbound hold. On a node without sch_plug both are queue holds (--via auto).
synplug setup --inbound eth0 --port 80
exec haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg -p /run/haproxy.pid
