#!/usr/bin/env bash
# compare --csv: one row per variant with the numbers of the JSON report; bad outputs refused
# before anything is measured.
set -u
source "$(dirname "$0")/lib.sh"
H=(--backend host --shape 1,64,2,64 --rounds 4 --iterations 2 --warmup 0 --quiet)

check "compare --csv" 0 "$S" compare "${H[@]}" --csv "$TMP/r.csv" --json "$TMP/r.json"
py "the CSV holds the report's numbers" '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = json.load(open(sys.argv[2]))
assert [x["variant"] for x in rows] == [v["label"] for v in r["variants"]], rows
for row, v in zip(rows, r["variants"]):
    assert row["is_baseline"] == ("true" if v["is_baseline"] else "false")
    assert int(row["count"]) == v["timing"]["count"]
    for k in ("p50_s", "min_s", "p90_s", "mean_s"):
        assert abs(float(row[k]) - v["timing"][k]) <= 1e-8 * v["timing"][k], (k, row[k], v["timing"][k])
    assert row["byte_exact"] == "true" and row["output_sha256"] == v["output_sha256"]
    assert row["dtype"] == "fp16" and row["layout"] == "NHD" and row["seq_len"] == "64"
    iv = v["speedup_interval_percent"]
    if iv:
        assert abs(float(row["speedup_low_percent"]) - iv["low"]) < 1e-6 * max(1, abs(iv["low"]))
        assert row["verdict"] == v["verdict"]
        assert row["instances"] == str(iv.get("instances", "")), (row["instances"], iv)
    else:
        assert row["speedup_low_percent"] == "" and row["verdict"] == ""
assert rows[0]["speedup_percent"] == "0" and rows[0]["failure"] == ""' "$TMP/r.csv" "$TMP/r.json"

check "compare --csv - writes to stdout" 0 "$S" compare "${H[@]}" --csv -
contains "the header" "variant,is_baseline,backend,batch,seq_len"
contains "a row" "reference-mt,false,host,1,64,2,2,64,NHD,fp16,false,8,"

# a failed variant: its reason, quoted where it holds a comma
check "a failing variant" 1 env SAGERUN_TEST_FAULTS=1 "$S" compare "${H[@]}" --plugin "$FAKES/fault_error_run.so" \
    --variant fault-error-run --csv "$TMP/f.csv"
py "the failure is in its row, one row per variant" '
import csv, sys
rows = {x["variant"]: x for x in csv.DictReader(open(sys.argv[1]))}
assert rows["fault-error-run"]["failure"], rows
assert rows["fault-error-run"]["p50_s"] == "", rows["fault-error-run"]' "$TMP/f.csv"

check "--csv into a missing folder" 1 "$S" compare "${H[@]}" --csv "$TMP/nope/r.csv"
contains "names the option" "--csv"
check "--csv and --json on one file" 1 "$S" compare "${H[@]}" --csv "$TMP/same" --json "$TMP/same"
contains "says so" "--json and --csv name the same file"

# sweep --csv: every workload's rows, the workload first
check "sweep --csv" 0 "$S" sweep "$ROOT/test/data/sweep-host.json" --backend host --quiet \
    --out-dir "$TMP/sw" --csv "$TMP/sw.csv"
py "one row per workload and variant, with the reports' numbers" '
import csv, json, sys, os
rows = list(csv.DictReader(open(sys.argv[1])))
s = json.load(open(os.path.join(sys.argv[2], "summary.json")))
want = [(w["name"], v["label"]) for w in s["workloads"] for v in w["variants"]]
assert [(r["workload"], r["variant"]) for r in rows] == want, rows
for r in rows:
    rep = json.load(open(os.path.join(sys.argv[2], r["workload"] + ".json")))
    v = next(x for x in rep["variants"] if x["label"] == r["variant"])
    assert abs(float(r["p50_s"]) - v["timing"]["p50_s"]) <= 1e-8 * v["timing"]["p50_s"]
    assert r["seq_len"] == str(rep["problem"]["seq_len"])' "$TMP/sw.csv" "$TMP/sw"
# a workload that failed has a row that says why (it was left out: a sweep whose workloads all
# failed wrote a header alone, which read as an empty, successful sweep)
cat > "$TMP/swf.json" <<'E'
{"name": "f", "baseline": "reference", "variants": ["reference-mt"], "rounds": 2, "iterations": 1,
 "warmup": 0, "workloads": [{"name": "ok", "shape": [1, 32, 1, 32]}, {"name": "gone",
 "shape": [1, 32, 1, 32], "input": {"source": "safetensors", "path": "gone.safetensors"}}]}
E
check "sweep --csv, a workload failing" 1 "$S" sweep "$TMP/swf.json" --backend host --quiet \
    --out-dir "$TMP/swf" --csv "$TMP/swf.csv"
py "its row says why, the others are whole" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["workload"], r["variant"]) for r in rows] == [("ok", "reference"), ("ok", "reference-mt"),
                                                         ("gone", "")], rows
assert rows[2]["failure"].startswith("no report (status error: ") and "gone.safetensors" in rows[2]["failure"], rows[2]
assert rows[2]["p50_s"] == "" and rows[0]["p50_s"] != "", rows' "$TMP/swf.csv"
check "sweep --csv into a missing folder, before running" 1 "$S" sweep "$ROOT/test/data/sweep-host.json" \
    --backend host --quiet --out-dir "$TMP/sw2" --csv "$TMP/nope/x.csv"
contains "names it" "--csv"
[ ! -e "$TMP/sw2/summary.json" ] && echo "ok   nothing ran" || fail "nothing ran"

# an output of - is stdout alone: the table goes to stderr (it came first on stdout, so
# `--json - | jq` failed)
"$S" compare --backend host --quiet --shape 1,32,1,32 --rounds 2 --iterations 1 --warmup 0 \
    --json - 2>"$TMP/cmp.err" | python3 -c "import json, sys; json.load(sys.stdin)" \
    && grep -q "^reference " "$TMP/cmp.err" \
    && echo "ok   compare --json -: JSON alone on stdout, the table on stderr" \
    || fail "compare --json -" "$(cat "$TMP/cmp.err")"
"$S" compare --backend host --quiet --shape 1,32,1,32 --rounds 2 --iterations 1 --warmup 0 \
    --csv - 2>/dev/null | python3 -c "import csv, sys; r = list(csv.DictReader(sys.stdin)); assert [x['variant'] for x in r] == ['reference', 'reference-mt'], r" \
    && echo "ok   compare --csv -: CSV alone on stdout" || fail "compare --csv -"
"$S" diff "$TMP/sw/n32.json" "$TMP/sw/n32.json" --json - 2>/dev/null \
    | python3 -c "import json, sys; assert len(json.load(sys.stdin)['rows']) == 2" \
    && echo "ok   diff --json -: JSON alone on stdout" || fail "diff --json -"
"$S" sweep "$ROOT/test/data/sweep-host.json" --backend host --quiet --rounds 2 --iterations 1 \
    --warmup 0 --variant reference --out-dir "$TMP/sw3" --csv - 2>/dev/null \
    | python3 -c "import csv, sys; r = list(csv.DictReader(sys.stdin)); assert len(r) == 6 and all(x['workload'] for x in r), r" \
    && echo "ok   sweep --csv -: CSV alone on stdout" || fail "sweep --csv -"

finish
