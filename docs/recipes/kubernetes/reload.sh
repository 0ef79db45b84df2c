#!/bin/sh
# synplug-reload: check the new configuration, then reload HAProxy's master
# (USR2) with new connections held (the local and the inbound hold) until the
# new worker holds the socket of port 80, every address (--wait-listen 80).
# The check runs without -q: HAProxy 2.6 with -q prints nothing when it
# refuses a configuration, and its [ALERT] lines are the reason to show.
set -eu
exec synplug protect --max-hold 10s \
    --check 'haproxy -c -f /usr/local/etc/haproxy/haproxy.cfg' \
    --wait-listen 80 \
    -- kill -USR2 "$(cat /run/haproxy.pid)"
