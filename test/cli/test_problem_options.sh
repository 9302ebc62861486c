#!/usr/bin/env bash
# The problem of ABI 0.2 from the command line, workload files and sweeps: --kv-len, --causal=ALIGN,
# --window, --softcap, --varlen, --page-size accepted by run, compare and profile and run on the
# host; every malformed value refused with the option and the value named; where they apply
# (--workload, --inputs); each workload-file key round-tripping through `workload show`; a sweep
# over kv_len and page_size.
set -u
source "$(dirname "$0")/lib.sh"

R=(run --backend host --variant reference --shape 2,16,2,64 --iterations 1 --warmup 0)

# ---- every option runs on the reference ------------------------------------------------------
for opts in "--kv-len 40" "--kv-len 8 --causal" "--kv-len 40 --causal=bottom-right" \
            "--kv-len 40 --causal=top-left" "--window 4,0 --causal" "--window 3,5" \
            "--window -1,2 --kv-len 24" "--softcap 5" "--softcap 0.5 --causal" \
            "--varlen 10,30,7" "--varlen 1:20,16:8" "--varlen random:4-40:7" "--page-size 8" \
            "--page-size 5 --kv-len 21" "--varlen 5:30,20 --page-size 8 --causal=bottom-right" \
            "--varlen 9,3:17 --window 2,0 --causal --softcap 10 --page-size 4"; do
    # shellcheck disable=SC2086 # the options split into words
    check "run $opts" 0 "$S" "${R[@]}" $opts
done
check "the run line states the problem" 0 "$S" "${R[@]}" --varlen 5:30,20 --page-size 8 \
    --causal=bottom-right --window 3,0 --softcap 20
contains "states it" \
    "causal bottom-right window 3,0 softcap 20 varlen 2 sequences (25 queries, 50 keys) paged 7 pages of 8"
check "random lengths: B of them from the shape" 0 "$S" run --backend host --variant reference \
    --shape 5,16,2,64 --varlen random:3-9:1 --iterations 1 --warmup 0
contains "five sequences" "varlen 5 sequences"
check "compare takes them" 0 "$S" compare --backend host --baseline reference --variant reference-mt \
    --shape 2,16,2,64 --varlen 7:19,12 --page-size 4 --causal=bottom-right --softcap 8 \
    --warmup 0 --rounds 2 --iterations 1 --json "$TMP/cmp.json"
py "the report holds the problem" '
import json, sys
p = json.load(open(sys.argv[1]))["problem"]
assert p["align"] == "bottom-right" and p["softcap"] == 8 and p["page_size"] == 4, p
assert p["varlen"] == {"q_lens": [7, 12], "kv_lens": [19, 12]}, p["varlen"]' "$TMP/cmp.json"
check "profile takes them" 0 "$S" profile --backend host --variant reference --shape 1,16,2,64 \
    --kv-len 20 --window 2,2 --warmup 0

# --align: the diagonal of a window without causal (FlashAttention aligns its window bottom-right)
check "--align bottom-right with a window, no causal" 0 "$S" "${R[@]}" --kv-len 40 --window 4,2 \
    --align bottom-right
contains "... stated" "kv_len 40"
a=$("$S" workload show --shape 2,16,2,64 --kv-len 40 --window 4,2 --align bottom-right 2>&1)
b=$("$S" workload show --shape 2,16,2,64 --kv-len 40 --window 4,2 2>&1)
grep -q '"align": "bottom-right"' <<<"$a" && ! grep -q '"align"' <<<"$b" \
    && echo "ok   workload show: align written where not the default" \
    || fail "workload show: align" "$a"
echo "$a" > "$TMP/align.json"
check "workload show of the shown align file" 0 "$S" workload show "$TMP/align.json"
[ "$out" = "$a" ] && echo "ok   ... the same" || fail "align round trip" "$out"
check "--causal=top-left and --align bottom-right: refused" 2 "$S" "${R[@]}" --kv-len 40 \
    --causal=top-left --align bottom-right
