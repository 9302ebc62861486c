#!/usr/bin/env bash
# Sweep axes: a cartesian product over workload fields (4 values of N x 2 dtypes), named axes in
# the summary, the table and the CSV; bad axes named; a 5% regression on one point caught by diff.
set -u
source "$(dirname "$0")/lib.sh"

cat > "$TMP/ax.json" <<'JSON'
{"name": "ax", "baseline": "reference", "variants": ["reference-mt"], "warmup": 0, "rounds": 2,
 "iterations": 1, "defaults": {"heads_kv": 2},
 "axes": {"N": [32, 64, 96, 128], "dtype": ["fp16", "bf16"]},
 "workloads": [{"name": "small", "shape": [1, 32, 2, 64]}]}
JSON
check "a sweep over N x dtype" 0 "$S" sweep "$TMP/ax.json" --backend host --quiet --out-dir "$TMP/o" --csv "$TMP/o.csv"
contains "8 points" "sweep ax: 8 of 8 workloads"
contains "the table names the axes" "small/N=96,dtype=bf16"
py "the summary gives each point its axes; the reports hold them" '
import json, os, sys, csv
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
pts = [w["axes"] for w in s["workloads"]]
assert pts == [{"N": n, "dtype": t} for n in (32, 64, 96, 128) for t in ("fp16", "bf16")], pts
for w in s["workloads"]:
    r = json.load(open(os.path.join(d, w["report"])))
    assert r["problem"]["seq_len"] == w["axes"]["N"] and r["problem"]["dtype"] == w["axes"]["dtype"]
    assert r["problem"]["heads_kv"] == 2 and w["name"] == "small/N=%d,dtype=%s" % (w["axes"]["N"], w["axes"]["dtype"])
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 16 and rows[-1]["workload"] == "small/N=128,dtype=bf16" and rows[-1]["seq_len"] == "128"' "$TMP/o" "$TMP/o.csv"

# a shape from "defaults" was shared by every point, so each ran the last point's shape
cat > "$TMP/dshape.json" <<'JSON'
{"name": "ds", "baseline": "reference", "variants": ["reference-mt"], "warmup": 0, "rounds": 2,
 "iterations": 1, "defaults": {"shape": [1, 16, 2, 32]}, "axes": {"N": [16, 48]}, "workloads": [{"name": "w"}]}
JSON
check "an axis over a shape from defaults" 0 "$S" sweep "$TMP/dshape.json" --backend host --quiet --out-dir "$TMP/ds"
py "each point ran its own N" '
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
got = [(w["axes"]["N"], json.load(open(os.path.join(d, w["report"])))["problem"]["seq_len"]) for w in s["workloads"]]
assert got == [(16, 16), (48, 48)], got' "$TMP/ds"

# the 4096 cap was per workload, so 64 workloads x 4096 points loaded for minutes (a name check
# over every pair of 262144 workloads) before anything ran: the sweep's size is capped
python3 -c "import json,sys;json.dump({'workloads':[{'name':'w%d'%i,'shape':[1,16,1,16]} for i in range(64)],'axes':{'N':list(range(1,65)),'D':list(range(1,65))}},open(sys.argv[1],'w'))" "$TMP/huge.json"
check "64 workloads x 4096 points: refused at once" 1 timeout 20 "$S" sweep "$TMP/huge.json" --backend host --quiet \
    --shard 0/100000 --out-dir "$TMP/huge" && contains "says why" "64 workloads at 4096 points of the axes are 262144; a sweep has at most 4096"
python3 -c "import json,sys;json.dump({'workloads':[{'name':'w%d'%i,'shape':[1,16,1,16]} for i in range(4097)]},open(sys.argv[1],'w'))" "$TMP/many.json"
check "4097 workloads: refused" 1 timeout 20 "$S" sweep "$TMP/many.json" --backend host --quiet --out-dir "$TMP/many" \
    && contains "says why" "4097 workloads; a sweep has at most 4096"

