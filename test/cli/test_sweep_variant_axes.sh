#!/usr/bin/env bash
# Sweep axes over variant parameters (plugin ABI 1.1): "work[block]": [1, 4, 16] gives the compared
# variant 'work' block=1, 4, 16 at each point, crossed with a workload axis; the axes are named in
# the summary, the table, the reports' labels and the CSV (a column per axis); workload files take
# variant axes; bad axes are refused before anything runs, naming the axis, key or value.
set -u
source "$(dirname "$0")/lib.sh"
WORK=$FAKES/host_work.so
[ -f "$WORK" ] || { echo "SKIP: $WORK is not built"; exit 0; }

cat > "$TMP/va.json" <<'JSON'
{"name": "va", "baseline": "work", "variants": ["work"], "warmup": 1, "rounds": 3,
 "iterations": 3, "accuracy": false,
 "axes": {"N": [32, 64], "work[block]": [1, 4, 16]},
 "workloads": [{"name": "w", "shape": [1, 16, 1, 16]}]}
JSON
check "a sweep over N x work[block]" 0 env SAGERUN_TEST_WORK_LOG="$TMP/work.log" "$S" sweep \
    "$TMP/va.json" --backend host --quiet --plugin "$WORK" --out-dir "$TMP/o" --csv "$TMP/o.csv"
contains "6 points" "sweep va: 6 of 6 workloads"
grep -qE "^5 +w/N=64,work\[block\]=16 +1x64x1x16 .* work\[block=16\] " <<<"$out" \
    && echo "ok   the table names the point and the variant's value" || fail "table row" "$out"
py "summary axes, reports' labels and parameters, CSV columns" '
import json, os, sys, csv
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
pts = [w["axes"] for w in s["workloads"]]
assert pts == [{"N": n, "work[block]": b} for n in (32, 64) for b in (1, 4, 16)], pts
for w in s["workloads"]:
    n, b = w["axes"]["N"], w["axes"]["work[block]"]
    assert w["name"] == "w/N=%d,work[block]=%d" % (n, b), w["name"]
    labels = [v["label"] for v in w["variants"]]
    assert labels == ["work", "work[block=%d]" % b], labels
    r = json.load(open(os.path.join(d, w["report"])))
    assert r["problem"]["seq_len"] == n
    v = r["variants"][1]
    assert v["name"] == "work[block=%d]" % b and v["byte_exact"] is True, v["name"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 12, len(rows)
assert list(rows[0])[:4] == ["workload", "axis.N", "axis.work[block]", "variant"], list(rows[0])[:4]
last = rows[-1]
assert (last["axis.N"], last["axis.work[block]"], last["variant"]) == ("64", "16", "work[block=16]"), last
' "$TMP/o" "$TMP/o.csv"

# the value reaches the variant: every instance logs its seq_len and block (SAGERUN_TEST_WORK_LOG);
# the baseline runs at block 4 (its default), the compared one at each point's value
py "each point's variant ran with its value" '
import collections, sys
got = collections.Counter(l.strip() for l in open(sys.argv[1]))
for n in (32, 64):
    for b in (1, 16):
        assert got["create seq_len=%d block=%d" % (n, b)] >= 1, (n, b, got)
    assert got["create seq_len=%d block=4" % n] >= 4, (n, got)  # 3 baselines + the block=4 point
assert set(got) <= {"create seq_len=%d block=%d" % (n, b) for n in (32, 64) for b in (1, 4, 16)}, got
' "$TMP/work.log"

# a variant spec with other parameters keeps them; a workload file takes variant axes
printf '{"baseline": "work", "variants": ["work"], "warmup": 0, "rounds": 2, "iterations": 1, "accuracy": false,
 "axes": {"work[block]": [2, 8]}, "workloads": ["%s"]}' "$ROOT/test/data/sweep-host-n96.json" > "$TMP/file.json"
check "variant axes on a workload file" 0 "$S" sweep "$TMP/file.json" --backend host --quiet \
    --plugin "$WORK" --out-dir "$TMP/f"