contains "... named" "--causal and --align name two alignments"
check "--align x: refused" 2 "$S" "${R[@]}" --align x
contains "... named" "--align 'x': expected top-left or bottom-right"
printf '{"shape": [2, 16, 2, 64], "causal": "top-left", "align": "bottom-right"}' > "$TMP/al2.json"
check "workload: align against causal" 1 "$S" workload show "$TMP/al2.json"
contains "... named" "key 'align' is \"bottom-right\" but key 'causal' says \"top-left\""

# ---- malformed values: refused, the option and the value named -------------------------------
bad() { # bad NAME EXPECTED-TEXT OPTIONS...
    local name=$1 text=$2; shift 2
    check "$name: refused" 2 "$S" "${R[@]}" "$@" && contains "$name: named" "$text"
}
bad "kv_len 0" "run: --kv-len '0': expected an integer from 1" --kv-len 0
bad "kv_len x" "--kv-len 'x'" --kv-len x
bad "window -2,3" "run: --window '-2,3': expected L,R" --window -2,3
bad "window 3" "--window '3': expected L,R" --window 3
bad "window 1,2,3" "--window '1,2,3'" --window 1,2,3
bad "window a,b" "--window 'a,b'" --window a,b
bad "softcap -1" "run: --softcap '-1': expected a decimal number >= 0" --softcap -1
bad "softcap nan" "--softcap 'nan'" --softcap nan
bad "varlen ''" "run: --varlen '': an empty SPEC" --varlen ""
bad "varlen 0,5" "run: --varlen '0,5': entry 0: '0': expected a length or Q:K" --varlen 0,5
bad "varlen 3:" "--varlen '3:': entry 0: '3:'" --varlen 3:
bad "varlen 4,,5" "--varlen '4,,5': entry 1: ''" --varlen 4,,5
bad "varlen 1:2:3" "--varlen '1:2:3'" --varlen 1:2:3
bad "varlen random:9-3:1" "--varlen 'random:9-3:1': random: MIN 9 is more than MAX 3" --varlen random:9-3:1
bad "varlen random:1-3" "--varlen 'random:1-3': expected random:MIN-MAX:SEED" --varlen random:1-3
bad "page-size 0" "run: --page-size '0': expected an integer from 1" --page-size 0
bad "causal=middle" "run: --causal='middle': expected top-left or bottom-right" --causal=middle
bad "varlen with HND" "--varlen: varlen tensors are NHD only" --varlen 4,5 --layout hnd
bad "page-size with HND" "--page-size: paged tensors are NHD only" --page-size 4 --layout hnd
bad "kv-len with varlen" "--kv-len and --varlen exclude each other" --kv-len 8 --varlen 4,5
# values fine alone, wrong together: the library's check, the option named
check "window right with causal: refused" 1 "$S" "${R[@]}" --window 0,3 --causal
contains "window right with causal: named" "--window '0,3': window right 3 with causal"

# ---- where they apply: --kv-len/--varlen/--page-size not to a file; --window/--softcap as
# --causal (to --inputs, not to --workload) --------------------------------------------------------
printf '{"shape": [1, 16, 2, 64]}' > "$TMP/plain.json"
for o in "--kv-len 8" "--varlen 4,5" "--page-size 4" "--window 1,1" "--softcap 3" "--causal=bottom-right"; do
    # shellcheck disable=SC2086
    check "$o with --workload: refused" 2 "$S" run --backend host --variant reference \
        --workload "$TMP/plain.json" $o \
        && contains "$o with --workload: named" "${o%%[ =]*} applies to --shape"
done
check "saved inputs" 0 "$S" run --backend host --variant reference --shape 1,16,2,64 \
    --iterations 1 --warmup 0 --save-inputs "$TMP/in.safetensors"
for o in "--kv-len 8" "--varlen 4,5" "--page-size 4"; do
    # shellcheck disable=SC2086
    check "$o with --inputs: refused" 2 "$S" run --backend host --variant reference \
        --inputs "$TMP/in.safetensors" $o && contains "$o with --inputs: named" \
        "${o%% *} applies to --shape and the default workload, not to --inputs"