bad() { # bad NAME AXES-JSON EXPECTED-TEXT
    printf '{"axes": %s, "workloads": [{"shape": [1, 32, 2, 64]}]}' "$2" > "$TMP/bad.json"
    check "$1" 1 "$S" sweep "$TMP/bad.json" --backend host --quiet --out-dir "$TMP/bad" && contains "$1: named" "$3"
}
bad "an unknown axis" '{"M": [1]}' "axes: unknown axis 'M' (B, N, Hq, D, heads_kv, dtype"
bad "a shape axis of strings" '{"N": ["big"]}' "axes.N"
bad "an empty axis" '{"dtype": []}' "axes.dtype"
bad "2 and 2.0 on one axis" '{"sm_scale": [2, 2.0]}' "axes.sm_scale: value 1 repeats value 0"
# the same point under two names (they ran twice); the bad value named, not the array
bad "two spellings of one dtype" '{"dtype": ["fp16", "bf16", "half"]}' "axes.dtype: value 2 repeats value 0"
bad "two sm_scale values of one float" '{"sm_scale": [0.1, 0.2, 0.1000000001]}' "axes.sm_scale: value 2 repeats value 0"
bad "a real on a size axis" '{"N": [16, 32.0]}' "key 'axes.N[1]': expected a size >= 1 (an integer), found 32.0"
# an axis too long for any sweep: refused at once (its repeats' pairwise scan took minutes first)
python3 -c "import json,sys;json.dump({'workloads':[{'shape':[1,16,1,32]}],'axes':{'N':list(range(1,200001))}},open(sys.argv[1],'w'))" "$TMP/long.json"
t0=$(date +%s)
check "an axis of 200000 values" 1 "$S" sweep "$TMP/long.json" --backend host --quiet --out-dir "$TMP/long" \
    && contains "an axis of 200000 values" "axes.N: 200000 values, more than 4096 combinations"
[ $(( $(date +%s) - t0 )) -lt 20 ] && echo "ok   an axis of 200000 values: refused in seconds" || fail "an axis of 200000 values: $(( $(date +%s) - t0 )) s"
bad "a bad dtype on an axis" '{"dtype": ["fp8"]}' "unsupported dtype 'fp8'"
printf '{"axes": {"N": [32]}, "workloads": ["%s"]}' "$ROOT/test/data/sweep-host-n96.json" > "$TMP/file.json"
check "axes on a workload file" 1 "$S" sweep "$TMP/file.json" --backend host --quiet --out-dir "$TMP/f"
contains "says they apply to inline workloads" "axes apply to inline workload objects"

# the same sweep with one point 5% slower: diff names that point. The sweep's rounds are made
# steady first (each variant's p50 with a 0.1% jitter): two runs share no rounds, so diff takes
# each run's rounds unpaired, and a shared CPU's spread (+-25% here) would hide the 5%
python3 - "$TMP"/o/*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    for v in r.get("variants", []):
        p = v["timing"]["p50_s"]
        for k, rd in enumerate(v["rounds"]):
            rd["p50_s"] = p * (1 + 0.001 * (k % 3 - 1))
    json.dump(r, open(path, "w"))
PY
cp -r "$TMP/o" "$TMP/slow"
python3 - "$TMP/slow/small_N_96_dtype_bf16.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = next(x for x in r["variants"] if x["label"] == "reference-mt")
scale = lambda t: {k: (x * 1.05 if k.endswith("_s") else x) for k, x in t.items()}
v["timing"] = scale(v["timing"]); v["rounds"] = [scale(t) for t in v["rounds"]]
v["samples_s"] = [[s * 1.05 for s in rd] for rd in v["samples_s"]]
json.dump(r, open(sys.argv[1], "w"))
PY
check "diff: the 5% point caught" 4 "$S" diff "$TMP/o/summary.json" "$TMP/slow/summary.json"
grep -qE "^small/N=96,dtype=bf16 +reference-mt .* slower .*SLOWER$" <<<"$out" \
    && echo "ok   the point named" || fail "the point named" "$out"
check "diff: an identical sweep passes" 0 "$S" diff "$TMP/o/summary.json" "$TMP/o/summary.json"


# ---- errors name the file's entry, not its place after the expansion; a bad name is refused ----
cat > "$TMP/ax-bad.json" <<'JSON'
{"name": "s", "variants": ["reference-mt"], "axes": {"N": [32, 48, 64, 80]},
 "workloads": [{"name": "a", "shape": [1, 32, 2, 32]}, {"name": "b", "shape": [1, 32, 2, 32], "heads_kv": 3}]}
JSON
check "a bad second workload under 4 points" 1 "$S" sweep "$TMP/ax-bad.json" --backend host --quiet
contains "its own index and the point" "ax-bad.json: workloads[1] at the point N=32: key 'heads_kv'"
cat > "$TMP/ax-name.json" <<'JSON'
{"name": "s", "variants": ["reference-mt"], "axes": {"N": [32, 48]},
 "workloads": [{"name": 5, "shape": [1, 32, 2, 32]}]}
JSON
check "a workload name that is not a string, with axes" 1 "$S" sweep "$TMP/ax-name.json" --backend host --quiet
contains "refused, not dropped" "ax-name.json: workloads[0]: key 'name' must be a non-empty string"

finish
