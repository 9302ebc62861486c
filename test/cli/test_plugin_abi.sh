#!/usr/bin/env bash
# Plugin ABI 1.1 through the CLI (host backend): a file of several variants and their parameters
# in `list`; NAME[key=value,...] in compare and run, labelled in the table and the report; bad
# specs named (usage errors, exit 1 with the key); the ABI 1.0 builds of a fake and of the
# shipped reference variant load and run byte-exact with their 1.1 twins.
set -u
source "$(dirname "$0")/lib.sh"
P=(--plugin "$FAKES" --backend host)
H=("${P[@]}" --shape 1,64,2,64 --quiet --rounds 2 --iterations 2 --warmup 1)

check "list" 0 "$S" list "${P[@]}"
contains "list: the factory's first variant" "probe                1.1.0"
contains "list: the factory's second variant" "probe-twin           1.1.0"
contains "list: a parameter, its type, default and range" \
    "param gain float = 1 [0.25, 4]: echoed into the trace"
contains "list: a bool parameter" "param fail_create bool = false [false, true]"
contains "list: the graph flag" "flags graph-capturable"
contains "list: a bad declaration is a rejection naming the key" \
    "variant fake-bad-param: parameter tile: default 512 outside its range [16, 128]"
contains "list: the ABI 1.0 fake loads" "abi10-fake           0.0.1"
contains "list: the ABI 1.0 reference loads" "abi10-reference"
# what each variant declares it does (descriptor 1.2); a 1.0/1.1 plugin declares nothing
grep -A3 "^  abi11-reference " <<<"$out" | grep -q "does: the 1.1 problem only (q_len = kv_len, dense), dtypes fp16 bf16, head_dim any" \
    && echo "ok   list: an ABI 1.1 plugin does the 1.1 problem only" \
    || fail "list: an ABI 1.1 plugin does the 1.1 problem only" "$out"
grep -A3 "^  fake-declares " <<<"$out" | grep -q "does: kv_len != q_len, causal/window bottom-right with kv_len != q_len, softcap, dtypes bf16, head_dim 64 128$" \
    && echo "ok   list: the features, dtypes and head dims a variant declares" \
    || fail "list: the features, dtypes and head dims a variant declares" "$out"
grep -A3 "^  reference " <<<"$out" | grep -q "does: kv_len != q_len, .*, sliding window, softcap, varlen, paged K/V, dtypes fp16 bf16, head_dim any" \
    && echo "ok   list: the reference does every feature" \
    || fail "list: the reference does every feature" "$out"

check "three values of one parameter in one compare" 0 "$S" compare "${H[@]}" \
    --baseline 'probe[gain=1]' --variant 'probe[gain=0.5]' --variant 'probe[gain=2]' \
    --variant probe-twin --json "$TMP/params.json"
py "report: each value its own labelled entry, byte-exact (gain changes nothing)" '
import json, sys
r = json.load(open(sys.argv[1]))
names = [v["name"] for v in r["variants"]]
want = ["probe[fail_create=false,fail_prepare=0,gain=%s]" % g for g in ("1", "0.5", "2")]
assert names == want + ["probe-twin"], names
for v in r["variants"]:
    assert v["label"] == v["name"] and v["byte_exact"] in (True, None), v["name"]
' "$TMP/params.json"

check "a refused prepare fails its entry, naming it" 1 "$S" compare "${H[@]}" \
    --baseline probe --variant 'probe[fail_prepare=3]'
contains "refused prepare: named" \
    "probe[fail_create=false,fail_prepare=3,gain=1] failed: prepare: variant probe: prepare failed"

for bad in "probe[bogus=1]|unknown parameter 'bogus' (its parameters: fail_create, fail_prepare, gain)" \
           "probe[gain=9]|parameter gain=9 is outside [0.25, 4]" \
           "probe[fail_prepare=1.5]|fail_prepare=1.5 is not an integer" \
           "probe[gain=1|want NAME[key=value,...]" \
           "abi10-fake[x=1]|variant abi10-fake takes no parameters"; do
    spec=${bad%%|*} msg=${bad#*|}
    check "bad spec $spec" 1 "$S" compare "${H[@]}" --baseline probe --variant "$spec" \
        && contains "bad spec $spec: named" "--variant $spec: " \
        && contains "bad spec $spec: why" "$msg"
done

check "run a bound variant" 0 "$S" run "${P[@]}" --variant 'probe[gain=3]' --shape 1,64,2,64 \
    --iterations 1 --warmup 0
check "run: a bad value" 1 "$S" run "${P[@]}" --variant 'probe[gain=0]' --shape 1,64,2,64
contains "run: a bad value: named" "parameter gain=0 is outside [0.25, 4]"

check "ABI 1.0 builds run byte-exact with their 1.1 twins" 0 "$S" compare "${H[@]}" \
    --baseline reference --variant abi10-reference --json "$TMP/abi10.json"
py "report: abi10-reference is byte-exact with reference" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {v["name"]: v for v in r["variants"]}
assert v["abi10-reference"]["byte_exact"] is True, v["abi10-reference"]
assert v["abi10-reference"]["path"].endswith("abi10_reference.so")
' "$TMP/abi10.json"
check "ABI 1.1 builds (sagerun_problem before it grew) run byte-exact with their 1.2 twins" 0 \
    "$S" compare "${H[@]}" --baseline reference --variant abi11-reference --json "$TMP/abi11.json"
py "report: abi11-reference is byte-exact with reference" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {v["name"]: v for v in r["variants"]}
assert v["abi11-reference"]["byte_exact"] is True, v["abi11-reference"]
' "$TMP/abi11.json"
check "an ABI 1.1 build is refused a kv_len it cannot state" 1 "$S" run "${P[@]}" \
    --variant abi11-reference --shape 1,16,2,64 --kv-len 24
contains "the refusal names the feature" "does not declare kv_len != q_len"
# every feature a variant does not declare is refused before it runs, named (the ABI 1.1 build
# declares none; causal where q_len = kv_len needs none)
while IFS='|' read -r opts feature; do
    # shellcheck disable=SC2086 # the options split into words
    check "undeclared: $feature" 1 "$S" run "${P[@]}" --variant abi11-reference \
        --shape 1,16,2,64 $opts --iterations 1 --warmup 0
    contains "... named" "variant abi11-reference does not declare $feature, which the problem needs"
done <<'CASES'
--kv-len 24 --causal|kv_len != q_len
--window 4,0|sliding window
--softcap 10|softcap
--varlen 5,9|varlen
--page-size 4|paged K/V
CASES
check "causal where q_len = kv_len needs no feature" 0 "$S" run "${P[@]}" \
    --variant abi11-reference --shape 1,16,2,64 --causal=bottom-right --iterations 1 --warmup 0
# the alignment where lengths differ: a variant declaring kv_len and bottom-right only
check "undeclared: causal top-left with kv_len != q_len" 1 "$S" run "${P[@]}" \
    --variant fake-declares --shape 1,16,2,64 --kv-len 24 --causal=top-left --iterations 1 \
    --warmup 0
contains "... named" "does not declare causal/window top-left with kv_len != q_len"
finish
