#!/usr/bin/env bash
# sagerun sweep / merge end to end on the host backend (no GPU): a 3-workload sweep run as two
# shards into two folders, merged into one summary with every workload once; merge refuses a
# shard given twice, overlapping shards, other sweeps and missing workloads; malformed sweep files
# name the file and the key.
set -u
source "$(dirname "$0")/lib.sh"
SWEEP=$ROOT/test/data/sweep-host.json

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: the host variants (plugins/reference*.so) are not built"; exit 0
fi
H=(--backend host --quiet)

# ---- two sweeps into one folder at once: the second is refused, the first's summary stands ----
# (both passed the summary check before either wrote: rows that did not match the reports on disk,
# or one summary written over the other, both exiting 0)
cat > "$TMP/race.json" <<'J'
{"name": "race", "baseline": "reference", "variants": ["reference-mt"], "warmup": 0,
 "rounds": 300, "iterations": 2, "defaults": {"heads_kv": 2},
 "workloads": [{"shape": [1, 128, 2, 64]}, {"shape": [1, 160, 2, 64]}]}
J
"$S" sweep "$TMP/race.json" --backend host --quiet --out-dir "$TMP/race" >"$TMP/race1.out" 2>&1 &
first=$!
for _ in $(seq 200); do [ -d "$TMP/race" ] && break; sleep 0.05; done; sleep 0.3
check "a second sweep into a folder a sweep is writing: refused" 1 "$S" sweep "$TMP/race.json" \
    "${H[@]}" --out-dir "$TMP/race"
contains "... named why" "another sweep or merge is writing into it now"
wait $first && echo "ok   ... the first sweep finished" || fail "the first sweep" "$(cat "$TMP/race1.out")"
py "... its summary is its own, every row's report on disk" '
import json, os, sys
d = sys.argv[1]; s = json.load(open(os.path.join(d, "summary.json")))
assert s["sweep"]["name"] == "race" and len(s["workloads"]) == 2, s["workloads"]
for r in s["workloads"]:
    assert r["status"] == "ok" and os.path.exists(os.path.join(d, r["report"])), r' "$TMP/race"
check "the same folder again once the first is done" 0 "$S" sweep "$TMP/race.json" "${H[@]}" \
    --out-dir "$TMP/race" --schedule fixed --rounds 2

# ---- two shards, as on two GPUs, then merged ----
# a sweep file's warmup/rounds/iterations are a fixed schedule's: --schedule timed on the command
# line runs every point timed (each point failed, refused as --rounds under timed)
check "the file's fixed counts under --schedule timed" 0 "$S" sweep "$SWEEP" "${H[@]}" \
    --schedule timed --max-time 0.2 --out-dir "$TMP/timed"
py "... every point ran timed" '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert len(s["workloads"]) == 3 and all(w["status"] == "ok" for w in s["workloads"]), s
for w in s["workloads"]:
    rep = json.load(open(sys.argv[1] + "/" + w["report"]))
    assert rep["measurement"]["schedule"] == "timed", rep["measurement"]
' "$TMP/timed"
check "shard 0/2" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 0/2 --out-dir "$TMP/a" \
    && contains "table" "reference-mt"
check "shard 1/2" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 --out-dir "$TMP/b"
# paths that are not UTF-8: written escaped (a sweep file's gave "out of memory"; merge dropped a
# shard's from merged_from, exit 0)
mkdir -p "$TMP/u8" && cp "$SWEEP" "$TMP/u8/"$'\xff'.json && cp "$ROOT/test/data/sweep-host-n96.json" "$TMP/u8/"
check "a sweep file named by other bytes" 0 bash -c "cd '$TMP/u8' && '$S' sweep \$'\\xff.json' --backend host --quiet --out-dir o"
py "its summary names it escaped" 'import json, sys; assert json.load(open(sys.argv[1]))["sweep"]["file"] == "\\xff.json"' "$TMP/u8/o/summary.json"
cp -r "$TMP/a" "$TMP/u8/s"$'\xff'
check "merge of a shard folder named by other bytes" 0 "$S" merge "$TMP/u8/s"$'\xff' "$TMP/b" --out-dir "$TMP/u8/m" --quiet
py "merged_from holds both" '
import json, sys
f = [m["summary"] for m in json.load(open(sys.argv[1]))["merged_from"]]
assert len(f) == 2 and f[0].endswith("/s\\xff/summary.json"), f' "$TMP/u8/m/summary.json"
# a summary with more rows than a sweep can have: refused when read (diff matched rows pairwise:
# 40000 rows took 6 minutes)
python3 - "$TMP/a/summary.json" "$TMP/big-summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); row = s["workloads"][0]
s["workloads"] = [dict(row, name="w%d" % i, report=None, status="failed") for i in range(4097)]
json.dump(s, open(sys.argv[2], "w"))
PY
check "diff of a summary of 4097 rows" 1 timeout 20 "$S" diff "$TMP/big-summary.json" "$TMP/big-summary.json" \
    && contains "diff of a summary of 4097 rows" "4097 workloads, more than a sweep has (4096)"
