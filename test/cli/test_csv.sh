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

finish
