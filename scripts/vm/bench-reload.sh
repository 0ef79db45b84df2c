#!/usr/bin/env bash
# scripts/vm/bench-reload.sh - `npm run bench:reload`: the zero-downtime
# reload experiment (HAProxy reloaded under load: baseline, unprotected,
# SYNs dropped, synplug) inside the qemu VM of scripts/vm/run.sh, whose
# Debian 6.1 kernel has sch_prio, sch_plug and cls_fw. See bench/reload/README.md.
#
# Usage:  bash scripts/vm/bench-reload.sh [BENCH OPTIONS...]
#   Options go to bench/reload/main.ts (--help lists them), e.g.
#   --methods baseline,unprotected --reloads 40 --connections 60
#   --inbound [--ipv6]: the clients in a network namespace behind a veth
#   pair, synplug through the inbound hold (the VM's timeout is then 600 s)
#
#   --matrix [MATRIX OPTIONS...]: the reload matrix instead (issue 14: servers
#   x restart styles x client side, bench/matrix/README.md): everything after
#   --matrix goes to scripts/vm/bench-matrix.sh, e.g.
#   npm run bench:reload -- --matrix --rows haproxy-sf --client inbound
#   (also `npm run bench:matrix -- ...`)
#
# Env:
#   SYNPLUG_BENCH_HOST=1   run on this machine instead, in a fresh network
#                          namespace (scripts/in-netns.sh); its kernel lacks
#                          prio/plug/fw, so the default methods there are
#                          baseline,unprotected,drop and results go to
#                          .cache/bench-reload-host/ (not bench/results/)
#   SYNPLUG_SKIP_BUILD=1   skip `npm run build`
#   SYNPLUG_KERNEL, SYNPLUG_VM_*   passed on to scripts/vm/run.sh
#                          (SYNPLUG_VM_TIMEOUT defaults to 1500 s here)
#
# Results: bench/results/reload-<kernel>-<date>.{json,svg}, latest.json,
# latest.svg (the VM shares this machine's filesystem). Exit status: the
# bench's (1 when a pass criterion failed), 124/125 from run.sh when the VM
# timed out or did not boot.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
log() { printf '[bench-reload] %s\n' "$*" >&2; }

# --matrix first: the matrix bench, with the options that follow it
if [ "${1:-}" = --matrix ]; then
    shift
    exec bash scripts/vm/bench-matrix.sh "$@"
fi
case " $* " in *" --matrix "*) log "error: --matrix must come first (npm run bench:reload -- --matrix [MATRIX OPTIONS...])"; exit 2 ;; esac

[ "$(id -u)" -eq 0 ] || { log "error: run as root (qemu, ip, nft, tc)"; exit 2; }

# The peers of the experiment; scripts/install-test-deps.sh installs them in CI.
missing=
for b in haproxy nginx wrk ab; do
    [ -x "/usr/sbin/$b" ] || [ -x "/usr/bin/$b" ] || missing="$missing $b"
done
if [ -n "$missing" ]; then
    log "missing:$missing; running scripts/install-test-deps.sh"
    bash scripts/install-test-deps.sh >&2
fi

if [ "${SYNPLUG_SKIP_BUILD:-0}" != 1 ]; then
    log "npm run build"
    npm run --silent build >&2
fi

bench=(node --import=tsx bench/reload/main.ts)

if [ "${SYNPLUG_BENCH_HOST:-0}" = 1 ]; then
    args=("$@")
    case " $* " in *" --methods "* | *" --methods="*) ;; *) args=(--methods baseline,unprotected,drop "${args[@]}") ;; esac
    case " $* " in *" --out "* | *" --out="*) ;; *) args=(--out "$REPO/.cache/bench-reload-host" "${args[@]}") ;; esac
    log "on this machine ($(uname -r)), in a fresh network namespace"
    exec bash scripts/in-netns.sh "${bench[@]}" "${args[@]}"
fi

[ -f scripts/vm/run.sh ] || { log "error: scripts/vm/run.sh is missing (the VM harness)"; exit 125; }
case " $* " in
*" --inbound "*) export SYNPLUG_VM_TIMEOUT=${SYNPLUG_VM_TIMEOUT:-600} ;;
*) export SYNPLUG_VM_TIMEOUT=${SYNPLUG_VM_TIMEOUT:-1500} ;;
esac
log "in the VM (scripts/vm/run.sh, timeout ${SYNPLUG_VM_TIMEOUT}s)"
exec bash scripts/vm/run.sh -- "${bench[@]}" "$@"