# an empty --out-dir: a usage error (the folder walk read and wrote past the empty name's end: ASan)
check "merge --out-dir ''" 2 "$S" merge "$TMP/a" "$TMP/b" --out-dir "" && contains "merge --out-dir ''" "--out-dir: an empty path"
check "sweep --out-dir ''" 2 "$S" sweep "$SWEEP" "${H[@]}" --out-dir "" && contains "sweep --out-dir ''" "--out-dir: an empty path"
# a variant or baseline that no plugin gives is refused before anything runs (every workload failed
# on it, one comparison at a time, and the folder of errors left behind was not the corrected
# sweep's to write over)
for o in "--variant refrence-mt" "--baseline nope"; do
    check "sweep $o: refused up front" 1 "$S" sweep "$SWEEP" "${H[@]}" $o --out-dir "$TMP/typo" \
        && contains "names it" "named '${o#* }'" && contains "says nothing ran" "nothing ran"
    [ -e "$TMP/typo" ] && fail "sweep $o: $TMP/typo was made"
done
py "shards: every N-th workload from I, a report each" '
import json, os, sys
a = json.load(open(sys.argv[1] + "/summary.json")); b = json.load(open(sys.argv[2] + "/summary.json"))
assert [w["index"] for w in a["workloads"]] == [0, 2] and [w["index"] for w in b["workloads"]] == [1]
assert a["shard"] == {"index": 0, "count": 2} and b["shard"] == {"index": 1, "count": 2}
assert a["sweep"]["workloads"] == ["n32", "1x64x2x64", "n96"], a["sweep"]["workloads"]
for d, s in ((sys.argv[1], a), (sys.argv[2], b)):
    for w in s["workloads"]:
        assert w["status"] == "ok", w
        r = json.load(open(os.path.join(d, w["report"])))
        assert r["q_shape"][1] == w["shape"][1] and r["rounds"] == 2 and r["iterations_per_round"] == 2
        assert [v["label"] for v in r["variants"]] == ["reference", "reference-mt"]
        assert [v["label"] for v in w["variants"]] == ["reference", "reference-mt"]
assert os.path.exists(sys.argv[1] + "/summary.md")
' "$TMP/a" "$TMP/b"
# the summary's headline speedup is the paired estimate, as in each report's table (it was the
# seed's ratio of the p50s, which can lie outside its own interval)
py "summary: the paired estimate beside the interval" '
import json, os, sys
d = sys.argv[1]; s = json.load(open(d + "/summary.json"))
for w in s["workloads"]:
    r = json.load(open(os.path.join(d, w["report"])))
    for sv, rv in zip(w["variants"], r["variants"]):
        iv = rv["speedup_interval_percent"]
        want = iv["estimate"] if iv else None
        assert sv["speedup_estimate_percent"] == want, (sv, iv)
' "$TMP/a"
for w in n32 n96; do
    want=$("$S" show "$TMP/a/$w.json" | sed -n 's/^reference-mt .* \([-+][0-9.]*% ([^)]*)\) \[.*/\1/p')
    got=$("$S" show "$TMP/a/summary.json" | grep " $w " | sed -n 's/.* \([-+][0-9.]*% ([^)]*)\) \[.*/\1/p')
    [ -n "$want" ] && [ "$want" = "$got" ] && echo "ok   sweep table: $w's speedup is the report's ($got)" \
        || fail "sweep table: $w's speedup $got, the report's $want"
done
# the same options in another order are the same options (merge refused them: "the compare
# options differ"); other values are not
check "shard 0/2, options in one order" 0 "$S" sweep "$SWEEP" --backend host --quiet --rounds 2 --iterations 1 --warmup 0 \
    --shard 0/2 --out-dir "$TMP/o1"
check "shard 1/2, the same options in another" 0 "$S" sweep "$SWEEP" --backend host --quiet --warmup 0 --iterations 1 --rounds 2 \
    --shard 1/2 --out-dir "$TMP/o2"
check "merge: the same options in another order" 0 "$S" merge "$TMP/o1" "$TMP/o2" --out-dir "$TMP/o12" --quiet
check "shard 1/2, another value" 0 "$S" sweep "$SWEEP" --backend host --quiet --warmup 0 --iterations 1 --rounds 3 \
    --shard 1/2 --out-dir "$TMP/o3"
