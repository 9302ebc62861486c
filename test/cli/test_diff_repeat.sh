#!/usr/bin/env bash
# Comparisons across runs (issue 41): compare/sweep --repeat N (N processes, their files and an
# index), diff of replicates with the process as the unit, diff's readouts (compare's sign,
# "N.NN× slower", never nan), its gates (exit 5) and the calibration of one run per side.
# (--json=F and --out-dir=D: lib.sh's schema check keeps only "--json F" reports, and an index
# is not one.)
set -u
source "$(dirname "$0")/lib.sh"
export SAGERUN_CALIBRATION=$TMP/calibration.json
SPIN=(--backend host --shape 1,16,1,16 --no-accuracy --plugin "$FAKES/host_spin.so"
      --plugin "$FAKES/host_spin_slowed.so" --baseline 'spin[us=300]'
      --variant 'spin-slowed[us=300]' --schedule fixed --rounds 30 --iterations 3 --warmup 1 --quiet)

check "compare --repeat 3" 0 "$S" compare "${SPIN[@]}" --repeat 3 --json="$TMP/old.json"
contains "progress per repeat" "compare: repeat 2 of 3 ($TMP/old.r2.json)"
py "the index names the three runs' reports, each a report" '
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["sagerun_repeats"] == 1 and d["command"] == "compare" and d["repeat"] == 3, d
assert [(r["repeat"], r["file"], r["exit_status"]) for r in d["runs"]] == \
    [(k, "old.r%d.json" % k, 0) for k in (1, 2, 3)], d["runs"]
for k in (1, 2, 3):
    assert "variants" in json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "old.r%d.json" % k)))' "$TMP/old.json"
py "the index validates against schema/repeats.schema.json" '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))' \
    "$ROOT/schema/repeats.schema.json" "$TMP/old.json"
check "the same, 10% slower (SAGERUN_TEST_SLOW_FRACTION)" 0 env SAGERUN_TEST_SLOW_FRACTION=0.10 \
    "$S" compare "${SPIN[@]}" --repeat=3 --json="$TMP/slow.json" --csv "$TMP/slow.csv"
[ -f "$TMP/slow.r3.csv" ] && echo "ok   --csv per repeat" || fail "--csv per repeat" "$(ls "$TMP")"
(cd "$TMP" && "$S" compare "${SPIN[@]}" --repeat 2 --json=dash.json --markdown - >"$TMP/dash.md" 2>/dev/null)
[ "$(grep -c '^# sagerun comparison' "$TMP/dash.md")" -eq 2 ] && [ ! -e "$TMP/-.r1" ] &&
    echo "ok   --markdown - : each run's on stdout" || fail "--markdown -" "$(ls "$TMP"; head "$TMP/dash.md")"

check "3 runs against 3: the injected slowdown is a regression" 4 "$S" diff "$TMP/old.json" \
    "$TMP/slow.json" --json "$TMP/d.json"
grep -E "^spin-slowed.* -([7-9]|1[0-2])\.[0-9]+% \[-[0-9.]+, -[0-9.]+\] +1\.(0[89]|1[0-9])× slower +3/3 +slower .*SLOWER" \
    <<<"$out" >/dev/null && echo "ok   compare's sign, 1.1x slower, 3/3 runs" || fail "the row" "$out"
py "diff --json: the runs and the judged estimate" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["relative"] is True and d["regression"] is True and d["gate"] is False, d
row = next(r for r in d["rows"] if r["variant"].startswith("spin-slowed"))
iv = row["speedup_interval_percent"]
assert iv["old_runs"] == iv["new_runs"] == 3 and -12 < iv["estimate"] < -7, row
assert row["verdict"] == "slower" and row["regression"], row' "$TMP/d.json"
check "3 runs against themselves" 0 "$S" diff "$TMP/old.json" "$TMP/old.json"
grep -E "^spin-slowed.* \+0\.00% .* 3/3 +(same|ambiguous) " <<<"$out" >/dev/null &&
    echo "ok   +0.00% from 3 runs a side, never slower" || fail "3 runs against themselves" "$out"

