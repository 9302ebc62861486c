#!/usr/bin/env bash
# GPU check of the sage2 extension by id (plugin.h section 10): the shipped sage2 variants now name
# their input kind "sagerun.sage2/1" and take their tensors through get_extension. Their bytes must
# be what they were: the golden tests pin them, and the four agree where they agreed before.
# After tools/gpu-bundle.sh of a build of branch ext (carry .gpu); from the repository root:
#   bash test/gpu/ext-sage2-by-id.sh        (summary in $OUT/summary.txt)
set -u
cd "$(dirname "$0")/../.."
eval "$(bash tools/gpu-unpack.sh)"
OUT=${OUT:-$(mktemp -d)}
export SAGERUN_CACHE_DIR=$OUT/cache
S=build/bin/sagerun
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for t in gpu/test_sage2_golden; do # (test_ws_plugin, a host test, runs in CI)
    timeout 180 "build/test/$t" >"$OUT/${t##*/}.log" 2>&1
    say "$t rc $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/${t##*/}.log" | tr '\n' ' ')"
done
# byte-exact among the fp32-accumulating three (baseline-fp16acc is another kernel: NO expected)
for shape in "1,4096,32,8,128" "2,1000,16,16,64 --kv-len 3000" "4,1,32,8,128 --kv-len 4096"; do
    # shellcheck disable=SC2086
    timeout 120 "$S" compare --max-time 2 --quiet --shape $shape --baseline baseline \
        --variant interleave-softmax --variant warp-specialized --variant baseline-fp16acc \
        --json "$OUT/cmp.json" >"$OUT/cmp.log" 2>&1
    say "compare $shape rc $?: $(python3 -c 'import json,sys; print({v["name"]: v["byte_exact"] for v in json.load(open(sys.argv[1]))["variants"]})' "$OUT/cmp.json" 2>&1)"
done
