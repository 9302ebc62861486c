#!/usr/bin/env bash
# Issue 17, H200 run 1: first light of warp-specialized (smoke, bytes, seed timing, 3 shapes, memcheck).
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun
R=$OUT/r; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt
step smoke 30 $S run --variant warp-specialized --shape 1,1000,2,128 --iterations 2
step smoke-base 30 $S run --variant baseline --shape 1,1000,2,128 --iterations 2
if grep -q "sha256\|SHA" $R/smoke.log; then
  step golden 400 build/test/gpu/test_sage2_golden
  step seed 120 $S compare --variant interleave-softmax --variant warp-specialized --max-time 10 --json $R/seed.json
  step s4x8192 90 $S compare --shape 4,8192,32,128 --variant interleave-softmax --variant warp-specialized --max-time 5 --json $R/s4x8192.json
  step s131072 120 $S compare --shape 1,131072,8,128 --variant interleave-softmax --variant warp-specialized --max-time 8 --json $R/s131072.json
  step gqa 90 $S compare --shape 2,4097,8,2,128 --variant interleave-softmax --variant warp-specialized --max-time 5 --json $R/gqa.json
  step memcheck 120 compute-sanitizer --tool memcheck $S run --variant warp-specialized --shape 1,333,3,128 --warmup 0 --iterations 1
fi
{ cat $R/gpu.txt $R/steps.txt; for f in smoke smoke-base; do echo "== $f"; tail -5 $R/$f.log; done
  grep -h "PASSED\|FAILED\|SKIP\|differ\|Error\|error" $R/golden.log 2>/dev/null | head -40
  for f in seed s4x8192 s131072 gqa; do echo "== $f"; grep -v "^  *$" $R/$f.log 2>/dev/null | head -24; done
  tail -6 $R/memcheck.log 2>/dev/null; } > $OUT/summary.txt
cat $OUT/summary.txt