# gates: exit 5 where no regression but a gate is not met; a regression (4) comes first
check "--require-faster 1 on an A/A" 5 "$S" diff "$TMP/old.json" "$TMP/old.json" --require-faster 1
contains "the row names the gate" "GATE --require-faster"
check "--fail-if-slower=2 under a threshold of 50%" 5 "$S" diff --threshold 50 \
    --fail-if-slower=2 "$TMP/old.json" "$TMP/slow.json"
contains "the row names the gate" "GATE --fail-if-slower"
check "--fail-if-slower=20: met" 0 "$S" diff --threshold 50 --fail-if-slower=20 "$TMP/old.json" \
    "$TMP/slow.json"
check "a regression is exit 4 with a gate too" 4 "$S" diff --fail-if-slower "$TMP/old.json" \
    "$TMP/slow.json"
check "--require-faster x" 2 "$S" diff --require-faster x "$TMP/old.json" "$TMP/old.json"
check "--help: exit 5" 0 "$S" diff --help
contains "documented" "5  no regression, but a gate is not met"

# --absolute: by time (a 10% slower variant is slower by time too)
check "--absolute" 4 "$S" diff --absolute "$TMP/old.json" "$TMP/slow.json" --json "$TMP/abs.json"
py "relative false in the JSON" 'import json, sys; assert json.load(open(sys.argv[1]))["relative"] is False' "$TMP/abs.json"

# a failed repeat costs only itself: its number said, the others kept, the index holds its exit
mkdir -p "$TMP/part.r2.json"
check "a repeat that fails" 1 "$S" compare "${SPIN[@]}" --repeat 3 --json="$TMP/part.json"
contains "named" "repeat 2 of 3 failed (exit 1); the others go on"
py "the index: runs 1 and 3 written, 2 failed" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["exit_status"] for r in d["runs"]] == [0, 1, 0], d' "$TMP/part.json"
check "diff reads the runs that have a report" 0 "$S" diff "$TMP/part.json" "$TMP/old.json"
contains "says which is left out" "runs[1] (repeat 2, exit 1): no file part.r2.json: left out"
contains "2 runs against 3" "2/3"

# a stop signal to the repeating process: the running repeat ends with its rounds so far (its
# report written), no other starts, the index is written, exit 143
"$S" compare "${SPIN[@]}" --rounds 3000 --repeat 3 --json="$TMP/stop.json" \
    >/dev/null 2>"$TMP/stop.err" &
pid=$!
sleep 1.5
kill -TERM $pid
wait $pid
rc=$?
out=$(cat "$TMP/stop.err")
[ $rc -eq 143 ] && echo "ok   SIGTERM: exit 143" || fail "SIGTERM: exit $rc, expected 143" "$out"
contains "says where it stopped" "stopped after repeat 1 of 3"
contains "the index of the runs made" "1 of 3 runs, index"
py "the index holds the interrupted run, its report written" '
import json, os, sys
d = json.load(open(sys.argv[1]))
assert [(r["repeat"], r["exit_status"]) for r in d["runs"]] == [(1, 143)], d
assert json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "stop.r1.json")))["complete"] is False' "$TMP/stop.json"

check "--repeat without --json" 2 "$S" compare "${SPIN[@]}" --repeat 2
contains "says what it needs" "--repeat needs --json FILE"
check "--repeat 0" 2 "$S" compare "${SPIN[@]}" --repeat 0 --json="$TMP/z.json"
check "--repeat 101" 2 "$S" compare "${SPIN[@]}" --repeat 101 --json="$TMP/z.json"
contains "says the range" "expected an integer from 1 to 100"