done
check "--window and --softcap apply to --inputs" 0 "$S" run --backend host --variant reference \
    --inputs "$TMP/in.safetensors" --window 2,0 --causal --softcap 4 --iterations 1 --warmup 0
contains "they are used" "causal window 2,0 softcap 4"

# ---- workload files: each key round-trips through `workload show` -----------------------------
cat > "$TMP/all.json" <<'JSON'
{"shape": [3, 64, 4, 64], "heads_kv": 2, "causal": "bottom-right", "window": [8, 0],
 "softcap": 30, "varlen": ["16:64", 7, "5:9"], "page_size": 16}
JSON
check "workload show: every key" 0 "$S" workload show "$TMP/all.json"
echo "$out" > "$TMP/all-shown.json"
py "shown as given" '
import json, sys
w = json.load(open(sys.argv[1]))
assert w["causal"] == "bottom-right" and w["window"] == [8, 0] and w["softcap"] == 30, w
assert w["varlen"] == ["16:64", 7, "5:9"] and w["page_size"] == 16 and "kv_len" not in w, w
assert w["shape"] == [3, 16, 4, 64], w["shape"]' "$TMP/all-shown.json"
check "workload show of the shown file" 0 "$S" workload show "$TMP/all-shown.json"
[ "$out" = "$(cat "$TMP/all-shown.json")" ] && echo "ok   the shown file shows the same" \
    || fail "the shown file shows the same" "$out"
printf '{"shape": [2, 32, 2, 64], "kv_len": 48, "causal": true}' > "$TMP/kv.json"
check "workload show: kv_len" 0 "$S" workload show "$TMP/kv.json"
contains "kv_len shown" '"kv_len": 48' && contains "causal true: top-left" '"causal": true'
printf '{"shape": [4, 32, 2, 64], "varlen": "random:3-40:11"}' > "$TMP/rand.json"
check "workload show: random lengths" 0 "$S" workload show "$TMP/rand.json"
py "four lengths, written out" '
import json, sys
w = json.loads(sys.argv[1])
assert len(w["varlen"]) == 4 and all(3 <= n <= 40 for n in w["varlen"]), w["varlen"]
assert w["shape"][0] == 4 and w["shape"][1] == max(w["varlen"]), w["shape"]' "$out"
# workload show of the options: the workload run and compare would make, random lengths written out
check "workload show of options" 0 "$S" workload show --shape 4,64,2,64 --varlen random:3-40:1 \
    --page-size 8 --causal=bottom-right --softcap 2.5 --window 7,-1
echo "$out" > "$TMP/opts-shown.json"
py "the options shown" '
import json, sys
w = json.load(open(sys.argv[1]))
assert len(w["varlen"]) == 4 and all(3 <= n <= 40 for n in w["varlen"]), w["varlen"]
assert w["page_size"] == 8 and w["causal"] == "bottom-right" and w["softcap"] == 2.5, w
assert w["window"] == [7, -1] and w["shape"] == [4, max(w["varlen"]), 2, 64], w' "$TMP/opts-shown.json"
check "the same options, the same lengths" 0 "$S" workload show --shape 4,64,2,64 \
    --varlen random:3-40:1 --page-size 8 --causal=bottom-right --softcap 2.5 --window 7,-1
[ "$out" = "$(cat "$TMP/opts-shown.json")" ] && echo "ok   random lengths are the seed's" \
    || fail "random lengths are the seed's" "$out"
