#!/usr/bin/env bash
# Readouts that agree with themselves (issue 41): every speedup readout shows the estimate it
# judges with the factor it means beside it ("-90.06% (10.06x slower)"), the p50 ratio only where
# labelled so; the host's timer named as the host's clock; the plot's label beside the estimate.
set -u
source "$(dirname "$0")/lib.sh"
[ -f "$FAKES/host_spin.so" ] || { echo "SKIP: the fake plugins are not built"; exit 0; }
G=(--backend host --plugin "$FAKES/host_spin.so" --shape 1,16,1,16 --quiet --max-time 0.6 --no-accuracy)

# ---- a variant 10x slower reads "10.NN x slower" beside about -90%, in every readout ----
check "a variant ten times slower" 0 "$S" compare "${G[@]}" --baseline 'spin[us=100]' \
    --variant 'spin[us=1000]' --json "$TMP/slow.json" --markdown "$TMP/slow.md" --csv "$TMP/slow.csv"
printf "%s\n" "$out" > "$TMP/slow.txt"
FACTOR='
import csv, json, re, sys
r = json.load(open(sys.argv[1])); v = r["variants"][1]
est = v["speedup_interval_percent"]["estimate"]
want = 1 + est / 100                # the baseline over the variant, slower: below 1
assert 1 / want > 2 and v["verdict"] == "slower", (est, v["verdict"]) # 10x, on a loaded host
for name in sys.argv[2:4]:          # the table and the markdown
    line = next(l for l in open(name) if "spin[us=1000," in l and "%" in l)
    m = re.search(r"([-+][0-9.]+)% \(([0-9.]+)\u00d7 (faster|slower)\) \[", line)
    assert m, line
    assert abs(float(m.group(1)) - est) < 0.006, (m.group(1), est)
    assert m.group(3) == "slower" and abs(float(m.group(2)) - 1 / want) < 0.006, (line, 1 / want)
row = list(csv.DictReader(open(sys.argv[4])))[1]
assert row["speedup_source"] == "paired_estimate", row
assert abs(float(row["speedup_times"]) - want) < 1e-6 * want, (row["speedup_times"], want)
assert abs(float(row["speedup_percent"]) - est) < 1e-6 * abs(est), row
'
py "table, markdown and CSV: the estimate and its factor, the same numbers" "$FACTOR" \
    "$TMP/slow.json" "$TMP/slow.txt" "$TMP/slow.md" "$TMP/slow.csv"

# ---- without an interval (one round) the p50 ratio is labelled as such ----
check "one round: no interval" 0 "$S" compare "${G[@]:0:6}" --no-accuracy --baseline 'spin[us=40]' \
    --variant 'spin[us=80]' --rounds 1 --iterations 3 --warmup 1 --csv "$TMP/one.csv"
contains "the table says it is the p50 ratio" "×"; contains "... labelled" ", p50 ratio)"
py "the CSV says so too" '
import csv, sys
row = list(csv.DictReader(open(sys.argv[1])))[1]
assert row["speedup_source"] == "p50_ratio" and row["speedup_low_percent"] == "", row
assert abs(float(row["speedup_times"]) - (1 + float(row["speedup_percent"]) / 100)) < 1e-6, row
' "$TMP/one.csv"

# ---- the plot: the label beside the estimate (the filled dot and its bar), not beside the hollow
# p50-ratio marker: a p50 ratio moved away from the interval took the label with it ----
py "a report whose p50 ratio lies far from its interval" '
import json, sys
r = json.load(open(sys.argv[1]))
r["variants"][1]["speedup_vs_baseline_percent"] = r["variants"][1]["speedup_interval_percent"]["estimate"] + 50
json.dump(r, open(sys.argv[2], "w"))
' "$TMP/slow.json" "$TMP/moved.json"
check "plot it" 0 "$S" plot "$TMP/moved.json" -o "$TMP/moved.svg" --layout "$TMP/moved.layout"
py "the label stands by the estimate, with its factor" '
import json, sys
l = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))["variants"][1]
p = next(p for p in l["panels"] if p["name"] == "speedup")
x0, x1, sc = p["box"][0], p["box"][2], p["scales"]["x"]
px = lambda s: x0 + (s - sc["lo"]) / (sc["hi"] - sc["lo"]) * (x1 - x0)
t = next(t for t in l["texts"] if t["group"] == "speedup" and "\u00d7 slower" in t["text"])
gap = lambda x: max(t["box"][0] - x, x - t["box"][2], 0)
est, p50 = px(v["speedup_interval_percent"]["estimate"]), px(v["speedup_vs_baseline_percent"])
assert gap(est) < gap(p50), (t, est, p50)
' "$TMP/moved.layout" "$TMP/moved.json"
check "plot --help: the distribution panel's scales as the title says them" 0 "$S" plot --help
contains "one scale for an A/A" "all on one scale"
contains "else each its own" "else each variant on its"

