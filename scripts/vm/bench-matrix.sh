#!/usr/bin/env bash
# scripts/vm/bench-matrix.sh - the reload matrix (bench/matrix/main.ts) inside
# the qemu VM of scripts/vm/run.sh (Debian's stock kernel: sch_prio, sch_plug,
# cls_fw, and net.ipv4.tcp_migrate_req). Take the shared VM lock around it:
#   flock /tmp/synplug-vm.lock bash scripts/vm/bench-matrix.sh --rows haproxy-sf
#
# Usage:  bash scripts/vm/bench-matrix.sh [MATRIX OPTIONS...]   (--help lists them, here)
#         npm run bench:matrix -- [MATRIX OPTIONS...]
#         npm run bench:reload -- --matrix [MATRIX OPTIONS...]
#   e.g. --rows haproxy-sf --modes unprotected,migrate,protected --client inbound
# Env:    SYNPLUG_SKIP_BUILD=1  skip `npm run build`
#         SYNPLUG_KERNEL, SYNPLUG_VM_*  passed on to scripts/vm/run.sh
#         (SYNPLUG_VM_TIMEOUT defaults to 600 s here: one run stays under 10 minutes)
# Results: bench/matrix/results/matrix-<kernel>-<date>[-TAG].json and one
# matrix-<kernel>-<date>[-TAG]-<row>.svg per row (the VM shares this machine's
# filesystem), the table on stdout. Give each run its own --tag: a second run
# of the same day and tag overwrites the first.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
log() { printf '[bench-matrix] %s\n' "$*" >&2; }
case " $* " in *" --help "* | *" -h "*) exec node --import=tsx bench/matrix/main.ts --help ;; esac
# the options, checked here before anything is built or booted (a typo would cost a VM boot under the lock)
node --import=tsx bench/matrix/main.ts --check-args "$@" || { log "error: bad options (--help lists them); nothing was built or started"; exit 2; }
[ "$(id -u)" -eq 0 ] || { log "error: run as root"; exit 2; }
for b in haproxy nginx; do
    [ -x "/usr/sbin/$b" ] || [ -x "/usr/bin/$b" ] || { log "$b missing: running scripts/install-test-deps.sh"; bash scripts/install-test-deps.sh >&2; break; }
done
if [ "${SYNPLUG_SKIP_BUILD:-0}" != 1 ]; then
    log "npm run build"
    npm run --silent build >&2 || log "build reported errors (tsc); the bench runs from the sources through tsx"
fi
export SYNPLUG_VM_TIMEOUT=${SYNPLUG_VM_TIMEOUT:-600}
log "in the VM (scripts/vm/run.sh, timeout ${SYNPLUG_VM_TIMEOUT}s)"
status=0
bash scripts/vm/run.sh -- node --import=tsx bench/matrix/main.ts "$@" || status=$?
# the results as Biome formats JSON (npm run lint checks bench/matrix)
npx --no-install biome format --write bench/matrix/results >/dev/null 2>&1 || log "biome format bench/matrix/results failed"
exit "$status"
