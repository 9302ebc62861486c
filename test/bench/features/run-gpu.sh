#!/usr/bin/env bash
# Issue 40's GPU check of the problem features, in one device call (after tools/gpu-bundle.sh;
# carry .gpu and .dev/sage; run from the repository root with $OUT set):
#   1. the GPU tests that pin bytes and the device accuracy (golden sage2, accuracy per feature);
#   2. torch_features.py's variants against float64 attention (test/python/gpu_torch_features.py);
#   3. one compare per feature class, the torch variants judged by tolerance against exact
#      attention (device fp32), the sage2 variants by bytes where they run;
#   4. with the time left, SageAttention built and parity.py's kv_len cases (test/gpu/kvlen).
# Each step under its own limit; a summary at the end of stdout and in $OUT/summary.txt.
set -u
cd "$(dirname "$0")/../../.."
eval "$(bash tools/gpu-unpack.sh)"
OUT=${OUT:-$(mktemp -d)}
PY=/opt/torch/.venv/bin/python3
export SAGERUN_PYTHON=$PY SAGERUN_CACHE_DIR=$OUT/cache
S=build/bin/sagerun
T0=$SECONDS
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for t in test_sage2_golden test_accuracy_gpu; do
    timeout 120 "build/test/gpu/$t" >"$OUT/$t.log" 2>&1
    say "$t rc $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/$t.log" | tr '\n' ' ')"
done
grep -E "FAIL|ok " "$OUT/test_accuracy_gpu.log" | head -40
timeout 150 "$PY" test/python/gpu_torch_features.py >"$OUT/torch_features.log" 2>&1
say "gpu_torch_features rc $?"; tail -25 "$OUT/torch_features.log"
P=(--plugin examples/python/torch_features.py --max-time 2 --quiet)
TOL=(--min-cos "torch-sdpa-mask=0.9999" --min-cos "torch-flex[compile=false]=0.9999"
     --min-cos "torch-varlen=0.9999" --max-rel-l1 "torch-sdpa-mask=0.01"
     --max-rel-l1 "torch-flex[compile=false]=0.01" --max-rel-l1 "torch-varlen=0.01")
cmp_case() { # NAME ARGS...
    local name=$1; shift
    timeout 120 "$S" compare "${P[@]}" "${TOL[@]}" "$@" --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1
    say "compare $name rc $?"; grep -E "^[a-z].*(yes|NO|FAILED)|refused|error" "$OUT/$name.log" | head -12
}
cmp_case decode-q1-kv4k --shape 4,1,32,8,128 --kv-len 4096 --baseline baseline \
    --variant interleave-softmax --variant warp-specialized --variant baseline-fp16acc \
    --variant torch-sdpa-mask --variant 'torch-flex[compile=false]' --variant torch-varlen
cmp_case decode-q16-kv32k --shape 1,16,32,8,128 --kv-len 32768 --baseline baseline \
    --variant warp-specialized --variant torch-sdpa-mask --variant torch-varlen
cmp_case prefill-cache --shape 1,1024,32,8,128 --kv-len 8192 --causal=bottom-right \
    --baseline torch-sdpa-mask --variant 'torch-flex[compile=false]' --variant torch-varlen
cmp_case window --shape 1,4096,16,16,128 --causal --window 1024,0 --baseline torch-sdpa-mask \
    --variant 'torch-flex[compile=false]' --variant torch-varlen
cmp_case softcap --shape 1,2048,16,16,128 --softcap 30 --baseline 'torch-flex[compile=false]' \
    --variant 'torch-flex[compile=false]'
cmp_case varlen --shape 16,8192,16,16,128 --varlen random:100-8192:5 --causal=bottom-right \
    --baseline torch-varlen --variant 'torch-flex[compile=false]'
say "steps 1-3 in $((SECONDS - T0)) s"
left=$(( ${BUDGET:-560} - (SECONDS - T0) ))
[ $left -gt 200 ] && BUDGET=$left OUT=$OUT/kvlen bash test/gpu/kvlen/run-gpu.sh all >"$OUT/kvlen.log" 2>&1
[ -f "$OUT/kvlen/summary.txt" ] && cat "$OUT/kvlen/summary.txt" >>"$OUT/summary.txt"
tail -40 "$OUT/summary.txt"
