#!/usr/bin/env bash
# Issue 17, H200 run 10 (last of the session's device time): 256-row CTAs with a register split that fits the
# CTA's launch allocation (v5), the shipped v2 after the generalisation; sanitizers; the shapes.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0 && ln -sf libsagerun.so.0 libsagerun.so)
for d in build/exp/as-ws-*; do cp plugins/baseline.so plugins/interleave-softmax.so plugins/baseline-fp16acc.so $d/; done
R=$OUT/r; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; return $rc; }
X="--plugin build/exp/ws-v5.so"; V5="--variant ws-v5"
step smoke-v5 15 $S run $X --variant ws-v5 --shape 1,1000,2,128 --iterations 2 || V5=""
step seed 60 $S compare $X --variant interleave-softmax --variant warp-specialized $V5 --max-time 8 --json $R/seed.json
i=0; for tool in memcheck racecheck synccheck initcheck; do i=$((i+1))
  step san$i-v2-$tool 25 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --variant warp-specialized --shape 2,300,4,2,64 --causal --dtype bf16 --warmup 0 --iterations 1; done
if [ -n "$V5" ]; then
  SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-v5 step golden-v5 40 build/test/gpu/test_sage2_golden
  for tool in memcheck racecheck synccheck initcheck; do i=$((i+1))
    step san$i-v5-$tool 25 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $X --variant ws-v5 --shape 2,300,4,2,64 --causal --dtype bf16 --warmup 0 --iterations 1; done
fi
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do step shape-$sh 40 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized $V5 --max-time 3 --json $R/shape-$sh.json; done
cd $R && tar czf $OUT/logs.tgz . && cd - >/dev/null
{ cat $R/steps.txt; grep -h "PASSED\|FAILED" $R/golden-*.log 2>/dev/null; for f in seed shape-4,8192,32,128 shape-1,131072,8,128 shape-2,4097,8,2,128; do echo "== $f"; grep -E "^(baseline|interleave|warp|ws-)" $R/$f.log; done; } > $OUT/summary.txt
cat $OUT/summary.txt
