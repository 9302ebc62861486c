#!/usr/bin/env bash
# Issue 17, H200 runs 13-15 (2026-12-01, branch exp/split): v6 (SPLIT) against main's plugins.
# usage: run13.sh [A B]: the two candidate plugins build/dev2/A.so and B.so (A also the golden one):
#   run 13: ws-split ws-split-b, exp/split at d3bb413: -DWS_SPLIT=1 (2 f16-V stages), and
#           -DWS_SPLIT=1 -DWS_OUTPUT_REGS=240;
#   run 14: ws-s4 ws-s4p3, at 9e0fcce: -DWS_SPLIT=1 (4 f16-V stages), and -DWS_SPLIT=1 -DWS_P_STAGES=3;
#   run 15: ws-s5 ws-v2b, at 59398f7: -DWS_SPLIT=1, and the default configuration (v2, same producer);
#   each built as nvcc -O3 -std=c++17 --use_fast_math -gencode arch=compute_90a,code=sm_90a -fatbin with
#   those flags, embedded with libsagerun/incbin.S, warp_specialized.c compiled with -DWS_NAME='"NAME"'.
# build/dev2/as/: the first one as warp-specialized.so beside main's baseline*.so and reference.so (golden).
# Carried: build/bin, plugins (main), .dev/lib, .golden, build/dev1 (main's libsagerun.so.0 and
# test_sage2_golden), build/dev2. Outputs: run13/, run14/, run15/ (stall-groups.txt: stall_groups.py over the source page).
set -u
A=${1:-ws-split} B=${2:-ws-split-b}
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun D=$PWD/build/dev2 R=$OUT
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
step golden-split 90 env SAGERUN_TEST_PLUGINS=$D/as $PWD/build/dev1/test_sage2_golden
# stop unless it passed: no FAILED and at least one test passed ("[  PASSED  ] 0 test(s)" is a failure)
if grep -q "FAILED" $R/golden-split.log || ! grep -q "PASSED  \] [1-9]" $R/golden-split.log; then
  tail -30 $R/golden-split.log; exit 1
fi
step seed 200 $S compare --plugin $PWD/plugins --plugin $D/$A.so --plugin $D/$B.so --variant interleave-softmax --variant warp-specialized --variant $A --variant $B --json $R/seed.json
for t in memcheck racecheck synccheck initcheck; do
  step san-$t 90 compute-sanitizer --tool $t $S run --plugin $PWD/plugins --plugin $D/$A.so --variant $A --shape 1,333,3,128 --iterations 1 --warmup 0
done
step ncu-split 120 ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section ComputeWorkloadAnalysis --clock-control none -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src-split $S run --plugin $PWD/plugins --plugin $D/$A.so --variant $A --shape 1,8192,8,128 --warmup 1 --iterations 1
ncu -i /tmp/src-split.ncu-rep --page source --csv --print-source sass > $R/src-split.csv 2>&1
ncu -i /tmp/src-split.ncu-rep --page details --csv > $R/details-split.csv 2>&1
grep -h "ERROR SUMMARY\|Hazard\|hazard" $R/san-*.log > $R/san-summary.txt
cat $R/steps.txt > /tmp/steps.txt; cd $R && tar czf /tmp/all.tgz . && rm -f *.csv && mv /tmp/all.tgz $R/all.tgz  # one archive: at most 8 files come back
cat /tmp/steps.txt; cat $R/san-summary.txt; grep -A8 "^variant" $R/seed.log