check "merge: another value refused" 1 "$S" merge "$TMP/o1" "$TMP/o3" --out-dir "$TMP/o13" --quiet
contains "says so" "the compare options differ"
check "merge the shards" 0 "$S" merge "$TMP/a" "$TMP/b/summary.json" --out-dir "$TMP/m" \
    && contains "merged table" "3 of 3 workloads"
py "merged: all 3 workloads once, by index, reports copied" "$(cat "$ROOT/test/cli/check_host_merge.py")" "$TMP/m"
check "a merged report shows" 0 "$S" show "$TMP/m/n96.json" && contains "workload metadata kept" "1, 96, 2, 64"
check "a merged report plots" 0 "$S" plot "$TMP/m/n32.json" -o "$TMP/n32.svg"
# a merge refused for a damaged report leaves the earlier merge as it was (it had replaced the
# reports it copied before the damaged one, under the old summary)
cp -r "$TMP/m" "$TMP/m.before"; cp -r "$TMP/a" "$TMP/a2"; cp -r "$TMP/b" "$TMP/b2"
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['variants'][0]['timing']['p50_s'] *= 2
json.dump(r, open(sys.argv[1], 'w'))" "$TMP/a2/n32.json"
echo garbage > "$TMP/b2/1x64x2x64.json"
check "merge: a damaged report refuses" 1 "$S" merge "$TMP/a2" "$TMP/b2" --out-dir "$TMP/m" --quiet
contains "names the report" "1x64x2x64.json, which is not a valid report"
diff -r "$TMP/m" "$TMP/m.before" >/dev/null && echo "ok   merge: refused, the earlier merge intact" \
    || fail "merge: a refused merge changed the output" "$(diff -r "$TMP/m" "$TMP/m.before" | head -5)"
# two reports swapped in a shard's folder: each is valid, but of the other row's workload (merged
# as each other's, exit 0; only a later diff saw it)
cp -r "$TMP/a" "$TMP/a3"
mv "$TMP/a3/n32.json" "$TMP/a3/x.json" && mv "$TMP/a3/n96.json" "$TMP/a3/n32.json" && mv "$TMP/a3/x.json" "$TMP/a3/n96.json"
check "merge: reports swapped between rows" 1 "$S" merge "$TMP/a3" "$TMP/b" --out-dir "$TMP/m3" --quiet
contains "names the row and both shapes" "n32.json for workload n32 (1x32x2x64, Hkv 2), but it holds 1x96x2x64, Hkv 2"
[ -e "$TMP/m3/summary.json" ] && fail "merge: a refused merge wrote a summary" || echo "ok   ... no summary written"

# ---- sweep takes compare's options (one table) and passes them on to each workload's compare ----
for opt in $("$S" compare --help | sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p'); do
    case $opt in --workload|--inputs|--shape|--layout|--dtype|--causal|--seed|--expect-sha256|\
                 --kv-len|--window|--softcap|--varlen|--page-size|--align|\
                 --json|--markdown|--csv|--quiet|--in-process|\
                 --fail-if-slower|--require-faster) continue ;; esac # compare's own
    "$S" sweep --help | grep -q -- "^  $opt " || fail "sweep --help documents compare's $opt"
done
echo "ok   sweep --help documents compare's options"
check "sweep: compare's options on the command line win over the file's" 0 "$S" sweep "$SWEEP" \
    "${H[@]}" --shard 0/2 --order rotate --timer event --rounds 3 --out-dir "$TMP/opts"
py "each workload's compare got them" '
import json, os, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert s["options"]["rounds"] == 3 and s["options"]["iterations"] == 2, s["options"]
for w in s["workloads"]:
    r = json.load(open(os.path.join(sys.argv[1], w["report"])))
    assert r["rounds"] == 3 and r["iterations_per_round"] == 2, (r["rounds"], r["iterations_per_round"])
    assert r["measurement"]["order"] == "rotate", r["measurement"]
    assert all(v["measurement"]["timer"] == "host" for v in r["variants"]), r["variants"]  # event on the host: its clock
' "$TMP/opts"
check "sweep --schedule seed over the file's counts" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 \
    --schedule seed --out-dir "$TMP/seed"
py "the seed schedule ran" '
import json, os, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert s["options"]["schedule"] == "seed", s["options"]
r = json.load(open(os.path.join(sys.argv[1], s["workloads"][0]["report"])))
assert r["measurement"]["schedule"] == "seed" and r["rounds"] == 5, (r["measurement"], r["rounds"])
' "$TMP/seed"
check "sweep: a bad compare option value" 2 "$S" sweep "$SWEEP" "${H[@]}" --order zigzag \
    && contains "named as compare names it" "sweep: --order 'zigzag': expected interleave or rotate"
