#!/usr/bin/env bash
# The sage2 input kind as an extension asked for by id (plugin.h section 10, sagerun/sage2.h),
# host backend, with test/plugins/fake_sage2_extension.c: a variant naming "sagerun.sage2/1" with
# its parameters gets the same quantized tensors, so the same output bytes, as one of the
# 1.0/1.1 spelling (input_kind SAGERUN_INPUT_SAGE2), and other parameters give other bytes; the
# plugin's own checks (get_extension gives a working table for the id and NULL for an unknown
# one, instance_tensors is the instance's) fail its create or prepare when broken. A descriptor
# naming an unknown id, or two spellings that contradict, is refused at load with both named.
set -u
source "$(dirname "$0")/lib.sh"
P=(--plugin "$FAKES" --backend host)
H=("${P[@]}" --quiet --rounds 2 --iterations 2 --warmup 1)

check "list" 0 "$S" list "${P[@]}"
contains "an unknown input kind id is refused, the variant and the id named" \
    'variant fake-unknown-input-id: unknown input kind id "sagerun.no-such-kind/1" (this sagerun knows sagerun.sage2/1)'
contains "input_kind and input_id with other parameters are refused, both named" \
    'variant fake-input-contradiction: input_kind 1 (sage2) with its quant and input_id "sagerun.sage2/1" with input_params name different parameters'
contains "the variants asking by id load" "sage2-by-id          1.2.0"

for shape in "1,200,2,64 --kv-len 300" "2,64,4,2,64 --layout hnd"; do
    # shellcheck disable=SC2086 # the shape and its options
    check "by id and by input_kind: $shape" 3 "$S" compare "${H[@]}" --shape $shape \
        --baseline sage2-enum --variant sage2-by-id --variant sage2-both \
        --variant sage2-by-id-sm90 --variant sage2-ext-probe --json "$TMP/ext.json"
    py "the same bytes by id, other bytes with other granularities: $shape" '
import json, sys
r = json.load(open(sys.argv[1]))
exact = {v["name"]: v["byte_exact"] for v in r["variants"]}
want = {"sage2-enum": None, "sage2-by-id": True, "sage2-both": True, "sage2-by-id-sm90": False,
        "sage2-ext-probe": False}
assert all(exact[k] == w for k, w in want.items() if w is not None), exact
assert all(not v.get("error") for v in r["variants"]), [v.get("error") for v in r["variants"]]
' "$TMP/ext.json"
done

# the headers: sage2.h alone declares the library's quantizer; plugin.h still brings the sage2
# structs (source compatibility of the 1.0/1.1 spelling); both compile as C and C++
printf '#include <sagerun/sage2.h>\nsagerun_status (*f)(const sagerun_inputs *, const sagerun_sage2_quant_params *, sagerun_sage2_tensors *, sagerun_error *) = sagerun_sage2_quantize;\nconst sagerun_sage2_extension *x;\n' > "$TMP/h1.c"
printf '#include <sagerun/plugin.h>\nsagerun_sage2_quant_params q; const char *id = SAGERUN_SAGE2_EXTENSION_ID; int k = SAGERUN_INPUT_SAGE2;\n' > "$TMP/h2.c"
check "sage2.h alone declares sagerun_sage2_quantize" 0 cc -std=c11 -fsyntax-only -I"$ROOT/include" "$TMP/h1.c"
check "plugin.h brings the sage2 structs" 0 cc -std=c11 -fsyntax-only -I"$ROOT/include" "$TMP/h2.c"
if command -v c++ > /dev/null; then
    check "sage2.h in C++" 0 c++ -fsyntax-only -x c++ -I"$ROOT/include" "$TMP/h1.c"
fi
finish
