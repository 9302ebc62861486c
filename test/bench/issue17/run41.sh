#!/usr/bin/env bash
# Issue 17, H200 run 41 (prepared 2026-12-04, eighth session, no device lent): fewer uniform-datapath
# instructions per tile, read off the SASS with tools/get-cuobjdump.sh (sass_loops.py: main's tile loop 904
# instructions, uniform 128), built into build/exp41 from the tree with run41-desc.patch applied:
#   ws-si:  -DWS_PV_SLICE_INNER=1 (P.V's groups slice-inner: one channel group's V descriptors serve both
#           slices back to back, so 4 live at a time instead of 16): 890 instructions, uniform 114;
#   ws-siq: ws-si and -DWS_Q_DESC_OPAQUE=1 (Q's descriptors opaque after init, so ptxas keeps them rather
#           than recomputing them per tile): 876, uniform 101; goldsiq: ws-siq under the shipped name.
# All four kernels of each build: 0 B of spills. Seed and shapes against main, ncu of ws-siq on the seed,
# ncu source counters of main (the WARPGROUP stalls by position in the loop: the rendezvous reading of
# NOTES-kernels.md), golden and sanitizers of goldsiq.
# Builds: test/bench/issue17/prepare41.sh (applies the patch, builds ws-si, ws-siq and goldsiq, reverts it).
# Carried (strip --strip-debug first): build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_gpu_basics
# build/test/gpu/test_quantize_gpu build/test/gpu/test_sage2_golden plugins .dev build/exp41.
# Ninth-session change: ncu and the sanitizers go through `sagerun profile` (in-process) since `run` now forks
# a supervised child; two steps check whether the tools see the child of `run`.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp41 R=$OUT/run41; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/goldsiq/
V="ws-si ws-siq"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
[ -d .dev/golden ] && step golden-goldsiq 90 env SAGERUN_TEST_PLUGINS=$E/goldsiq build/test/gpu/test_sage2_golden
for t in test_gpu_basics test_quantize_gpu; do step gputest-$t 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/$t; done
# does a profiler see the kernels of the supervised `run` (a forked child)?
step ncu-run-child 60 ncu --target-processes all -k regex:sage2_attn --launch-count 1 --section SpeedOfLight $S run --plugin $PWD/plugins --variant baseline --shape 1,256,2,128 --warmup 0 --iterations 1
step san-run-child 60 compute-sanitizer --tool memcheck --target-processes all --print-limit 4 --error-exitcode 9 --print-level info $S run --plugin $PWD/plugins --variant baseline --shape 1,256,2,128 --warmup 0 --iterations 1
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized $Y --max-time 3 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats -k regex:sage2_attn --launch-count 1 $S profile $X --variant ws-siq --warmup 0
step ncu-src 200 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S profile --plugin $PWD/plugins --variant warp-specialized --shape 1,8192,8,128 --warmup 1
ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err
python3 test/bench/issue17/loop_stalls.py /tmp/src.csv > $R/loop-stalls.txt 2>&1
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    [ $SECONDS -lt 440 ] || { echo "san-$i-$tool skipped (time)" >> $R/steps.txt; continue; }
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S profile --plugin $E/goldsiq --variant warp-specialized --shape $sh --warmup 0
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log gputest-*.log; echo "== ncu on run child"; grep -E "Duration|No kernels|==PROF==|==WARNING==" ncu-run-child.log | head -5; tail -3 san-run-child.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput|Executed Instructions  " ncu.log | head -16; echo "== loop stalls (main)"; sed -n '/^by opcode/,$p' loop-stalls.txt | head -24; grep -E "WARPGROUP|HGMMA|IGMMA" loop-stalls.txt | head -60; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -140
