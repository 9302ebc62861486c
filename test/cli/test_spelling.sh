#!/usr/bin/env bash
# One spelling of dtypes everywhere, run's workload options equal compare's, `sagerun help CMD`,
# and a bad option said in one line.
set -u
source "$(dirname "$0")/lib.sh"

# ---- sagerun help CMD prints CMD --help ---------------------------------------------------------
for cmd in compare run list workload show diff plot sweep merge; do
    want=$("$S" "$cmd" --help 2>&1)
    check "help $cmd" 0 "$S" help "$cmd"
    [ "$out" = "$want" ] && [ -n "$want" ] || fail "help $cmd prints what '$cmd --help' prints" "$out"
done
check "help of an unknown command" 2 "$S" help frob && contains "names it" "help: unknown command 'frob'"

# ---- a bad option: one line naming it and where the help is ----------------------------------------
for cmd in compare run list show diff plot sweep merge; do
    check "$cmd --frob is usage" 2 "$S" "$cmd" --frob
    contains "$cmd --frob named" "$cmd: unknown option '--frob' (see 'sagerun help $cmd')"
    [ "$(wc -l <<<"$out")" -eq 1 ] || fail "$cmd --frob: one line, not the usage" "$out"
done
check "a missing value is usage" 2 "$S" compare --json
contains "names the option" "compare: missing value for option '--json'"
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "missing value: one line" "$out"
check "plot -o without a file" 2 "$S" plot -o && contains "names -o" "missing value for option '-o'"
check "workload frob" 2 "$S" workload frob && contains "workload says what it takes" "expected 'workload show [FILE]'"

# ---- run takes compare's workload options --------------------------------------------------------
for opt in --workload --inputs --shape --layout --dtype --causal --seed; do
    "$S" run --help | grep -q -- "^  $opt" && "$S" compare --help | grep -q -- "^  $opt" \
        && echo "ok   run and compare document $opt" || fail "run and compare document $opt"
done
run_wl=$("$S" run --help | sed -n '/^workload (one of/,/^  --seed/p')
cmp_wl=$("$S" compare --help | sed -n '/^workload (one of/,/^  --seed/p')
[ -n "$run_wl" ] && [ "$run_wl" = "$cmp_wl" ] && echo "ok   run and compare have one workload help" \
    || fail "one workload help" "$run_wl"

# ---- dtype spellings: the same bytes for every spelling of one dtype ------------------------------
hash_of() { "$S" run --variant reference --shape 1,64,2,64 --iterations 1 --warmup 0 "$@" 2>&1 | sed -n 's/^output_sha256 //p'; }
h_default=$(hash_of)
for word in fp16 f16 float16 half FP16 F16; do
    h=$(hash_of --dtype "$word")
    [ -n "$h" ] && [ "$h" = "$h_default" ] && echo "ok   --dtype $word is fp16" || fail "--dtype $word is fp16 ('$h' vs '$h_default')"
done
h_bf16=$(hash_of --dtype bf16)
[ -n "$h_bf16" ] && [ "$h_bf16" != "$h_default" ] && echo "ok   bf16 differs from fp16" || fail "bf16 differs from fp16"
for word in bfloat16 BF16; do
    h=$(hash_of --dtype "$word")
    [ "$h" = "$h_bf16" ] && echo "ok   --dtype $word is bf16" || fail "--dtype $word is bf16 ('$h' vs '$h_bf16')"
done
check "run shows the canonical dtype" 0 "$S" run --variant reference --shape 1,64,2,64 --iterations 1 --warmup 0 --dtype bfloat16
contains "bf16 in the workload line" "[1, 64, 2, 64] Hkv 2 NHD bf16"
check "run --dtype fp8 is usage" 2 "$S" run --variant reference --dtype fp8
contains "names the value and the words" "run: --dtype 'fp8': expected fp16 (or f16, float16, half) or bf16 (or bfloat16)"
check "compare --dtype fp8 is usage" 2 "$S" compare --dtype fp8 && contains "compare names it" "compare: --dtype 'fp8'"
check "run --causal" 0 "$S" run --variant reference --shape 1,64,2,64 --causal --iterations 1 --warmup 0
contains "the workload line says causal" "[1, 64, 2, 64] Hkv 2 NHD fp16 causal"
check "run --dtype with a workload file" 2 "$S" run --variant reference --dtype bf16 --workload /nonexistent.json
contains "says --dtype is for --shape" "--dtype applies to --shape and the default workload, not to --workload"

# workload files take every spelling; `workload show` writes the canonical one
for word in f16 fp16 float16 half bf16 bfloat16 BF16; do
    printf '{"shape": [1, 64, 2, 64], "dtype": "%s"}' "$word" > "$TMP/w-$word.json"
    check "workload file dtype $word" 0 "$S" workload show "$TMP/w-$word.json"
    want=fp16; case $word in bf16|bfloat16|BF16) want=bf16;; esac
    contains "workload $word written as $want" "\"dtype\": \"$want\""
done
printf '{"shape": [1, 64, 2, 64], "dtype": "fp8"}' > "$TMP/w-bad.json"
check "workload file dtype fp8" 1 "$S" workload show "$TMP/w-bad.json"
contains "names file, key and value" "w-bad.json: key 'dtype': unsupported dtype 'fp8' (expected fp16"

# reports carry one form: the words of sagerun_dtype_word
check "compare --dtype float16" 0 "$S" compare --backend host --shape 1,64,2,64 --dtype float16 \
    --rounds 2 --iterations 1 --warmup 0 --no-accuracy --json "$TMP/f16.json" --quiet
contains "the table says fp16" "NHD fp16"
check "compare --dtype bfloat16" 0 "$S" compare --backend host --shape 1,64,2,64 --dtype bfloat16 \
    --rounds 2 --iterations 1 --warmup 0 --no-accuracy --json "$TMP/bf16.json" --quiet
py "reports write fp16 and bf16" '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["problem"]["dtype"] == "fp16", a["problem"]["dtype"]
assert b["problem"]["dtype"] == "bf16", b["problem"]["dtype"]' "$TMP/f16.json" "$TMP/bf16.json"
# an older report's "BF16" still reads as bf16
sed 's/"dtype": *"bf16"/"dtype": "BF16"/' "$TMP/bf16.json" > "$TMP/old.json"
check "show reads an older BF16 report" 0 "$S" show "$TMP/old.json" && contains "shown as bf16" "NHD bf16"

finish
