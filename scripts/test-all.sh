#!/usr/bin/env bash
# Run every test tier and print one closing line, "N passed, N failed",
# summing all suites (what CI reads).
#   1. unit tests, no kernel (golden bytes, decoders, property tests)
#   2. live tests on this machine's kernel, as root, in a fresh network namespace
#   3. kernel tests in a VM booting Debian's stock kernel (scripts/vm/)
# after the build, the type check (npm run typecheck) and Biome (npm run lint),
# each counted as one failure when it fails.
# SYNPLUG_SUITES="unit live" runs a subset. The kernel tier boots Debian's
# default kernel (6.1) and 6.12; SYNPLUG_KERNELS="linux-image-amd64" runs one.
set -uo pipefail
cd "$(dirname "$0")/.."
suites=${SYNPLUG_SUITES:-"unit live kernel"}
total_pass=0; total_fail=0; failed_suites=()

run_suite() {
  local name=$1; shift
  local log; log=$(mktemp)
  echo "=== $name tests: $*"
  # The suite writes to a file that tail follows until the suite's process ends: a process a failed test left
  # behind (a server whose stderr is the suite's) cannot hold a pipe open and hang the run. It runs in a session
  # of its own, and what is left of it is killed once it ends.
  setsid --wait "$@" >"$log" 2>&1 &
  local pid=$!
  tail -n +1 -f --pid="$pid" "$log"
  wait "$pid"
  local rc=$?
  kill -KILL -- "-$pid" 2>/dev/null && echo "=== $name: killed the processes its tests left behind"
  local pass fail
  if [ "$name" = kernel ]; then
    # test-kernel.sh sums its kernels itself: "kernel tests: N passed, N failed"
    read -r pass fail < <(sed -n 's/^kernel tests: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)
    pass=${pass:-0}; fail=${fail:-0}
  else
    read -r pass fail < <(bash scripts/count-ava.sh "$log")
  fi
  if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then fail=1; fi   # crashed, timed out or did not boot
  if [ "$rc" = 0 ] && [ "$pass" = 0 ]; then echo "$name: ran no test" >&2; fail=$((fail + 1)); fi
  echo "=== $name: $pass passed, $fail failed (exit $rc)"
  total_pass=$((total_pass + pass)); total_fail=$((total_fail + fail))
  [ "$fail" = 0 ] || failed_suites+=("$name")
  # The failures again at the very end of the run (a CI log may keep only its tail): each failed test's line,
  # then the start of ava's account of the failures (from its first rule line).
  if [ "$fail" != 0 ]; then
    { echo "=== $name: what failed"; grep -a '✘' "$log" | head -n 20
      awk '/^  ─$/ { on = 1 } on' "$log" | head -n 60; } >>"$failures"
  fi
  rm -f "$log"
}
failures=$(mktemp)

npm run build || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
# Static checks before the tiers: types over src, test and bench; Biome's lint and format.
npm run typecheck || { echo "=== typecheck failed"; total_fail=$((total_fail + 1)); failed_suites+=(typecheck); }
npm run lint || { echo "=== lint failed"; total_fail=$((total_fail + 1)); failed_suites+=(lint); }
for s in $suites; do
  case $s in
    unit) run_suite unit npx ava 'test/unit/**/*.test.ts' ;;
    live) run_suite live bash scripts/in-netns.sh npx ava 'test/live/**/*.test.ts' ;;
    kernel) SYNPLUG_KERNELS=${SYNPLUG_KERNELS:-"linux-image-amd64 linux-image-6.12-amd64"} run_suite kernel bash scripts/vm/test-kernel.sh ;;
    *) echo "unknown suite $s" >&2; exit 2 ;;
  esac
done
cat "$failures"; rm -f "$failures"
[ ${#failed_suites[@]} -eq 0 ] || echo "failed suites: ${failed_suites[*]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
