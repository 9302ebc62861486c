#!/usr/bin/env bash
# diff judges statistically, on two reports or two sweeps (point by point): an injected 5%
# regression on one point is caught (exit 4, the point named, in text, markdown and JSON), an
# identical or re-run sweep passes; show and plot take a sweep summary.
set -u
source "$(dirname "$0")/lib.sh"
SWEEP=$ROOT/test/data/sweep-host.json

check "sweep A" 0 "$S" sweep "$SWEEP" --backend host --quiet --out-dir "$TMP/a"
# its rounds made steady (each variant's p50 with a 0.1% jitter, alike for every variant of a
# round): two runs share no rounds, so diff takes each run's rounds unpaired, and a shared CPU's
# spread would hide the 5% below
python3 - "$TMP"/a/*.json <<'PY0'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    if "variants" not in r:
        continue
    for v in r["variants"]:
        p = v["timing"]["p50_s"]
        for k, rd in enumerate(v["rounds"]):
            rd["p50_s"] = p * (1 + 0.001 * (k % 3 - 1))
    json.dump(r, open(path, "w"))
PY0
check "a sweep against itself" 0 "$S" diff "$TMP/a/summary.json" "$TMP/a/summary.json"
contains "every point compared" "n96"
# A re-run: two runs do not share their drift (the rounds of one are not interleaved with the
# other's), so on a shared CPU a real re-run can differ beyond any threshold (this host has shown
# +55% on one point between two sweeps a second apart): the re-run must be judged (exit 0 or 4,
# every point compared), and the identical sweep above is the one that must pass.
check "sweep R1" 0 "$S" sweep "$SWEEP" --backend host --quiet --variant reference --rounds 4 --out-dir "$TMP/r1"
check "sweep R2 (a re-run)" 0 "$S" sweep "$SWEEP" --backend host --quiet --variant reference --rounds 4 --out-dir "$TMP/r2"
out=$("$S" diff --threshold 25 "$TMP/r1/summary.json" "$TMP/r2/summary.json" 2>&1); rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 4 ]; } && [ "$(grep -cE '^(n32|1x64x2x64|n96) ' <<<"$out")" -eq 6 ] \
    && echo "ok   a re-run is judged point by point (exit $rc)" || fail "a re-run is judged: exit $rc" "$out"

# one point of a copy 5% slower in every sample of one variant
cp -r "$TMP/a" "$TMP/slow"
python3 - "$TMP/slow/n96.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = next(x for x in r["variants"] if x["label"] == "reference-mt")
scale = lambda t: {k: (x * 1.05 if k.endswith("_s") else x) for k, x in t.items()}
v["timing"] = scale(v["timing"])
v["rounds"] = [scale(t) for t in v["rounds"]]
v["samples_s"] = [[s * 1.05 for s in rd] for rd in v["samples_s"]]
json.dump(r, open(sys.argv[1], "w"))
PY
check "a 5% regression on one point" 4 "$S" diff "$TMP/a/summary.json" "$TMP/slow/summary.json" \
    --json "$TMP/d.json" --markdown "$TMP/d.md"
grep -E "^n96 +reference-mt .* -4\.76% \[-4\.76, -4\.76\] +1\.05× slower +1/1 +slower .*SLOWER$" <<<"$out" >/dev/null \
    && echo "ok   the point and variant named: -4.76% (compare's sign), 1.05× slower" || fail "the point and variant named" "$out"
[ "$(grep -c SLOWER <<<"$out")" -eq 1 ] && echo "ok   only that row is a regression" || fail "only that row" "$out"
py "diff --json: the rows, the regressing one flagged" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sagerun_diff"] == 1 and d["regression"] is True and d["threshold_percent"] == 1
bad = [r for r in d["rows"] if r["regression"]]
assert [(r["point"], r["variant"]) for r in bad] == [("n96", "reference-mt")], bad
assert bad[0]["verdict"] == "slower" and abs(bad[0]["p50_change_percent"] - 5) < 1e-9
assert abs(bad[0]["speedup_interval_percent"]["estimate"] - (100 / 1.05 - 100)) < 1e-6
assert len(d["rows"]) == 6 and all(r["verdict"] in ("same", None) for r in d["rows"] if not r["regression"])' "$TMP/d.json"
check "diff --csv" 4 "$S" diff "$TMP/a/summary.json" "$TMP/slow/summary.json" --csv "$TMP/d.csv"
py "diff --csv: one row per point and variant, the regression flagged" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 6, rows
bad = [(r["point"], r["variant"]) for r in rows if r["regression"] == "true"]
assert bad == [("n96", "reference-mt")], bad
r = next(r for r in rows if r["point"] == "n96" and r["variant"] == "reference-mt")
assert r["verdict"] == "slower" and abs(float(r["p50_change_percent"]) - 5) < 1e-6' "$TMP/d.csv"
grep -q "^| n96 | reference-mt | .* | slower | yes -> yes | SLOWER |$" "$TMP/d.md" \
    && echo "ok   diff --markdown: the row" || fail "diff --markdown" "$(cat "$TMP/d.md")"
check "a higher threshold lets 5% pass" 0 "$S" diff --threshold 6 "$TMP/a/summary.json" "$TMP/slow/summary.json"

# two reports: the same judgement
check "two reports, one 5% slower" 4 "$S" diff "$TMP/a/n96.json" "$TMP/slow/n96.json"
contains "no point column for reports" "reference-mt"
check "a report against itself" 0 "$S" diff "$TMP/a/n96.json" "$TMP/a/n96.json"

# --relative: a point where every variant ran 20% slower (the baseline too) cancels, and the
# baseline's row says that the runs' conditions differ there; a 5% move of one variant alone is
# not such a point
cp -r "$TMP/a" "$TMP/loaded"
python3 - "$TMP/loaded/n96.json" <<'PY2'
import json, sys
r = json.load(open(sys.argv[1]))
scale = lambda t: {k: (x * 1.2 if k.endswith("_s") else x) for k, x in t.items()}
for v in r["variants"]:
    v["timing"] = scale(v["timing"])
    v["rounds"] = [scale(t) for t in v["rounds"]]
    v["samples_s"] = [[s * 1.2 for s in rd] for rd in v["samples_s"]]
json.dump(r, open(sys.argv[1], "w"))
PY2
check "--relative: a point 20% slower for every variant" 0 "$S" diff --relative \
    "$TMP/a/summary.json" "$TMP/loaded/summary.json" --json "$TMP/loaded.json"
py "--relative: that point's baseline says the conditions differ, no other row does" '
import json, sys
d = json.load(open(sys.argv[1]))
said = [(r["point"], r["variant"]) for r in d["rows"] if "conditions differ" in r["finding"]]
base = next(r for r in d["rows"] if r["point"] == "n96" and "the baseline" in r["finding"])
assert said == [("n96", base["variant"])], said
assert "it moved +20.0% between the runs" in base["finding"], base["finding"]
assert not d["regression"], d["rows"]' "$TMP/loaded.json"
check "--relative: one variant 5% slower" 4 "$S" diff --relative "$TMP/a/summary.json" \
    "$TMP/slow/summary.json"
grep -q "conditions differ" <<<"$out" && fail "a 5% move of one variant is not a change of conditions" "$out" \
    || echo "ok   a 5% move of one variant does not say the conditions differ"

# a point gone from the new sweep
cp -r "$TMP/a" "$TMP/gone"
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); s['workloads'] = s['workloads'][:2]
json.dump(s, open(sys.argv[1], 'w'))" "$TMP/gone/summary.json"
check "a point missing from new" 4 "$S" diff "$TMP/a/summary.json" "$TMP/gone/summary.json"
contains "names it" "MISSING in new"
# a point that ran in new (its row names a report) whose report is gone or does not read: an
# error, as on the old side (it was exit 4, a regression, on the new side only)
rm "$TMP/gone/n32.json"
check "a point's report missing from new" 1 "$S" diff "$TMP/a/summary.json" "$TMP/gone/summary.json"
contains "names the point and the file" "workload n32: $TMP/gone/n32.json: No such file or directory"
echo '{}' > "$TMP/gone/n32.json"
check "a point's report unreadable in new" 1 "$S" diff "$TMP/a/summary.json" "$TMP/gone/summary.json"
contains "names the point and the file" "workload n32: $TMP/gone/n32.json: not a report: no 'metadata', no 'variants'"
# a point that failed in new (no report): that is the regression
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); w = s['workloads'][0]; w['status'] = 'error'; w['report'] = None
w['error'] = 'compare exited 1'; json.dump(s, open(sys.argv[1], 'w'))" "$TMP/gone/summary.json"
check "a point failed in new" 4 "$S" diff "$TMP/a/summary.json" "$TMP/gone/summary.json"
contains "says so" "NO REPORT in new: no report (status error: compare exited 1)"
check "a sweep against a report" 1 "$S" diff "$TMP/a/summary.json" "$TMP/a/n32.json"
contains "says what is wrong" "is a sweep summary and $TMP/a/n32.json is not"
# a file that does not read or is not JSON: that is the error, not "is not a sweep summary"
printf '{"metadata": {}, ' > "$TMP/trunc.json"
check "a sweep against a missing file" 1 "$S" diff "$TMP/a/summary.json" "$TMP/none.json"
contains "says it is missing" "$TMP/none.json: No such file or directory"
check "a missing file against a sweep" 1 "$S" diff "$TMP/none.json" "$TMP/a/summary.json"
contains "says it is missing" "$TMP/none.json: No such file or directory"
check "a sweep against a truncated file" 1 "$S" diff "$TMP/a/summary.json" "$TMP/trunc.json"
contains "says where it breaks" "$TMP/trunc.json:1:17: not valid JSON"

# the old side damaged: a gate that compared nothing must not pass (it did: exit 0, one stderr line)
cp -r "$TMP/a" "$TMP/oldbad"
echo garbage > "$TMP/oldbad/n32.json"
check "an old point's report unreadable" 1 "$S" diff "$TMP/oldbad/summary.json" "$TMP/a/summary.json"
contains "names the point and the file" "workloads[0] (n32): $TMP/oldbad/n32.json"
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); s['workloads'] = []
json.dump(s, open(sys.argv[1], 'w'))" "$TMP/oldbad/summary.json"
cp -r "$TMP/a" "$TMP/oldfailed"
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); w = s['workloads'][0]; w['status'] = 'error'; w['report'] = None
w['error'] = 'it failed'; w['variants'] = []
json.dump(s, open(sys.argv[1], 'w'))" "$TMP/oldfailed/summary.json"
check "an old point that failed (report null): skipped, the rest judged" 0 "$S" diff "$TMP/oldfailed/summary.json" "$TMP/a/summary.json"
check "an old sweep with no points" 1 "$S" diff "$TMP/oldbad/summary.json" "$TMP/a/summary.json"
contains "says so" "no point with a report to compare (0 workloads)"

# an output that is one of the reports a summary names: refused, the report intact
cp "$TMP/a/n32.json" "$TMP/n32.orig"
check "--json on a point's report" 1 "$S" diff "$TMP/a/summary.json" "$TMP/a/summary.json" --json "$TMP/a/n32.json"
contains "names both" "--json $TMP/a/n32.json is the report $TMP/a/n32.json: refusing to overwrite it"
cmp -s "$TMP/a/n32.json" "$TMP/n32.orig" && echo "ok   ... the report intact" || fail "the report was overwritten"

# a point only the new sweep has is said, not passed over in silence (not a regression)
cp -r "$TMP/a" "$TMP/fewer" && cp "$TMP/gone/summary.json" "$TMP/fewer/" # n96 left out, n32 kept
check "a point new in the new sweep" 0 "$S" diff "$TMP/fewer/summary.json" "$TMP/a/summary.json"
contains "says so" "n96: new in $TMP/a/summary.json, not in $TMP/fewer/summary.json (not compared)"
# ... and a point only one sweep has is a report the outputs must spare too: n96's report was
# overwritten by --json (missing in new) and by --csv (new in new), as only points in both were checked
cp "$TMP/a/n96.json" "$TMP/n96.orig"
check "--json on a report missing in new" 1 "$S" diff "$TMP/a/summary.json" "$TMP/fewer/summary.json" --json "$TMP/a/n96.json"
contains "names both" "--json $TMP/a/n96.json is the report $TMP/a/n96.json: refusing to overwrite it"
check "--csv on a report new in new" 1 "$S" diff "$TMP/fewer/summary.json" "$TMP/a/summary.json" --csv "$TMP/a/n96.json"
contains "names both" "--csv $TMP/a/n96.json is the report $TMP/a/n96.json: refusing to overwrite it"
cmp -s "$TMP/a/n96.json" "$TMP/n96.orig" && echo "ok   ... the report intact" || fail "n96's report was overwritten"
# the CSV carries every flag that makes the exit 4 (it had only "regression": a MISSING point and
# a lost byte-exactness read "regression,false")
check "diff --csv: a point missing" 4 "$S" diff "$TMP/a/summary.json" "$TMP/gone/summary.json" --csv "$TMP/gone.csv"
py "diff --csv: the missing rows say missing" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
miss = [r for r in rows if r["missing"] == "true"]
assert sorted(r["point"] for r in miss) == ["n32", "n96"], rows
assert all(r["lost_byte_exact"] == "false" and r["lost_acceptance"] == "false" for r in rows), rows' "$TMP/gone.csv"

# accepted by tolerance in old, "tol. FAIL" in new: a regression (diff passed it, exit 0)
W=(--backend host --plugin "$FAKES/host_work.so" --variant work --shape 1,64,1,64 --rounds 4
   --iterations 2 --warmup 0 --quiet)
check "compare: within tolerance" 0 "$S" compare "${W[@]}" --max-ulp 65535 --json "$TMP/tol-ok.json"
check "compare: beyond tolerance" 3 "$S" compare "${W[@]}" --max-ulp 1 --json "$TMP/tol-fail.json"
check "diff: lost acceptance" 4 "$S" diff "$TMP/tol-ok.json" "$TMP/tol-fail.json" --json "$TMP/tol.json" --csv "$TMP/tol.csv"
contains "the row says so" "LOST ACCEPTANCE (tol. FAIL)"
py "diff: lost_acceptance in JSON and CSV" '
import csv, json, sys
d = json.load(open(sys.argv[1]))
lost = [r["variant"] for r in d["rows"] if r["lost_acceptance"]]
assert lost == ["work"] and d["regression"], d["rows"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert [r["variant"] for r in rows if r["lost_acceptance"] == "true"] == ["work"], rows' "$TMP/tol.json" "$TMP/tol.csv"
check "diff: accepted in both" 0 "$S" diff "$TMP/tol-ok.json" "$TMP/tol-ok.json"
check "diff: failing in both is no change" 0 "$S" diff "$TMP/tol-fail.json" "$TMP/tol-fail.json"

# more notes than the diff keeps: the rest are counted, not dropped in silence
python3 - "$TMP/a" "$TMP/many" <<'PY3'
import json, os, shutil, sys
src, dst = sys.argv[1:3]
for side in ("old", "new"):
    os.makedirs(f"{dst}/{side}")
    s = json.load(open(f"{src}/summary.json"))
    w0 = s["workloads"][0]
    ws = []
    s["sweep"]["workloads"] = [f"p{i}" for i in range(20)]  # a summary's rows are its sweep's
    s["sweep"]["workload_count"] = 20
    for i in range(20):
        w = dict(w0, index=i, name=f"p{i}", report=f"p{i}.json")
        r = json.load(open(f"{src}/{w0['report']}"))
        if side == "new":
            r["complete"] = False
        json.dump(r, open(f"{dst}/{side}/p{i}.json", "w"))
        ws.append(w)
    s["workloads"] = ws
    json.dump(s, open(f"{dst}/{side}/summary.json", "w"))
PY3
out=$("$S" diff "$TMP/many/old/summary.json" "$TMP/many/new/summary.json" --json "$TMP/many.json" 2>&1)
[ "$(grep -c "^note: p[0-9]*: " <<<"$out")" -eq 16 ] && grep -q "^note: and 4 more notes$" <<<"$out" \
    && echo "ok   diff: notes beyond 16 are counted" || fail "diff: notes beyond 16" "$out"
py "diff --json: the count too" '
import json, sys
n = json.load(open(sys.argv[1]))["notes"]
assert len(n) == 17 and n[-1] == "and 4 more notes", n' "$TMP/many.json"

# show and plot on a summary
check "show a sweep summary" 0 "$S" show "$TMP/a/summary.json"
contains "the sweep table" "sweep host-tiny: 3 of 3 workloads"
check "plot a sweep summary: the sweep figure" 0 "$S" plot "$TMP/a/summary.json" -o "$TMP/s.svg"
check "the figure is well-formed SVG" 0 xmllint --noout "$TMP/s.svg"

# long names come back whole: a variant label and a point name of 300 characters (a plugin may
# register labels up to 1024; a summary's names are whatever its file says) in the JSON rows
mkdir -p "$TMP/long"
python3 - "$TMP/a/summary.json" "$TMP/long" <<'PY3'
import json, os, shutil, sys
src, out = sys.argv[1], sys.argv[2]
s = json.load(open(src))
point = "p" * 300
w = next(w for w in s["workloads"] if w["name"] == "n96")
r = json.load(open(os.path.join(os.path.dirname(src), w["report"])))
for v in r["variants"]:
    if v["label"] == "reference-mt":
        v["label"] = "v" * 300
json.dump(r, open(os.path.join(out, "long.json"), "w"))
w["name"], w["report"] = point, "long.json"
s["sweep"]["workloads"][w["index"]] = point  # a summary's rows are its sweep's
s["workloads"] = [w]
json.dump(s, open(os.path.join(out, "summary.json"), "w"))
PY3
check "diff of long names" 0 "$S" diff "$TMP/long/summary.json" "$TMP/long/summary.json" --json "$TMP/long/d.json"
py "diff --json: a 300-character point and label whole" '
import json, sys
d = json.load(open(sys.argv[1]))
assert {r["point"] for r in d["rows"]} == {"p" * 300}, {len(r["point"]) for r in d["rows"]}
assert "v" * 300 in [r["variant"] for r in d["rows"]], [len(r["variant"]) for r in d["rows"]]' "$TMP/long/d.json"

check "diff --help says how it judges" 0 "$S" diff --help
contains "the process as the unit" "per run, weighted by its own interval and the runs' spread"
contains "compare's sign" "(+ = NEW faster)"
contains "default threshold is compare's" "default 1, as compare's"

# runs of different lengths are judged on all their rounds: diff paired round k of old with round k
# of new and dropped the longer run's extra rounds in silence, so 20 rounds against 40 whose last 20
# were twice as slow read "+0.00% [+0.00, +0.00] same" beside a p50 59% higher (ten times as slow
# here: a loaded machine's spread, on top of the two modes, must not make it ambiguous)
# (the busy-wait plugin: a steady time on a loaded machine, where reference-mt's spread is wide)
check "a fixed 40-round run" 0 "$S" compare --backend host --shape 1,16,1,16 --no-accuracy \
    --plugin "$FAKES/host_spin.so" --baseline 'spin[us=100]' --variant 'spin[us=200]' \
    --schedule fixed --rounds 40 --iterations 1 --warmup 1 --quiet --json "$TMP/r40.json"
python3 - "$TMP/r40.json" "$TMP/first20.json" "$TMP/lateslow.json" <<'PY'
import json, statistics, sys
src, first, slow = sys.argv[1:4]
r = json.load(open(src))
a = json.loads(json.dumps(r))
a["rounds"] = a["rounds_completed"] = 20
for v in a["variants"]:
    v["rounds"], v["samples_s"] = v["rounds"][:20], v["samples_s"][:20]
    v["timing"]["count"] = sum(len(x) for x in v["samples_s"])
json.dump(a, open(first, "w"))
v = r["variants"][1]  # the variant: its last 20 rounds ten times as slow
for k in range(20, 40):
    v["rounds"][k] = {key: x * 10 if key.endswith("_s") else x for key, x in v["rounds"][k].items()}
    v["samples_s"][k] = [x * 10 for x in v["samples_s"][k]]
v["timing"]["p50_s"] = statistics.median(x for rd in v["samples_s"] for x in rd)
json.dump(r, open(slow, "w"))
PY
# (--absolute: by time, as this was written; relative, the ratio to a busy-wait baseline on a
# loaded 2-core host spreads by tens of percent)
check "20 rounds against 40, the last 20 ten times as slow" 4 "$S" diff --absolute "$TMP/first20.json" "$TMP/lateslow.json" --json "$TMP/uneven.json"
py "judged on all rounds of both: slower, 20 and 40 rounds" '
import json, sys
mt = json.load(open(sys.argv[1]))["rows"][1]
assert mt["verdict"] == "slower" and mt["regression"], mt
assert mt["speedup_interval_percent"]["rounds"] == 20 and mt["speedup_interval_percent"]["new_rounds"] == 40, mt' "$TMP/uneven.json"
# runs of one length are not paired round by round either (two processes share no rounds): a
# report against itself is +0.00 at the centre of both runs' spread, judged same
check "a report against itself" 0 "$S" diff --absolute "$TMP/r40.json" "$TMP/r40.json" --json "$TMP/self.json"
py "unpaired: +0.00 inside the rounds' spread, never slower" '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    iv = r["speedup_interval_percent"]
    assert iv["estimate"] == 0 and iv["low"] < 0 < iv["high"], r
    assert r["verdict"] in ("same", "ambiguous") and not r["regression"], r
    assert iv["new_rounds"] == 40 and iv["old_runs"] == iv["new_runs"] == 1, r' "$TMP/self.json"

# an old report with nothing measured: a gate that compared nothing must not pass (it passed: exit 0)
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['variants'] = []; json.dump(r, open(sys.argv[2], 'w'))
r = json.load(open(sys.argv[1]))
for v in r['variants']: v['timing']['count'] = 0
json.dump(r, open(sys.argv[3], 'w'))" "$TMP/r40.json" "$TMP/novariants.json" "$TMP/unmeasured.json"
check "an old report without variants" 1 "$S" diff "$TMP/novariants.json" "$TMP/r40.json"
contains "says so" "the old report has no measured variant (0 variants, none with timings)"
check "an old report whose variants have no timings" 1 "$S" diff "$TMP/unmeasured.json" "$TMP/r40.json"
contains "says so" "the old report has no measured variant (2 variants, none with timings)"

# a round without a valid time leaves no interval: the p50 rule judges, and says why (it said "no
# rounds to judge" of a run of 40)
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); v = r['variants'][1]
v['timing']['p50_s'] *= 1.5
for rd in v['rounds']: rd['p50_s'] *= 1.5
v['rounds'][3]['p50_s'] = None
json.dump(r, open(sys.argv[2], 'w'))" "$TMP/r40.json" "$TMP/nullround.json"
check "a round without a valid time" 4 "$S" diff "$TMP/r40.json" "$TMP/nullround.json"
contains "says why the p50 rule" "SLOWER (p50 rule: a round without a usable time)"

finish