check "workload show: a bad option value" 2 "$S" workload show --kv-len 0
contains "named" "workload show: --kv-len '0': expected an integer from 1"
check "workload show: a file and options" 2 "$S" workload show "$TMP/kv.json" --kv-len 3
contains "says so" "expected 'workload show [FILE]' or 'workload show [workload options]'"
badfile() { # badfile NAME JSON-KEYS EXPECTED-TEXT
    printf '{"shape": [1, 16, 2, 64], %s}' "$2" > "$TMP/bad.json"
    check "$1: refused" 1 "$S" workload show "$TMP/bad.json" && contains "$1: named" "$3"
}
badfile "file kv_len 0" '"kv_len": 0' "bad.json: key 'kv_len': 0: expected an integer from 1"
badfile "file window [-2, 3]" '"window": [-2, 3]' "bad.json: key 'window': [-2,3]: expected [L, R]"
badfile "file softcap -1" '"softcap": -1' "bad.json: key 'softcap': -1: expected a finite number >= 0"
badfile "file varlen \"\"" '"varlen": ""' "bad.json: key 'varlen': '': an empty SPEC"
badfile "file varlen [0, 5]" '"varlen": [0, 5]' "bad.json: key 'varlen[0]': '0'"
badfile "file varlen 3:" '"varlen": ["3:"]' "bad.json: key 'varlen[0]': '3:'"
badfile "file varlen random:9-3:1" '"varlen": "random:9-3:1"' \
    "key 'varlen': 'random:9-3:1': random: MIN 9 is more than MAX 3"
badfile "file page_size 0" '"page_size": 0' "bad.json: key 'page_size': 0: expected an integer from 1"
badfile "file varlen HND" '"varlen": [3], "layout": "HND"' "key 'varlen': varlen tensors are NHD only"
badfile "file causal middle" '"causal": "middle"' \
    "key 'causal' must be a boolean, \"top-left\" or \"bottom-right\" (not \"middle\")"
check "run a workload file of every key" 0 "$S" run --backend host --variant reference \
    --workload "$TMP/all.json" --iterations 1 --warmup 0

# ---- sweeps over kv_len and page_size (and window) ---------------------------------------------
cat > "$TMP/kp.json" <<'JSON'
{"name": "kp", "baseline": "reference", "variants": ["reference-mt"], "warmup": 0, "rounds": 2,
 "iterations": 1, "axes": {"kv_len": [16, 48], "page_size": [4, 16], "window": [[4, 0], [-1, -1]]},
 "workloads": [{"name": "p", "shape": [2, 32, 2, 64], "causal": "bottom-right"}]}
JSON
check "a sweep over kv_len x page_size x window" 0 "$S" sweep "$TMP/kp.json" --backend host --quiet \
    --out-dir "$TMP/kp"
contains "8 points" "sweep kp: 8 of 8 workloads"
py "every point ran with its own kv_len and page_size" '
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
assert len(s["workloads"]) == 8, s["workloads"]
seen = set()
for w in s["workloads"]:
    r = json.load(open(os.path.join(d, w["report"])))
    p, a = r["problem"], w["axes"]
    assert p["kv_len"] == a["kv_len"] and p["page_size"] == a["page_size"], (p, a)
    assert (p["window"] or [-1, -1]) == a["window"], (p["window"], a)
    assert all(v["byte_exact"] for v in r["variants"]), r["variants"]
    seen.add((a["kv_len"], a["page_size"], tuple(a["window"])))
assert len(seen) == 8, seen' "$TMP/kp"
printf '{"axes": {"kv_len": [0]}, "workloads": [{"shape": [1, 32, 2, 64]}]}' > "$TMP/bad-axis.json"
check "a kv_len axis of 0: refused" 1 "$S" sweep "$TMP/bad-axis.json" --backend host --quiet \
    --out-dir "$TMP/ba"
contains "named" "key 'axes.kv_len[0]': expected a size >= 1 (an integer), found 0"

# ---- help -----------------------------------------------------------------------------------------
for cmd in run compare profile; do
    check "$cmd --help" 0 "$S" "$cmd" --help
    for o in "--kv-len K" "--causal[=ALIGN]" "--window L,R" "--softcap X" "--varlen SPEC" "--page-size P"; do
        contains "$cmd --help: $o" "$o"
    done
done
check "sweep --help" 0 "$S" sweep --help
contains "sweep --help: the axes" "kv_len, softcap, window, varlen and page_size"
check "workload --help" 0 "$S" workload --help
contains "workload --help: the keys" "page_size"
finish
