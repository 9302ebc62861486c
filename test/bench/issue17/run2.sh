#!/usr/bin/env bash
# Issue 17, H200 run 2: configurations side by side (2 slices/warp shipped; 1 slice with and without ping-pong),
# bytes of the shipped build, ncu of the shipped kernel.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun
R=$OUT/r; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; return $rc; }
X="--plugin build/exp/ws-s1.so --plugin build/exp/ws-s1pp.so"
step smoke 30 $S run --variant warp-specialized --shape 1,1000,2,128 --iterations 2 && step golden 400 build/test/gpu/test_sage2_golden
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-s1 --variant ws-s1pp --max-time 12 --json $R/seed.json
step ncu 200 ncu --clock-control none -k regex:warp_specialized -s 1 -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section LaunchStats --section Occupancy $S run --variant warp-specialized --shape 1,8192,8,128 --warmup 1 --iterations 1
{ cat $R/steps.txt; grep -h "PASSED\|FAILED" $R/golden.log; echo "== seed"; grep -v "^  *$" $R/seed.log | head -24; echo "== ncu"; grep -v "^  *$\|----" $R/ncu.log | grep -i "throughput\|pipe\|issue\|eligible\|warp cycles\|stall\|registers\|occupancy\|duration\|active warps\|tensor\|block limit" | head -60; } > $OUT/summary.txt
cat $OUT/summary.txt
