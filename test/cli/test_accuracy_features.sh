#!/usr/bin/env bash
# compare's accuracy check (host backend: exact attention in double over sampled rows) on a
# problem of each ABI 1.2 feature, reference against reference-mt: both measure as exact
# attention rounded once (relative L1 ~1.7e-4 in fp16, ~1.3e-3 in bf16), over every row, a
# varlen problem's rows being its packed query rows (tokens x heads). A measure that ignored a
# feature would read reference's correct output as wrong (test_accuracy feeds wrong outputs).
set -u
source "$(dirname "$0")/lib.sh"

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference '; then
    echo "SKIP: the reference plugin is not built"; exit 0
fi

# accurate NAME ROWS LIMIT OPTIONS...: both variants byte-exact, ROWS rows measured, relative L1
# at most LIMIT, cosine above 0.99999, nothing non-finite
accurate() {
    local name=$1 rows=$2 limit=$3; shift 3
    check "$name" 0 "$S" compare --backend host --baseline reference --variant reference-mt \
        --schedule fixed --warmup 1 --rounds 2 --iterations 1 --json "$TMP/r.json" "$@" ||
        return
    py "$name: accurate over $rows rows" '
import json, sys
r = json.load(open(sys.argv[1])); rows, limit = int(sys.argv[2]), float(sys.argv[3])
for v in r["variants"]:
    a = v["accuracy"]
    assert a["rows"] == rows, (v["name"], a["rows"], rows)
    assert a["relative_l1"] <= limit, (v["name"], a["relative_l1"])
    assert a["cosine_similarity"] > 0.99999, (v["name"], a["cosine_similarity"])
    assert a["nonfinite"] == 0 and a["reference"] == "fp64-host", a
    assert v["byte_exact"] is True, v["name"]
' "$TMP/r.json" "$rows" "$limit"
}

accurate "kv_len > q_len (HND)" 64 5e-4 --shape 2,16,2,1,32 --kv-len 40 --layout hnd
accurate "causal top-left, kv_len > q_len" 40 5e-4 --shape 1,20,2,32 --kv-len 33 \
    --causal=top-left
accurate "causal bottom-right, q_len > kv_len, bf16" 120 4e-3 --shape 2,30,2,1,32 --kv-len 18 \
    --causal=bottom-right --dtype bf16
accurate "window" 80 5e-4 --shape 1,40,2,1,32 --window 5,3
accurate "causal window bottom-right" 48 5e-4 --shape 1,24,2,64 --kv-len 50 --window 6,0 \
    --causal=bottom-right
accurate "softcap" 64 5e-4 --shape 1,32,2,1,64 --softcap 2
accurate "varlen: packed rows" 132 5e-4 --shape 4,1,4,2,32 --varlen 7:9,3:5,19:30,4:1 \
    --causal=bottom-right
accurate "paged" 120 5e-4 --shape 3,20,2,1,32 --kv-len 37 --page-size 8 --causal=bottom-right
accurate "varlen paged window softcap" 60 5e-4 --shape 3,1,2,32 --varlen 5:21,16:3,9:17 \
    --page-size 4 --window 6,2 --softcap 5
# more rows than the default samples: 256 of a varlen problem's 2 x 2500 packed rows
accurate "varlen, rows sampled" 256 5e-4 --shape 2,1,2,16 --varlen 1000:1200,1500:900 \
    --causal=bottom-right
finish
