#!/usr/bin/env bash
# bench/vm-crash-hunt.sh - run the kernel tier (or one file of it) in the VM
# again and again and count the test processes that die by a signal, with
# the crash evidence scripts/vm/run.sh keeps (core files, Node's fatal-error
# reports, the guest's kernel log with print-fatal-signals). Not a CI step:
# a search for a rare crash, one VM run after another.
#
# Usage:  bash bench/vm-crash-hunt.sh [--runs N] [--kernel PKG] [--cpu MODEL]
#                                     [--tcg-thread multi|single] [--out FILE]
#                                     [-- AVA ARGS...]
#   --runs N        how many kernel-tier runs (default 5)
#   --kernel PKG    Debian kernel package (default linux-image-amd64)
#   --cpu MODEL     qemu -cpu (default max, as CI), e.g. "max,-avx,-avx2"
#   --tcg-thread T  multi (default, as CI) or single
#   --out FILE      a TSV line per run is appended (default
#                   bench/results/vm-crash-hunt.tsv)
#   AVA ARGS        what test-kernel.sh runs (default: the whole tier)
# Each run takes the VM lock (/tmp/synplug-vm.lock) for its own length only.
# Output: one line per run, then a summary: runs, runs with a signal death,
# the files that died and the evidence folders (<repo>/.cache/vm/crashes/).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
runs=5 kernel=linux-image-amd64 cpu=max tcg=multi out=bench/results/vm-crash-hunt.tsv
while [ $# -gt 0 ]; do
    case $1 in
        --runs | --kernel | --cpu | --tcg-thread | --out)
            [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1 needs a value (see the header of $0)" >&2; exit 2; }
            case $1 in --runs) runs=$2 ;; --kernel) kernel=$2 ;; --cpu) cpu=$2 ;; --tcg-thread) tcg=$2 ;; --out) out=$2 ;; esac
            shift 2 ;;
        --) shift; break ;;
        *) echo "usage: see the header of $0" >&2; exit 2 ;;
    esac
done
case $runs in '' | *[!0-9]* | 0) echo "--runs takes a whole number of at least 1" >&2; exit 2 ;; esac
[ ! -d "$out" ] || { echo "--out $out is a directory: give a file" >&2; exit 2; }
case $tcg in multi | single) ;; *) echo "--tcg-thread is multi or single" >&2; exit 2 ;; esac
mkdir -p "$(dirname "$out")"
[ -s "$out" ] || printf 'date\tkernel\tcpu\ttcg\tseconds\tpassed\tfailed\tsignal_deaths\tevidence\n' >"$out"
crashes_dir=${SYNPLUG_VM_CACHE:-$REPO/.cache/vm}/crashes
npm run build >/dev/null 2>&1 || { echo "build failed" >&2; exit 1; }
deaths_total=0 runs_with_deaths=0 runs_with_evidence=0
for i in $(seq 1 "$runs"); do
    log=$(mktemp)
    before=$(ls -1 "$crashes_dir" 2>/dev/null | sort)
    t0=$(date +%s)
    flock /tmp/synplug-vm.lock env SYNPLUG_SKIP_BUILD=1 SYNPLUG_KERNELS="$kernel" SYNPLUG_KERNEL="$kernel" SYNPLUG_VM_CPU="$cpu" \
        SYNPLUG_VM_TCG_THREAD="$tcg" bash scripts/vm/test-kernel.sh "$@" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - t0))
    after=$(ls -1 "$crashes_dir" 2>/dev/null | sort)
    evidence=$(comm -13 <(echo "$before") <(echo "$after") | paste -sd, -)
    read -r passed failed < <(sed -n 's/^kernel tests: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)
    # a file killed by a signal: ava's own line, first run or the re-run
    died=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -Eo '[^ ]+ exited due to SIG[A-Z0-9]+' | paste -sd, -)
    n=0; [ -z "$died" ] || n=$(echo "$died" | tr ',' '\n' | wc -l)
    deaths_total=$((deaths_total + n)); [ "$n" = 0 ] || runs_with_deaths=$((runs_with_deaths + 1))
    # a crash of a process ava does not own (the CLI a test spawns, where koffi runs) shows as a failed test
    # and kept evidence, not as a signal death of a test file: counted apart
    [ -z "$evidence" ] || runs_with_evidence=$((runs_with_evidence + 1))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$kernel" "$cpu" "$tcg" "$secs" \
        "${passed:-?}" "${failed:-?}" "${died:-0}" "${evidence:--}" >>"$out"
    echo "run $i/$runs: ${secs}s, exit $rc, ${passed:-?} passed, ${failed:-?} failed, signal deaths: ${died:-none}, evidence: ${evidence:-none}"
    [ "$n" = 0 ] && [ "$rc" = 0 ] && rm -f "$log" || echo "    log kept: $log"
done
echo "summary: $runs runs ($kernel, -cpu $cpu, tcg $tcg): $runs_with_deaths with a signal death of a test file, $deaths_total such deaths in all; $runs_with_evidence with crash evidence kept (any process: see .cache/vm/crashes/)"
