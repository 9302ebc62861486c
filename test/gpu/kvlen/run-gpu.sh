#!/usr/bin/env bash
# The GPU proof of kv_len != q_len for the sage2 variants (baseline, interleave-softmax,
# warp-specialized, baseline-fp16acc), on the device machine, in one run:
#   1. SageAttention (d1a57a5) built in .dev/sage, unless it already is;
#   2. the golden checks of `make test-gpu` that pin the sage2 bytes (test_sage2_golden,
#      test_quantize_gpu, test_torch_mean_gpu): q_len = kv_len outputs must not change;
#   3. parity.py --set kv_len: every kv_len != q_len case against SageAttention's own pipeline
#      (0 differing elements expected; on a difference the first index and both values);
#   4. parity.py --quick --set square: the q_len = kv_len cases still equal SageAttention's.
# Each step has its own time limit within BUDGET seconds (default 580: a device command may run
# 600), so that what finished is reported even if a later one runs out: run the script again
# (the SageAttention build is kept while the machine is warm) or name the remaining step.
# Results and logs go under $OUT (summary.txt first).
#
# From the repository root, with build/ and plugins/ built by `make` and carried, .dev/ (sage
# source, lib/ with libsodium and libcmocka) and .golden/ carried:
#   test/gpu/kvlen/run-gpu.sh [all|sage|golden|kvlen|square]   (default all)
set -u
cd "$(dirname "$0")/../../.." || exit 2
ROOT=$PWD
OUT=${OUT:-$(mktemp -d /tmp/kvlen-XXXXXX)}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
STEPS=${1:-all}
DEADLINE=$((SECONDS + ${BUDGET:-580}))
SUMMARY=$OUT/summary.txt
export LD_LIBRARY_PATH=$ROOT/.dev/lib:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SAGERUN_GOLDEN_DIR=$ROOT/.golden
export SAGERUN_GOLDEN15_DIR=$ROOT/test/gpu/golden15 # the build's own path may be another machine's
export SAGERUN_TEST_PLUGINS=$ROOT/plugins
export SAGERUN_TEST_FAKES=$ROOT/build/test-plugins
export SAGERUN_CACHE_DIR=$OUT/cache
export PYTHONPATH=$ROOT/.dev/sage${PYTHONPATH:+:$PYTHONPATH}

say() { echo "$*" | tee -a "$SUMMARY"; }
want() { [ "$STEPS" = all ] || [ "$STEPS" = "$1" ]; }
# limit LIMIT: the step's limit cut to the time left (0: none left)
limit() {
    local left=$((DEADLINE - SECONDS - 5))
    [ $left -lt 0 ] && left=0
    echo $(($1 < left ? $1 : left))
}
out_of_time() { say "$1: SKIPPED, out of time (run again: test/gpu/kvlen/run-gpu.sh $2)"; }

: >"$SUMMARY"
say "kvlen GPU run: $(date -u +%FT%TZ), commit" \
    "$(git -C "$ROOT" log -1 --format=%h 2>/dev/null || echo '?'), $(ls .golden 2>/dev/null |
        grep -c safetensors) golden files"
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    head -1)"
[ -x "$PY" ] || say "MISSING $PY (torch's python: set PY)"
for f in build/bin/sagerun build/test/gpu/parity/kmean_dump build/test/gpu/test_sage2_golden \
         plugins/baseline.so plugins/interleave-softmax.so plugins/warp-specialized.so \
         plugins/baseline-fp16acc.so; do
    [ -e "$f" ] || say "MISSING $f (build with make first)"
done

if want sage; then
    if ls .dev/sage/sageattention/_qattn_sm89*.so >/dev/null 2>&1 &&
       ls .dev/sage/sageattention/_fused*.so >/dev/null 2>&1; then
        say "sage: already built"
    else
        t0=$SECONDS
        (cd .dev/sage && touch README.md && TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 EXT_PARALLEL=3 \
             timeout "$(limit 570)" "$PY" setup.py build_ext --inplace) >"$OUT/sage-build.log" 2>&1
        rc=$?
        say "sage: build rc $rc in $((SECONDS - t0)) s (log sage-build.log)"
        [ $rc -eq 0 ] || tail -20 "$OUT/sage-build.log"
    fi
fi

if want golden; then
    for t in test_sage2_golden test_quantize_gpu test_torch_mean_gpu; do
        [ "$(limit 300)" -gt 0 ] || { out_of_time "golden: $t" golden; continue; }
        t0=$SECONDS
        timeout "$(limit 300)" "build/test/gpu/$t" >"$OUT/$t.log" 2>&1
        rc=$?
        say "golden: $t rc $rc in $((SECONDS - t0)) s:" \
            "$(grep -E '^\[  (PASSED|FAILED)' "$OUT/$t.log" | tr '\n' ' ')"
        grep -iE '^\[  FAILED|^\[  ERROR|SKIPPED|skip|not found' "$OUT/$t.log" | head -20 |
            tee -a "$SUMMARY"
    done
fi

parity() { # name, limit, args...
    local name=$1 limit=$2
    shift 2
    limit=$(limit "$limit")
    [ "$limit" -gt 30 ] || { out_of_time "$name" "${name#parity-}"; return; }
    mkdir -p "$OUT/$name"
    local t0=$SECONDS
    OUT=$OUT/$name timeout "$limit" "$PY" test/gpu/parity/parity.py "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    say "$name: rc $rc in $((SECONDS - t0)) s;" \
        "$(grep -E '^parity: [0-9]+ comparisons' "$OUT/$name.log")"
    grep -E '^(FAIL|skip)|sageattention is not importable|Traceback|Error' "$OUT/$name.log" |
        head -60 | tee -a "$SUMMARY"
    cp "$OUT/$name/parity.json" "$OUT/$name.json" 2>/dev/null
    # the inputs and outputs are large: keep only the logs and the summary JSON
    rm -rf "$OUT/$name"
}
want kvlen && parity parity-kvlen 420 --set kv_len
want square && parity parity-square 420 --quick --set square
say "done: $(date -u +%FT%TZ); every line of parity-*.log, per case and variant"