# sweep --repeat: each repeat a whole sweep, the index DIR/repeats.json
SWEEP=$ROOT/test/data/sweep-host.json
check "sweep --repeat 2" 0 "$S" sweep "$SWEEP" --backend host --quiet --repeat 2 --out-dir="$TMP/sw"
[ -f "$TMP/sw/repeat-1/summary.json" ] && [ -f "$TMP/sw/repeat-2/n96.json" ] &&
    echo "ok   a folder per repeat" || fail "a folder per repeat" "$(find "$TMP/sw")"
py "the sweep index validates too" '
import json, sys, jsonschema
idx = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(idx)
assert idx["command"] == "sweep" and [r["file"] for r in idx["runs"]] == \
    ["repeat-1/summary.json", "repeat-2/summary.json"], idx' \
    "$ROOT/schema/repeats.schema.json" "$TMP/sw/repeats.json"
check "two sweeps' repeats diffed point by point" 0 "$S" diff "$TMP/sw/repeats.json" \
    "$TMP/sw/repeats.json"
[ "$(grep -cE '^(n32|1x64x2x64|n96) .* 2/2 ' <<<"$out")" -eq 3 ] &&
    echo "ok   every point's variant judged from 2 runs a side" || fail "2 runs a side" "$out"
check "a repeat index against one sweep" 0 "$S" diff "$TMP/sw/repeats.json" "$TMP/sw/repeat-1/summary.json"
check "sweep --repeat without --out-dir" 2 "$S" sweep "$SWEEP" --backend host --repeat 2
contains "says what it needs" "--repeat needs --out-dir DIR"
check "a sweep index against a report index" 1 "$S" diff "$TMP/sw/repeats.json" "$TMP/old.json"

# one run per side: said plainly, with X from the calibration of the device where there is one
check "one run per side, no calibration" 0 "$S" diff "$TMP/old.r1.json" "$TMP/old.r2.json"
contains "says it cannot tell" "one run per side: the intervals hold each run's rounds only"
check "diff --calibrate" 0 "$S" diff --calibrate "$TMP/old.json"
contains "the device" "calibration of host:"
py "stored per device" '
import json, sys
d = json.load(open(sys.argv[1]))["devices"]
(key, e), = d.items()
assert key.startswith("host:") and e["runs"] == 3 and e["between_run_sd_percent"] > 0, d' "$SAGERUN_CALIBRATION"
check "one run per side, calibrated" 0 "$S" diff "$TMP/old.r1.json" "$TMP/old.r2.json"
contains "says X" "one run per side: a change under"
contains "cannot be told" "cannot be told from run-to-run movement on this machine"
check "--between-run-sd 0: none" 0 "$S" diff --between-run-sd 0 "$TMP/old.r1.json" "$TMP/old.r2.json"
contains "uncalibrated" "is not calibrated"
check "--calibrate on a report" 1 "$S" diff --calibrate "$TMP/old.r1.json"
contains "says why" "is not a repeat index"
check "--calibrate on 2 runs" 1 "$S" diff --calibrate "$TMP/part.json"
contains "says why" "2 runs with a file: a calibration needs 3 or more"

# rounds of 5e-324 s (a subnormal: its logs overflow) printed "-100.00% [-nan, -nan]"; and
# rounds of 1e300 s "+inf%": a time must be a normal positive number, an interval finite
python3 - "$TMP/old.r1.json" "$TMP" <<'PY'
import json, sys
src, tmp = sys.argv[1:3]
for name, t in (("tiny", 5e-324), ("huge", 1e300)):
    r = json.load(open(src))
    for rd in r["variants"][1]["rounds"]:
        rd["p50_s"] = t
    json.dump(r, open(f"{tmp}/{name}.json", "w"))
PY
for kind in tiny huge; do
    for mode in --relative --absolute; do
        check "$kind rounds ($mode): no interval" 0 "$S" diff $mode "$TMP/old.r1.json" "$TMP/$kind.json"
        grep -qiE "nan|inf" <<<"$out" && fail "$kind $mode: nan or inf shown" "$out" || echo "ok   no nan, no inf"
        contains "says why" "not judged: a round without a usable time (p50 rule)"
    done
done
finish