# ---- the host's timer has one name: its clock, in the header, the notes and the JSON (the notes
# and the JSON said "event" under "timed by host monotonic clock") ----
check "an event-timed host comparison" 0 "$S" compare "${G[@]}" --baseline 'spin[us=1500]' \
    --variant 'spin[us=1500]' --timer event --json "$TMP/host.json"
check "show it" 0 "$S" show "$TMP/host.json"
contains "the header names the host's clock" "timed by host monotonic clock"
contains "the notes name the same" ": timer host, 1 call per sample"
grep -q "timer event" <<<"$out" && fail "the notes still say 'timer event'" "$out"
py "the JSON says host" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["measurement"]["sample_clock"] == "host monotonic clock", r["measurement"]
assert all(v["measurement"]["timer"] == "host" for v in r["variants"]), [v["measurement"] for v in r["variants"]]
' "$TMP/host.json"

# ---- --json /dev/stdout with stdout redirected to a file: written in place through stdout, the
# table on stderr as for "-" (a temporary file renamed over the file replaced it, and whatever
# had been printed there was lost) ----
H=(--backend host --shape 1,32,1,32 --quiet --max-time 0.3)
"$S" compare "${H[@]}" --json /dev/stdout > "$TMP/stdout.txt" 2> "$TMP/stderr.txt"
rc=$?
[ "$rc" -le 1 ] && echo "ok   --json /dev/stdout > FILE: ran" || fail "--json /dev/stdout > FILE: exit $rc" "$(cat "$TMP/stderr.txt")"
py "the file holds the report, the table went to stderr" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["variants"][0]["label"] == "reference", r["variants"][0]
t = open(sys.argv[2]).read()
assert "speedup [95% CI]" in t and "reference-mt" in t, t
' "$TMP/stdout.txt" "$TMP/stderr.txt"
{ echo "a line before"; "$S" compare "${H[@]}" --markdown /dev/stdout --json "$TMP/j.json" 2>/dev/null; } > "$TMP/both.txt"
py "what was written before stays, the markdown after it" '
import sys
t = open(sys.argv[1]).read()
assert t.startswith("a line before\n# sagerun comparison"), t[:200]
' "$TMP/both.txt"

# ---- a baseline that crashes: the report is written with its failure recorded, and nobody is
# told "the others were measured again without it" (nothing is, without a baseline); it said so
# and wrote no report ----
if [ -f "$FAKES/fault_segv_run.so" ]; then
    check "a baseline that crashes" 1 env SAGERUN_TEST_FAULTS=1 "$S" compare --backend host \
        --shape 1,32,1,32 --plugin "$FAKES/fault_segv_run.so" --baseline fault-segv-run \
        --variant reference --max-time 0.5 --json "$TMP/fb.json"
    contains "says nothing else is measured" "; nothing else is measured without the baseline: the report records its failure"
    contains "... naming it" "fault-segv-run failed: warm-up run: " # crashed, or under ASan its report
    grep -q "measured again without it" <<<"$out" && fail "still says the others were measured again" "$out"
    py "the report holds the baseline's failure and the others' reason" '
import json, sys
r = json.load(open(sys.argv[1]))
b, v = r["variants"]
assert b["is_baseline"] and b["failure"].startswith("warm-up run: "), b
assert b["failure_phase"] == "warmup", b
assert v["failure"] == "not measured: the baseline fault-segv-run failed", v
assert r["measurement"]["ended_by"] == "baseline" and r["rounds_completed"] == 0, r["measurement"]
assert not any("max-rounds" in w for w in r["warnings"]), r["warnings"]
' "$TMP/fb.json"
fi
# one that returns an error, in the child and in-process: the same (an error, and no report)
if [ -f "$FAKES/fault_error_run.so" ]; then
    for mode in --in-process ""; do
        check "a baseline that fails ${mode:-in the child}" 1 env SAGERUN_TEST_FAULTS=1 "$S" compare \
            --backend host --shape 1,32,1,32 --plugin "$FAKES/fault_error_run.so" $mode \
            --baseline fault-error-run --variant reference --max-time 0.5 --json "$TMP/fe.json"
        contains "... the others not measured, said" "reference failed: not measured: the baseline fault-error-run failed"
        py "... its report records why" '
import json, sys
b, v = json.load(open(sys.argv[1]))["variants"]
assert "the fault plugin fails on purpose" in b["failure"] and b["failure_phase"] == "warmup", b
assert v["failure"] == "not measured: the baseline fault-error-run failed", v
' "$TMP/fe.json"
    done
fi

finish