check "sweep: --min-rounds above --max-rounds" 2 "$S" sweep "$SWEEP" "${H[@]}" --min-rounds 9 \
    --max-rounds 4 && contains "says so" "sweep: --min-rounds 9 is above --max-rounds 4"

# ---- merge refuses ----
check "the same shard twice" 1 "$S" merge "$TMP/a" "$TMP/a/summary.json" "$TMP/b" --out-dir "$TMP/x" \
    && contains "says so" "given twice"
cp -r "$TMP/a" "$TMP/a-copy"
check "a duplicate shard (copied)" 1 "$S" merge "$TMP/a" "$TMP/b" "$TMP/a-copy" --out-dir "$TMP/x" \
    && contains "names workload and files" "duplicate: workload 0 (n32) is in both $TMP/a/summary.json"
check "a missing shard" 1 "$S" merge "$TMP/a" --out-dir "$TMP/x" \
    && contains "names the missing workload" "1x64x2x64 (1)"
[ -e "$TMP/x" ] && { echo "FAIL a refused merge wrote $TMP/x"; fails=$((fails+1)); }
check "--allow-missing" 0 "$S" merge "$TMP/a" --out-dir "$TMP/partial" --allow-missing \
    && contains "lists it" "missing: workload 1 (1x64x2x64)"
check "shard with other options" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 --rounds 3 \
    --out-dir "$TMP/b3"
check "other options: refused" 1 "$S" merge "$TMP/a" "$TMP/b3" --out-dir "$TMP/x" \
    && contains "says why" "not shards of one sweep: the compare options differ"
