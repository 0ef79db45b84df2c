#!/usr/bin/env bash
# scripts/vm/ava-signal-rerun.sh - run ava; when a test file's process was
# killed by a signal (ava: "✘ FILE exited due to SIGSEGV") and nothing else
# failed, run those files once more and print both outcomes. A file that dies
# again fails; a failed assertion (or any other failure) is never re-run.
#
# Usage:  bash scripts/vm/ava-signal-rerun.sh AVA [AVA OPTIONS...] -- [ARGS...]
#   AVA and its options come before `--`; ARGS (files, globs, --match=...)
#   after it. The re-run gets AVA, its options, the options among ARGS (give
#   them as --name=value) and the files that died.
# Output: ava's own output for each run, then one line
#     ava-signal-rerun: N passed, N failed
# that scripts/vm/test-kernel.sh counts (passes of a file that died are
# counted from its re-run only). Exit: 0 when everything passed.
set -uo pipefail
ava=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do ava+=("$1"); shift; done
[ $# -gt 0 ] && shift
args=("$@")
[ ${#ava[@]} -gt 0 ] || { echo "usage: $0 AVA [OPTIONS...] -- [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
strip() { sed 's/\x1b\[[0-9;]*m//g; s/\r$//' "$1"; }

first=$(mktemp)
"${ava[@]}" "${args[@]}" 2>&1 | tee "$first"
rc=${PIPESTATUS[0]}
# (no process substitution: the VM's /dev has no /dev/fd)
read -r passed failed <<<"$(bash "$here/../count-ava.sh" "$first")"
died=()
while IFS= read -r f; do [ -n "$f" ] && died+=("$f"); done <<<"$(strip "$first" | sed -n 's/^ *✘ \(.*\) exited due to \(SIG[A-Z0-9]*\)$/\1/p' | sort -u)"
# Other failures: counted ones, or any other line ava marks failed (a non-zero
# exit, a timeout, no tests found in a file, an early process.exit(), tests
# left remaining), or tests ava skipped (--fail-fast after the death): only a
# run whose every failure is a signal death is re-run.
others=$(strip "$first" | grep -E '^ *✘ ' | grep -cvE '^ *✘ .* exited due to SIG[A-Z0-9]+$' || true)
skipped=$(strip "$first" | grep -ciE '^ *(at least )?[0-9]* *(tests?|test files?) (was|were) skipped|as well as [0-9]+ test files?' || true)
others=$((others + skipped))
if [ ${#died[@]} -eq 0 ] || [ "$failed" != 0 ] || [ "$others" != 0 ]; then
    if [ ${#died[@]} -gt 0 ]; then
        echo "ava-signal-rerun: ${died[*]} died by a signal, and other tests failed: no re-run"
        failed=$((failed + ${#died[@]}))
    fi
    if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
    echo "ava-signal-rerun: $passed passed, $failed failed"
    rm -f "$first"
    exit "$rc"
fi
# Passes of the files that died are dropped from the first count: their
# re-run counts them (ava titles a file by its name without .test.ts).
titles=()
for f in "${died[@]}"; do t=$(basename "$f"); titles+=("${t%%.*}"); done
kept=$(strip "$first" | awk -v list="${titles[*]}" '
    BEGIN { n = split(list, a, " "); for (i = 1; i <= n; i++) dead[a[i]] = 1 }
    /^ *✔ / { line = $0; sub(/^ *✔ /, "", line); split(line, p, " › "); if (!(p[1] in dead)) k++ }
    END { print k + 0 }')
opts=()
for a in "${args[@]}"; do case $a in -*) opts+=("$a") ;; esac; done
echo "ava-signal-rerun: first run: $passed passed, 0 failed; killed by a signal: ${died[*]}"
echo "ava-signal-rerun: running ${died[*]} once more (crash evidence, if any, is kept by scripts/vm/run.sh)"
second=$(mktemp)
"${ava[@]}" "${opts[@]}" "${died[@]}" 2>&1 | tee "$second"
rc2=${PIPESTATUS[0]}
read -r p2 f2 <<<"$(bash "$here/../count-ava.sh" "$second")"
again=$(strip "$second" | grep -c 'exited due to SIG' || true)
f2=$((f2 + again))
if [ "$rc2" != 0 ] && [ "$f2" = 0 ]; then f2=1; fi
echo "ava-signal-rerun: re-run of ${died[*]}: $p2 passed, $f2 failed (exit $rc2)"
echo "ava-signal-rerun: $((kept + p2)) passed, $f2 failed"
rm -f "$first" "$second"
[ "$f2" = 0 ]
