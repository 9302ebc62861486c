#!/usr/bin/env bash
# Issue 17, H200 run 9: 256-row CTAs (two consumer warpgroups of two slices, one producer per SM) against v2 and v4.
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
X="--plugin build/exp/ws-v4.so --plugin build/exp/ws-v5.so --plugin build/exp/ws-v5b.so"
step smoke 30 $S run $X --variant ws-v5 --shape 1,1000,2,128 --iterations 2
SAGERUN_TEST_PLUGINS=$PWD/plugins step golden-v2 300 build/test/gpu/test_sage2_golden
for c in v5 v4; do SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-$c step golden-$c 300 build/test/gpu/test_sage2_golden; done
i=0; for tool in synccheck racecheck memcheck; do for sh in "1,100,2,128 --causal" "2,300,4,2,64 --causal --dtype bf16"; do i=$((i+1))
  step san$i-v5-$tool 120 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $X --variant ws-v5 --shape $sh --warmup 0 --iterations 1; done; done
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-v5 --variant ws-v5b --variant ws-v4 --max-time 12 --json $R/seed.json
cd $R && tar czf $OUT/logs.tgz . && cd - >/dev/null
{ grep -v "rc=0" $R/steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" $R/golden-*.log; echo "== seed"; grep -v "^  *$" $R/seed.log | sed -n 5,13p; } > $OUT/summary.txt
cat $OUT/summary.txt
