#!/bin/sh
# synplug-reload: check the new configuration, then reload HAProxy's master
# (USR2) with new connections held until the new worker holds the socket.
# The check runs without -q: HAProxy 2.6 with -q prints nothing when it
# refuses a configuration, and its [ALERT] lines are the reason to show.
set -eu
exec synplug protect --max-hold 10s \
    --check 'haproxy -c -f /usr/local/etc/haproxy/haproxy.cfg' \
    --wait-listen 169.254.255.254:80 \
    -- kill -USR2 "$(cat /run/haproxy.pid)"