# a summary's strings cannot break their line: a label with a newline forged a row of show's table
mkdir -p "$TMP/forged" && cp "$TMP/a"/*.json "$TMP/forged/"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s["workloads"][0]["variants"][-1]["label"] = "x\n9  FORGED  row"
s["workloads"][0]["name"] = s["sweep"]["workloads"][s["workloads"][0]["index"]] = "n\rm|k"
json.dump(s, open(sys.argv[1], "w"))' "$TMP/forged/summary.json"
check "show: a summary with line breaks in its strings" 0 "$S" show "$TMP/forged/summary.json" \
    && contains "the label on its line" 'x\x0a9  FORGED  row' && contains "the name too" 'n\x0dm|k'
grep -q "^9  FORGED" <<<"$out" && fail "a label forged a row" "$out"
check "show --markdown: the same, '|' escaped in cells" 0 "$S" show --markdown "$TMP/forged/summary.json" \
    && contains "cell" '| n\x0dm\|k |'
# the same rule as reports (sagerun_text_escape): a backslash ending a cell escaped '|' and merged two
# columns of summary.md, and U+2028 (a line break to some renderers) went out as it was
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s["workloads"][0]["name"] = s["sweep"]["workloads"][s["workloads"][0]["index"]] = "b\\"
s["workloads"][0]["variants"][-1]["label"] = "u\u2028v"
json.dump(s, open(sys.argv[1], "w"))' "$TMP/forged/summary.json"
check "show --markdown: a backslash ending a cell" 0 "$S" show --markdown "$TMP/forged/summary.json" \
    && contains "the backslash escaped" '| b\\ |' && contains "U+2028 escaped" 'u\u2028v'
check "show: U+2028 in a label" 0 "$S" show "$TMP/forged/summary.json" && contains "escaped" 'u\u2028v'
# options the summary's fields do not show (the timer, the order, a tolerance): merge took them
check "shard measured another way" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 --order rotate --timer batch \
    --batch 3 --max-ulp 1000 --out-dir "$TMP/b4"
check "measured another way: refused" 1 "$S" merge "$TMP/a" "$TMP/b4" --out-dir "$TMP/x" \
    && contains "says why" "the compare options differ" && contains "names the field" "compare_args"
check "shard with its own --timeout" 0 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 --timeout 100 --out-dir "$TMP/b5"
check "a shard's own --timeout: merged" 0 "$S" merge "$TMP/a" "$TMP/b5" --out-dir "$TMP/m5"
sed 's/"host-tiny"/"host-other"/' "$SWEEP" > "$TMP/other.json"
cp "$ROOT/test/data/sweep-host-n96.json" "$TMP/"
check "another sweep's shard" 0 "$S" sweep "$TMP/other.json" "${H[@]}" --shard 1/2 --out-dir "$TMP/o"
# a folder holding another sweep's or shard's summary is not written over (its summary and reports
# were replaced without a word); the same sweep and shard again may write there
cp "$TMP/a/summary.json" "$TMP/a.summary.orig"
check "sweep into another sweep's folder" 1 "$S" sweep "$TMP/other.json" "${H[@]}" --shard 1/2 --out-dir "$TMP/a" \
    && contains "says whose" "--out-dir $TMP/a holds the summary of another sweep: host-tiny: refusing to write over it"
check "sweep into another shard's folder" 1 "$S" sweep "$SWEEP" "${H[@]}" --shard 1/2 --out-dir "$TMP/a" \
    && contains "says so" "holds the summary of another shard or merge of this sweep"
sed 's/"host-tiny"/"host-tiny" /' "$SWEEP" > "$TMP/edited.json" # the same name, other bytes
check "sweep, its file edited, into its old folder" 1 "$S" sweep "$TMP/edited.json" "${H[@]}" --shard 0/2 --out-dir "$TMP/a" \
    && contains "says it changed" "holds the summary of another version of sweep host-tiny (the sweep file changed)"
cmp -s "$TMP/a/summary.json" "$TMP/a.summary.orig" && echo "ok   ... the summary intact" || fail "a's summary was replaced"
check "merge into another sweep's folder" 1 "$S" merge "$TMP/a" "$TMP/b" --out-dir "$TMP/o" --quiet \
    && contains "says whose" "--out-dir $TMP/o holds the summary of another sweep: host-other"
check "the same shard again, into its own folder" 0 "$S" sweep "$TMP/other.json" "${H[@]}" --shard 1/2 --out-dir "$TMP/o"
check "another sweep: refused" 1 "$S" merge "$TMP/a" "$TMP/o" --out-dir "$TMP/x" \
    && contains "says why" "names differ"
check "not a summary" 1 "$S" merge "$TMP/m/n32.json" && contains "names it" "n32.json: not a sweep summary"
check "not a sweep folder" 1 "$S" merge "$TMP" && contains "names it" "$TMP/summary.json"
check "merge: no arguments" 2 "$S" merge
# a row of an unknown status: merge exited 1 in silence (with --quiet) and showed it as fine
cp -r "$TMP/a" "$TMP/a-odd"
python3 -c "import json, sys
s = json.load(open(sys.argv[1])); s['workloads'][0]['status'] = 'x'
json.dump(s, open(sys.argv[1], 'w'))" "$TMP/a-odd/summary.json"
check "a row of unknown status: merge says so" 1 "$S" merge "$TMP/a-odd" "$TMP/b" --out-dir "$TMP/x" --quiet \
    && contains "names the row" "a-odd/summary.json: workloads[0]: malformed row"
check "... and show" 1 "$S" show "$TMP/a-odd/summary.json" \
    && contains "names the row" "a-odd/summary.json: workloads[0]: malformed row"
# show, diff and plot check a summary as merge does (they read "3 of -5 workloads", a p50 of -1 s as
# "-1000000.00 us", a second row of one workload that diff never judged, a report outside the folder)
for case in count:-5 count5:5 p50:-1 dup: report:../../a.json; do
    mkdir -p "$TMP/odd-${case%%:*}" && cp "$TMP/a"/*.json "$TMP/odd-${case%%:*}/"
    python3 -c "import json, sys
s = json.load(open(sys.argv[1])); what, value = sys.argv[2].split(':', 1); w = s['workloads']
if what.startswith('count'): s['sweep']['workload_count'] = int(value)
if what == 'p50': w[0]['variants'][0]['p50_s'] = float(value)
if what == 'dup': w.append(dict(w[0]))
if what == 'report': w[0]['report'] = value
json.dump(s, open(sys.argv[1], 'w'))" "$TMP/odd-${case%%:*}/summary.json" "$case"
done
check "show: a negative workload count" 1 "$S" show "$TMP/odd-count/summary.json" \
    && contains "names the key" "key 'sweep.workload_count' is missing or malformed"
# a count that is not the number of names: both named (it said "key 'sweep.workloads' is missing or
# malformed")
check "show: a workload count not the names'" 1 "$S" show "$TMP/odd-count5/summary.json" \
    && contains "names both" "key 'sweep.workload_count' (5) is not the number of names in 'sweep.workloads' (3)"
check "show: a negative p50" 1 "$S" show "$TMP/odd-p50/summary.json" \
    && contains "names the row" "workloads[0].variants[0]: expected an object whose p50_s is a time"
check "diff: one workload in two rows" 1 "$S" diff "$TMP/a/summary.json" "$TMP/odd-dup/summary.json" \
    && contains "names both" "are both workload n32: a reader would take only the first"
check "plot: a report outside the folder" 1 "$S" plot "$TMP/odd-report/summary.json" -o "$TMP/odd.svg" \
    && contains "names it" "workloads[0].report '../../a.json': expected a file name next to the summary"

# ---- the default output folder, unsharded ----
(cd "$TMP" && "$S" sweep "$SWEEP" "${H[@]}" >/dev/null 2>&1)
[ -s "$TMP/sweep-host-tiny/summary.json" ] && [ -s "$TMP/sweep-host-tiny/n96.json" ] \
    && echo "ok   default --out-dir ./sweep-<name>" \
    || { echo "FAIL default --out-dir"; fails=$((fails+1)); }

# ---- malformed sweep files: the file and the key ----
bad() { # bad NAME JSON EXPECTED_TEXT
    printf '%s\n' "$2" > "$TMP/bad.json"
    check "bad sweep: $1" 1 "$S" sweep "$TMP/bad.json" "${H[@]}" --out-dir "$TMP/bad-out" \
        && contains "$1: names file and key" "$3"
}
bad "unknown key" '{"workloads": [{"shape": [1, 32, 2, 64]}], "round": 2}' "bad.json: unknown key 'round'"
bad "rounds type" '{"workloads": [{"shape": [1, 32, 2, 64]}], "rounds": "2"}' "bad.json: key 'rounds': expected an integer from 1 to 100000000"
bad "no workloads" '{"name": "x"}' "bad.json: key 'workloads' is missing"
bad "empty workloads" '{"workloads": []}' "bad.json: key 'workloads': expected a non-empty array"
bad "workload shape" '{"workloads": [{"shape": [1, 32, 2, 64]}, {"shape": [1, 32]}]}' "bad.json: workloads[1]: key 'shape'"
bad "workload key" '{"workloads": [{"shape": [1, 32, 2, 64], "heads": 2}]}' "bad.json: workloads[0]: unknown key 'heads'"
bad "workload type" '{"workloads": [{"shape": [1, 32, 2, 64]}, 3]}' "bad.json: key 'workloads[1]': expected a workload object or a workload file path"
bad "workload file" '{"workloads": ["nope.json"]}' "bad.json: workloads[0]: "
bad "same names" '{"workloads": [{"name": "a", "shape": [1, 32, 2, 64]}, {"name": "a", "shape": [1, 64, 2, 64]}]}' "workloads[1]: name 'a' gives the same report file"
bad "variants type" '{"workloads": [{"shape": [1, 32, 2, 64]}], "variants": "reference-mt"}' "bad.json: key 'variants': expected a non-empty array"
# [] compared every variant found, and the summary said []
bad "no variants" '{"workloads": [{"shape": [1, 32, 2, 64]}], "variants": []}' "bad.json: key 'variants': expected a non-empty array of variant names (without the key: every variant found), found an array"
# no entry an object: the entry named (the message blamed 'defaults')
bad "no workload an object" '{"defaults": {"heads_kv": 1}, "workloads": [0]}' "bad.json: key 'workloads[0]': expected a workload object or a workload file path, found 0"
bad "not JSON" '{"workloads": [' "bad.json:2:0: not valid JSON"
[ -e "$TMP/bad-out" ] && { echo "FAIL a bad sweep file created its output folder"; fails=$((fails+1)); }
check "missing sweep file" 1 "$S" sweep "$TMP/none.json" "${H[@]}" && contains "names it" "$TMP/none.json"
check "bad --shard" 2 "$S" sweep "$SWEEP" "${H[@]}" --shard 2/2 && contains "says what" "0 <= I < N"
check "bad --shard text" 2 "$S" sweep "$SWEEP" "${H[@]}" --shard one
check "no sweep file" 2 "$S" sweep "${H[@]}"
# a workload that cannot run (its input file is gone): the sweep goes on, its row says why, exit 1
printf '{"baseline": "reference", "variants": ["reference-mt"], "rounds": 2, "iterations": 1,
 "workloads": [{"name": "gone", "shape": [1, 32, 1, 32], "input": {"source": "safetensors",
 "path": "gone.safetensors"}}, {"name": "here", "shape": [1, 32, 1, 32]}]}' > "$TMP/gone.json"
check "a workload that cannot run: the sweep goes on, exit 1" 1 "$S" sweep "$TMP/gone.json" "${H[@]}" \
    --out-dir "$TMP/nope" && contains "error noted" "ERROR"
py "error rows" '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert [w["status"] for w in s["workloads"]] == ["error", "ok"], s["workloads"]
assert "gone.safetensors" in s["workloads"][0]["error"], s["workloads"][0]
' "$TMP/nope"

# A variant that crashes costs its rows, not the sweep: every workload still has the good
# variants' numbers (each workload runs as a contained `sagerun compare`).
if [ -f "$FAKES/fault_segv_run.so" ]; then
    check "crashing variant: the sweep goes on, exit 1" 1 env SAGERUN_TEST_FAULTS=1 "$S" sweep \
        "$SWEEP" "${H[@]}" --plugin "$FAKES/fault_segv_run.so" --variant reference-mt \
        --variant fault-segv-run --rounds 2 --iterations 2 --warmup 0 --no-accuracy \
        --out-dir "$TMP/crash"
    py "crash rows: failed, good numbers kept" '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert len(s["workloads"]) == 3, s
for w in s["workloads"]:
    assert w["status"] == "failed", w
    v = {x["name"]: x for x in w["variants"]}
    assert v["reference-mt"]["p50_s"] and v["reference-mt"]["byte_exact"] is True, v
    assert v["reference"]["p50_s"], v
    f = v["fault-segv-run"]["failure"]  # under ASan the sanitizer reports the crash itself
    assert "SIGSEGV" in f or "sanitizer report" in f, v
' "$TMP/crash"
fi


# ---- what the sweep writes never replaces what it reads (it did: a workload named like the sweep
# file, a sweep file named summary.json, --csv on a workload file), and its hidden per-workload
# files never write through a link or block on a FIFO ----
mkdir -p "$TMP/safe" && cd "$TMP/safe"
cat > sw.json <<'J'
{"name": "s", "variants": ["reference-mt"], "warmup": 0, "rounds": 2, "iterations": 1,
 "defaults": {"heads_kv": 1}, "workloads": [{"name": "sw", "shape": [1, 32, 1, 32]}, "wl.json"]}
J
echo '{"name": "wl", "shape": [1, 32, 1, 32], "heads_kv": 1}' > wl.json
cp sw.json sw.orig && cp wl.json wl.orig
check "a workload named like the sweep file, --out-dir beside it: refused" 1 "$S" sweep sw.json --backend host --quiet --out-dir .
contains "names both" "./sw.json, which the sweep writes, is the input sw.json: refusing to overwrite it"
cmp -s sw.json sw.orig && cmp -s wl.json wl.orig && echo "ok   ... both files intact" || fail "an input was replaced"
mkdir -p new
check "--csv on a report the sweep writes, spelled another way: refused" 1 "$S" sweep sw.json --backend host \
    --quiet --out-dir new --csv ./new/sw.json && contains "names both" "which the sweep writes"
mkdir -p d && sed 's/"sw"/"x"/; s/, "wl.json"//' sw.orig > d/summary.json && cp d/summary.json d.orig
check "a sweep file named summary.json in --out-dir: refused" 1 "$S" sweep d/summary.json --backend host --quiet --out-dir d
cmp -s d/summary.json d.orig && echo "ok   ... the sweep file intact" || fail "the sweep file was replaced by the summary"
sed 's/"sw"/"y"/' sw.orig > sw2.json
check "--csv on a workload file: refused" 1 "$S" sweep sw2.json --backend host --quiet --out-dir o2 --csv wl.json
cmp -s wl.json wl.orig && echo "ok   ... the workload file intact" || fail "the workload file was replaced by the CSV"
sed 's/, "wl.json"//' sw2.json > sw3.json
echo precious > victim1 && echo precious > victim2 && mkdir -p o3
ln -s "$PWD/victim1" o3/.y.json.log && ln -s "$PWD/victim2" o3/.y.json.workload.json
check "hidden files that are links" 0 timeout 60 "$S" sweep sw3.json --backend host --quiet --out-dir o3
[ "$(cat victim1 victim2)" = "precious"$'\n'"precious" ] && echo "ok   ... their targets untouched" \
    || fail "a link's target was written: $(head -c 40 victim1 victim2)"
mkdir -p o4 && mkfifo o4/.y.json.log
check "a hidden log that is a FIFO: no hang" 0 timeout 60 "$S" sweep sw3.json --backend host --quiet --out-dir o4
# an input file relative to the sweep file: the child compare read it relative to --out-dir (a
# missing file there, or silently another one of the same name)
"$S" run --variant reference --backend host --shape 1,16,2,32 --seed 1 --save-inputs data.safetensors \
    --iterations 1 > /dev/null
mkdir -p o5 && "$S" run --variant reference --backend host --shape 1,16,2,32 --seed 2 \
    --save-inputs o5/data.safetensors --iterations 1 > /dev/null
want=$("$S" run --variant reference --backend host --inputs data.safetensors --iterations 1 | awk '/output_sha256/ {print $2}')
printf '{"baseline": "reference", "variants": ["reference-mt"], "rounds": 2, "iterations": 1, "warmup": 0, "workloads": [{"name": "f", "shape": [1, 16, 2, 32], "input": {"source": "safetensors", "path": "data.safetensors"}}]}' > rel.json
printf '{"baseline": "reference", "variants": ["reference-mt"], "rounds": 2, "iterations": 1, "warmup": 0, "workloads": [{"name": "w\\u001b[2J\\nFORGED", "shape": [1, 16, 2, 32]}]}' > esc.json
check "a workload name with controls: the progress line" 0 "$S" sweep esc.json --backend host --out-dir o6 \
    && contains "shows it escaped" "workload 0 'w\x1b[2J\x0aFORGED'"
[[ "$out" == *$'\x1b'* ]] && fail "a control character of the sweep file reached the terminal" "$(cat -v <<<"$out")"
# noise_threshold_percent went to compare as %.17g: 1e-05 (an exponent the option refuses) failed
# every workload blaming --noise-threshold; 2000000 passed the file's check and failed the same way
printf '{"baseline": "reference", "variants": ["reference-mt"], "rounds": 2, "iterations": 1, "warmup": 0, "noise_threshold_percent": 0.00001, "workloads": [{"name": "t", "shape": [1, 16, 2, 32]}]}' > thr.json
check "a small noise_threshold_percent" 0 "$S" sweep thr.json --backend host --quiet --out-dir o7
py "... reaches compare intact" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["noise_threshold_percent"] == 1e-05, r["noise_threshold_percent"]' o7/t.json
sed 's/0.00001/2000000/' thr.json > thr2.json
check "a noise_threshold_percent past the option's range" 1 "$S" sweep thr2.json --backend host --quiet --out-dir o8 \
    && contains "names the key" "noise_threshold_percent"
# defaults beside workload files only: never merged, so never checked (a misspelt key, a shape of
# the wrong type ran with exit 0)
printf '{"shape": [1, 16, 2, 32]}' > dwl.json
printf '{"defaults": {"hedas_kv": 2, "shape": "garbage"}, "workloads": ["dwl.json"], "rounds": 2, "iterations": 1, "warmup": 0}' > dfl.json
check "defaults with only workload files" 1 "$S" sweep dfl.json --backend host --quiet --out-dir o9 \
    && contains "says why" "key 'defaults': its keys are added to inline workload objects, and this sweep has none"
check "an input path relative to the sweep file" 0 "$S" sweep rel.json --backend host --quiet --out-dir o5
py "... read from the sweep file's folder, not --out-dir" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["reference_output_sha256"] == sys.argv[2], (r["reference_output_sha256"], sys.argv[2])' o5/f.json "$want"
cd "$ROOT"

# ---- a stop signal to the sweep alone (kill PID): the sweep died at once, its running comparison
# went on as an orphan and later wrote a report the summary never listed, its hidden files stayed,
# and no --csv was written ----
cd "$TMP"
cat > sig.json <<'E'
{"name": "sig", "baseline": "reference", "variants": ["reference-mt"], "accuracy": false,
 "workloads": [{"name": "a", "shape": [1, 64, 1, 32]}, {"name": "b", "shape": [1, 64, 1, 32]},
               {"name": "c", "shape": [1, 64, 1, 32]}]}
E
"$S" sweep sig.json --backend host --out-dir sig --max-time 2 --warmup-time 0.05 --csv sig.csv \
    >sig.out 2>sig.err &
pid=$!
for _ in $(seq 1 300); do [ -f sig/a.json ] && break; sleep 0.1; done
sleep 0.7; kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] || fail "sweep, SIGTERM: exit $rc, expected 143" "$(cat sig.err)"
sleep 1
pgrep -f "out-dir sig " >/dev/null && fail "sweep, SIGTERM: a comparison still runs" "$(pgrep -af 'sig/')"
ls -A sig | grep -q '^\.' && fail "sweep, SIGTERM: hidden files left" "$(ls -A sig)"
[ -f sig.csv ] || fail "sweep, SIGTERM: no --csv of what ran"
py "sweep, SIGTERM: the summary lists every report written, b's incomplete" '
import json, os, sys
d = sys.argv[1]; s = json.load(open(os.path.join(d, "summary.json")))
listed = {w["report"] for w in s["workloads"] if w.get("report")}
written = {f for f in os.listdir(d) if f.endswith(".json") and f != "summary.json"}
assert listed == written, (listed, written)
assert "b.json" in written and json.load(open(os.path.join(d, "b.json")))["complete"] is False' sig
grep -q "interrupted" sig.err || fail "sweep, SIGTERM: not said" "$(cat sig.err)"
cd "$ROOT"

finish