contains "named after the file's workload" "n96/work[block]=8"
py "the file's workload at each point" '
import json, os, sys
s = json.load(open(os.path.join(sys.argv[1], "summary.json")))
assert [w["name"] for w in s["workloads"]] == ["n96/work[block]=2", "n96/work[block]=8"]
assert [w["shape"] for w in s["workloads"]] == [[1, 96, 2, 64]] * 2
' "$TMP/f"
# exit 3: reference computes attention, work copies V (not byte-exact)
check "--variant on the command line is what the axis applies to" 3 "$S" sweep "$TMP/file.json" \
    --backend host --quiet --plugin "$WORK" --out-dir "$TMP/f2" --variant work --variant reference
grep -qE "n96/work\[block\]=8 .* reference " <<<"$out" && grep -qE "n96/work\[block\]=8 .* work\[block=8\] " <<<"$out" \
    && echo "ok   the other variant is compared unchanged" || fail "other variant" "$out"

bad() { # bad NAME AXES-JSON VARIANTS-JSON EXPECTED-TEXT
    printf '{"baseline": "work", %s "warmup": 0, "rounds": 2, "iterations": 1,
 "axes": %s, "workloads": [{"name": "w", "shape": [1, 16, 1, 16]}]}' "${3:+\"variants\": $3,}" "$2" > "$TMP/bad.json"
    rm -rf "$TMP/bad"
    check "$1" 1 "$S" sweep "$TMP/bad.json" --backend host --quiet --plugin "$WORK" --out-dir "$TMP/bad" \
        && contains "$1: named" "$4"
    [ -z "$(ls "$TMP/bad" 2>/dev/null)" ] && echo "ok   $1: nothing ran" || fail "$1: something ran" "$(ls "$TMP/bad")"
}
bad "an unknown parameter" '{"work[blok]": [4]}' '["work"]' "workload 'w/work[blok]=4': work[blok=4]: variant work: unknown parameter 'blok' (its parameters: block)"
bad "a value out of range" '{"N": [16], "work[block]": [4, 65]}' '["work"]' "workload 'w/N=16,work[block]=65': work[block=65]: variant work: parameter block=65 is outside [1, 64]"
bad "a fraction for an int" '{"work[block]": [2.5]}' '["work"]' "block=2.5 is not an integer"
bad "a string value" '{"work[block]": ["big"]}' '["work"]' "key 'axes.work[block][0]': expected a parameter value (a number, true or false), found the string \"big\""
bad "a repeated value" '{"work[block]": [4, 4]}' '["work"]' "axes.work[block]: value 1 repeats value 0"
bad "a variant not compared" '{"work[block]": [4]}' '["reference"]' "axes: 'work[block]' sweeps a parameter of variant 'work', which is not among the variants compared"
bad "no variants named" '{"work[block]": [4]}' '' "which is not among the variants compared"
bad "a key the spec sets already" '{"work[block]": [4]}' '["work[block=8]"]' "axes: 'work[block]' sweeps block, which the variant 'work[block=8]' sets already"
bad "a malformed axis" '{"work[Block]": [4]}' '["work"]' "axes: unknown axis 'work[Block]' (B, N, Hq, D, heads_kv, dtype, layout, causal, sm_scale, kv_len, softcap, window, varlen, page_size, or VARIANT[KEY]"
bad "an unknown variant" '{"nosuch[block]": [4]}' '["nosuch"]' "no variant named 'nosuch'"
printf '{"axes": {"N": [32], "work[block]": [4]}, "variants": ["work"], "workloads": ["%s"]}' \
    "$ROOT/test/data/sweep-host-n96.json" > "$TMP/fileN.json"
check "a workload axis on a workload file" 1 "$S" sweep "$TMP/fileN.json" --backend host --quiet --plugin "$WORK" --out-dir "$TMP/fN"
contains "says which axes apply to files" "workload axes apply to inline workload objects, not to workload files (VARIANT[KEY] axes apply to both)"

finish
