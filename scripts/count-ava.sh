#!/usr/bin/env bash
# count-ava.sh LOG -> prints "PASSED FAILED" for an ava run's output.
# ava prints "N tests passed" only when nothing failed, so otherwise passes
# are counted from the per-test "✔" lines. Known failures (test.failing that
# failed) count as passed; failed tests and hooks, uncaught exceptions,
# unhandled rejections, timed-out tests, and skipped or todo tests (nothing
# may be skipped here) count as failed.
sed 's/\x1b\[[0-9;]*m//g; s/\r$//' "$1" | awk '
    /^ *[0-9]+ tests? passed/          { summary_passed += $1; have_summary = 1 }
    /^ *[0-9]+ known failures?$/       { known += $1 }
    /^ *[0-9]+ tests? failed/          { failed += $1 }
    /^ *[0-9]+ hooks? failed/          { failed += $1 }
    /^ *[0-9]+ uncaught exceptions?$/  { failed += $1 }
    /^ *[0-9]+ unhandled rejections?$/ { failed += $1 }
    /^ *[0-9]+ tests? remained pending/ { failed += $1 }
    /^ *[0-9]+ tests? skipped/         { failed += $1 }
    /^ *[0-9]+ tests? todo/            { failed += $1 }
    /^ *✔ /                            { ticks++ }
    END {
        passed = (have_summary && failed == 0) ? summary_passed + known : ticks + 0
        printf "%d %d\n", passed, failed
    }'
