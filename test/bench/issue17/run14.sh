#!/usr/bin/env bash
# Issue 17, H200 run 14 (2026-12-01, branch exp/split): v6 with four f16-V stages.
# Plugins ws-s4 and ws-s4p3: warp_specialized_kernel.cu of exp/split at 9e0fcce: -DWS_SPLIT=1 (4 f16-V stages), and -DWS_SPLIT=1 -DWS_P_STAGES=3;
#   each built as nvcc -O3 -std=c++17 --use_fast_math -gencode arch=compute_90a,code=sm_90a -fatbin with
#   those flags, embedded with libsagerun/incbin.S, warp_specialized.c compiled with -DWS_NAME='"NAME"'.
# build/dev2/as/: the first one as warp-specialized.so beside main's baseline*.so and reference.so (golden).
# Carried: build/bin, plugins (main), .dev/lib, .golden, build/dev1 (main's libsagerun.so.0 and
# test_sage2_golden), build/dev2. Outputs: run14/ (stall-groups.txt: stall_groups.py over the source page).
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun D=$PWD/build/dev2 R=$OUT
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
step golden-split 90 env SAGERUN_TEST_PLUGINS=$D/as $PWD/build/dev1/test_sage2_golden
grep -q "PASSED" $R/golden-split.log || { tail -30 $R/golden-split.log; exit 1; }
step seed 200 $S compare --plugin $PWD/plugins --plugin $D/ws-s4.so --plugin $D/ws-s4p3.so --variant interleave-softmax --variant warp-specialized --variant ws-s4 --variant ws-s4p3 --json $R/seed.json
for t in memcheck racecheck synccheck initcheck; do
  step san-$t 90 compute-sanitizer --tool $t $S run --plugin $PWD/plugins --plugin $D/ws-s4.so --variant ws-s4 --shape 1,333,3,128 --iterations 1 --warmup 0
done
step ncu-split 120 ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section ComputeWorkloadAnalysis --clock-control none -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src-split $S run --plugin $PWD/plugins --plugin $D/ws-s4.so --variant ws-s4 --shape 1,8192,8,128 --warmup 1 --iterations 1
ncu -i /tmp/src-split.ncu-rep --page source --csv --print-source sass > $R/src-split.csv 2>&1
ncu -i /tmp/src-split.ncu-rep --page details --csv > $R/details-split.csv 2>&1
grep -h "ERROR SUMMARY\|Hazard\|hazard" $R/san-*.log > $R/san-summary.txt
# (the outputs were packed into one archive to come back)
cat $R/steps.txt; cat $R/san-summary.txt; grep -A8 "^variant" $R/seed.log
