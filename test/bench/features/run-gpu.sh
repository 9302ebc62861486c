#!/usr/bin/env bash
# Issue 40's GPU check of the problem features, in one device call (after tools/gpu-bundle.sh;
# carry .gpu, and .dev/sage for the kvlen step; run from the repository root with $OUT set):
#   bytes    the GPU tests that pin bytes and the device accuracy (golden sage2, accuracy per
#            feature);
#   torch    torch_features.py's variants against float64 attention, paged caches included
#            (test/python/gpu_torch_features.py);
#   compare  one compare per feature class (COMPARES: their names, default all), the torch
#            variants judged by tolerance against exact attention (device fp32), the sage2
#            variants by bytes where they run;
#   kvlen    with the time left (BUDGET s in all, 560 by default; a compare starts only with
#            60 s left), SageAttention built and parity.py's kv_len cases.
#   STEPS="bytes torch compare kvlen" (the default) picks the steps.
# A summary at the end of stdout and in $OUT/summary.txt; every log in $OUT/logs.tar.xz (the
# device tool brings back only a few files).
set -u
cd "$(dirname "$0")/../../.."
eval "$(bash tools/gpu-unpack.sh)"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT/logs"
L=$OUT/logs
PY=/opt/torch/.venv/bin/python3
export SAGERUN_PYTHON=$PY SAGERUN_CACHE_DIR=$OUT/cache
S=build/bin/sagerun
T0=$SECONDS
STEPS=${STEPS:-bytes torch compare kvlen}
COMPARES=${COMPARES:-decode-q1-kv4k decode-q16-kv32k decode-q1-kv128k decode-q16-kv128k prefill-cache window softcap varlen paged-16 paged-256}
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
finish() {
    tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs
    rm -rf "$L" "$OUT/cache"
    tail -60 "$OUT/summary.txt"
}
trap finish EXIT
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

if has "$STEPS" bytes; then
    for t in test_sage2_golden test_accuracy_gpu; do
        timeout 120 "build/test/gpu/$t" >"$L/$t.log" 2>&1
        say "$t rc $?: $(grep -E '^\[  (PASSED|FAILED)' "$L/$t.log" | tr '\n' ' ')"
    done
fi
if has "$STEPS" torch; then
    timeout 200 "$PY" test/python/gpu_torch_features.py >"$L/torch_features.log" 2>&1
    say "gpu_torch_features rc $?"
    grep -E "^(torch|ok|FAIL|ERROR|UNSUPPORTED)|failure" "$L/torch_features.log" | tee -a "$OUT/summary.txt"
fi

P=(--plugin examples/python/torch_features.py --max-time 2 --quiet)
TOL=()
for v in torch-sdpa-mask 'torch-flex[compile=false]' torch-flex torch-varlen; do
    TOL+=(--min-cos "$v=0.9999" --max-rel-l1 "$v=0.01")
done
TOL+=(--min-cos baseline-fp16acc=0.99 --max-rel-l1 baseline-fp16acc=0.05)
cmp_case() { # NAME ARGS...: runs it when NAME is in COMPARES
    local name=$1; shift
    has "$COMPARES" "$name" || return 0
    local left=$(( ${BUDGET:-560} - (SECONDS - T0) ))
    if [ $left -lt 60 ]; then say "compare $name skipped: ${left} s left of BUDGET"; return 0; fi
    timeout $(( left < 200 ? left - 10 : 190 )) "$S" compare "${P[@]}" "${TOL[@]}" "$@" --json "$L/$name.json" >"$L/$name.log" 2>&1
    say "compare $name rc $? ($((SECONDS - T0)) s)"
    grep -vE "^\s*$" "$L/$name.log" | tail -14 | tee -a "$OUT/summary.txt" >/dev/null
}
if has "$STEPS" compare; then
    SAGE=(--variant interleave-softmax --variant warp-specialized)
    TORCH=(--variant torch-sdpa-mask --variant torch-varlen)
    for ps in 16 256; do
        cmp_case "paged-$ps" --shape 8,512,32,8,128 --kv-len 4096 --causal=bottom-right \
            --page-size "$ps" --baseline torch-flex --variant torch-varlen
    done
    cmp_case varlen --shape 16,8192,16,16,128 --varlen random:100-8192:5 --causal=bottom-right \
        --baseline torch-varlen --variant torch-flex
    cmp_case decode-q1-kv4k --shape 4,1,32,8,128 --kv-len 4096 --baseline baseline "${SAGE[@]}" \
        --variant baseline-fp16acc "${TORCH[@]}" --variant 'torch-flex[compile=false]'
    cmp_case decode-q16-kv32k --shape 1,16,32,8,128 --kv-len 32768 --baseline baseline \
        "${SAGE[@]}" "${TORCH[@]}"
    cmp_case decode-q1-kv128k --shape 1,1,32,8,128 --kv-len 131072 --baseline baseline \
        "${SAGE[@]}" "${TORCH[@]}"
    cmp_case decode-q16-kv128k --shape 1,16,32,8,128 --kv-len 131072 --baseline baseline \
        "${SAGE[@]}" "${TORCH[@]}"
    cmp_case prefill-cache --shape 1,1024,32,8,128 --kv-len 8192 --causal=bottom-right \
        --baseline torch-sdpa-mask --variant torch-flex --variant torch-varlen
    cmp_case window --shape 1,4096,16,16,128 --causal --window 1024,0 --baseline torch-sdpa-mask \
        --variant torch-flex --variant torch-varlen
    cmp_case softcap --shape 1,2048,16,16,128 --softcap 30 --baseline torch-flex \
        --variant 'torch-flex[compile=false]'
    say "compares done in $((SECONDS - T0)) s"
fi
if has "$STEPS" kvlen; then
    left=$(( ${BUDGET:-560} - (SECONDS - T0) ))
    [ $left -gt 200 ] && BUDGET=$left OUT=$OUT/kvlen bash test/gpu/kvlen/run-gpu.sh all >"$L/kvlen.log" 2>&1
    [ -f "$OUT/kvlen/summary.txt" ] && cat "$OUT/kvlen/summary.txt" >>"$OUT/summary.txt"
fi
