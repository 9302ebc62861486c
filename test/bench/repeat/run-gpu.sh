#!/usr/bin/env bash
# Issue 41 on a device: an identical small sweep run twice with --repeat 3 and diffed must show
# no regression; the same with a 3% slowdown injected into the variant must find it.
#
# The variant is the baseline's own call plus a fraction read from the environment
# (SAGERUN_TEST_SLOW_FRACTION), so its label is the same in every sweep and only its time moves:
#   cuda: gpu-spin (baseline) against gpu-spin-slowed, each spinning SPIN_NS on the device;
#   host: spin[us=SPIN_US] against spin-slowed[us=SPIN_US] (busy-waits; a tiny shape).
# Then the old sweep's three runs calibrate the machine (diff --calibrate), and one run per side
# is diffed to show the note it gives.
#
# usage: [BACKEND=cuda|host] [OUT=DIR] [SAGERUN=bin/sagerun] [FAKES=build/test-plugins]
#        [SPIN_NS=200000] [SPIN_US=300] [SLOW=0.03] [MAX_TIME=2] test/bench/repeat/run-gpu.sh
# exit 0 when both hold; 1 otherwise (each check says PASS or FAIL).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BACKEND=${BACKEND:-cuda}
S=${SAGERUN:-$ROOT/build/bin/sagerun}
FAKES=${FAKES:-$ROOT/build/test-plugins}
OUT=${OUT:-$(mktemp -d)}
SLOW=${SLOW:-0.03}
MAX_TIME=${MAX_TIME:-2}
mkdir -p "$OUT"
export SAGERUN_CALIBRATION=$OUT/calibration.json SAGERUN_TEST_SPIN_NS=${SPIN_NS:-200000}

if [ "$BACKEND" = host ]; then
    SHAPES='[1, 16, 1, 16]'
    ARGS=(--backend host --plugin "$FAKES/host_spin.so" --plugin "$FAKES/host_spin_slowed.so"
          --baseline "spin[us=${SPIN_US:-300}]" --variant "spin-slowed[us=${SPIN_US:-300}]")
else
    SHAPES='[1, 1024, 8, 128]'
    ARGS=(--plugin "$FAKES/gpu_spin.so" --plugin "$FAKES/gpu_spin_slowed.so"
          --baseline gpu-spin --variant gpu-spin-slowed)
fi
cat > "$OUT/sweep.json" <<JSON
{"name": "repeat-check", "description": "issue 41: diff across runs (test/bench/repeat)",
 "workloads": [{"name": "a", "shape": $SHAPES}, {"name": "b", "shape": $SHAPES}]}
JSON

fails=0
verdict() { # verdict NAME CONDITION...
    local name=$1; shift
    if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
sweep() { # sweep DIR FRACTION
    echo "== sweep --repeat 3 into $1 (SAGERUN_TEST_SLOW_FRACTION=$2)"
    rm -rf "$1"
    SAGERUN_TEST_SLOW_FRACTION=$2 "$S" sweep "$OUT/sweep.json" "${ARGS[@]}" --max-time "$MAX_TIME" \
        --quiet --repeat 3 --out-dir "$1" >/dev/null
}
sweep "$OUT/old" 0 && sweep "$OUT/same" 0 && sweep "$OUT/slow" "$SLOW" ||
    { echo "FAIL a sweep did not run"; exit 1; }

"$S" diff "$OUT/old/repeats.json" "$OUT/same/repeats.json" --json "$OUT/same-diff.json" \
    > "$OUT/same-diff.txt"
rc=$?
cat "$OUT/same-diff.txt"
verdict "identical sweeps, 3 runs each: no regression (exit $rc)" test "$rc" -eq 0

"$S" diff "$OUT/old/repeats.json" "$OUT/slow/repeats.json" --json "$OUT/slow-diff.json" \
    > "$OUT/slow-diff.txt"
rc=$?
cat "$OUT/slow-diff.txt"
found=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print(sum(1 for r in rows if r["regression"] and r["verdict"] == "slower"))' "$OUT/slow-diff.json")
verdict "a ${SLOW} slowdown injected: found at both points (exit $rc, $found slower rows)" \
    test "$rc" -eq 4 -a "$found" -eq 2

echo "== calibration from the old sweep's runs, then one run per side"
"$S" diff --calibrate "$OUT/old/repeats.json"
"$S" diff "$OUT/old/repeat-1/summary.json" "$OUT/same/repeat-1/summary.json"
echo "files in $OUT"
exit $((fails > 0))
