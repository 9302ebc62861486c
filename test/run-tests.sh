#!/usr/bin/env bash
# Runs test programs (cmocka binaries or shell scripts), one line per program, then the totals.
# A program that exits 0 passed; one whose output says "SKIP" anywhere is counted as skipped too.
set -u
pass=0 fail=0 skip=0 failed=()
for t in "$@"; do
    log=$(mktemp)
    start=$EPOCHREALTIME
    if [[ $t == *.sh ]]; then bash "$t" >"$log" 2>&1; else "$t" >"$log" 2>&1; fi
    rc=$?
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    name=${t##*/}
    if [ $rc -ne 0 ]; then
        fail=$((fail + 1)); failed+=("$name")
        printf 'FAIL  %-40s (%ss, exit %d)\n' "$name" "$secs" "$rc"
        sed 's/^/      | /' "$log" | tail -40
    else
        pass=$((pass + 1))
        cases=$(grep -Eo '\[  PASSED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' | tail -1)
        skipped=$(grep -Eo '\[  SKIPPED \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' | tail -1)
        note=""
        if grep -q 'SKIP' "$log"; then
            skip=$((skip + 1))
            note=" — skipped: $(grep -m1 -o 'SKIP.*' "$log")"
        fi
        printf 'ok    %-40s (%ss%s%s)%s\n' "$name" "$secs" "${cases:+, $cases cases}" \
            "${skipped:+, $skipped skipped}" "$note"
    fi
    rm -f "$log"
done
echo "---- $pass passed, $fail failed ($skip with skips) of $(( pass + fail )) test programs"
[ $fail -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
