#!/usr/bin/env bash
# Install, on a fresh Debian 12 machine (as root), the packages the tests and
# benchmarks use. None of them is used by synplug at run time: `tc`, `ip`,
# `nft`, `iptables` and `nl-qdisc-add` are oracles in tests and references in
# benchmarks; haproxy, nginx, wrk and ab are the real peers of the reload
# experiment; `time` (/usr/bin/time) measures the benchmarks' peak memory;
# systemd (systemd-analyze verify) and python3-yaml check docs/recipes
# (test/live/recipes.test.ts), python3 also plays reuseport servers in tests;
# qemu, busybox, cpio and kmod boot Debian's stock kernel for the
# tests that need sch_prio, sch_plug and cls_fw (scripts/vm/); prometheus
# (its promtool) and prometheus-node-exporter check and scrape protect's
# --metrics-file (test/unit/guard-metrics.test.ts, test/live/guard-report.test.ts).
set -euo pipefail
if [ "$(id -u)" != 0 ]; then echo "install-test-deps.sh: run as root (it uses apt-get)" >&2; exit 2; fi
pkgs=(iproute2 nftables iptables libnl-utils util-linux procps
      haproxy nginx wrk apache2-utils time
      systemd python3 python3-yaml
      qemu-system-x86 busybox-static cpio kmod
      prometheus prometheus-node-exporter)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The package lists first, always: a new machine has none, and stale ones
# would fail the kernel download of scripts/vm/build.sh too.
export DEBIAN_FRONTEND=noninteractive
apt-get update
if [ ${#missing[@]} -gt 0 ]; then
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
# The reference daemons must not run on their own: the tests start them.
for svc in haproxy nginx prometheus prometheus-node-exporter; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then systemctl stop "$svc" || true; fi
done
echo "install-test-deps: all test packages present"
