#!/usr/bin/env bash
# Issue 17, H200 run 42 (2026-12-05, tenth session): main after run 41 (ws-siq landed: P.V slice-inner, Q's
# descriptors opaque) against ws-e, the same with WS_EARLY_QK=1 (slice 0's Q.K of tile j+1 issued during
# P.V(j), after the fold of its group before last: 908 loop instructions against 876, 104 B of spills in the
# HD-128 kernels, ptxas's wait for slice 1's scores placed before slice 0's softmax). Prediction: ws-e
# -0.5..-2% against main (slice 0's Q.K latency hidden behind P.V's last group; slice 1's still exposed).
# Also: golden of main's build and of ws-e under the shipped name (golde), test_gpu_basics, the sanitizers
# of golde, ncu of ws-e on the seed.
# Builds (the switch is not on main: `git apply test/bench/issue17/run42-early-qk.patch` first, `git checkout --
# variants/` after; run 42 itself was built at 924f37c, where mode 1 was the only one): build-config.sh build/exp42 ws-e -DWS_EARLY_QK=1; build-config.sh build/exp42/golde
# warp-specialized -DWS_EARLY_QK=1; strip --strip-debug the plugins, the library and the test binaries.
# Carried (64 MiB: test_gpu_basics and gpu_fill.so left out): build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden
# plugins .dev build/exp42.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp42 R=$OUT/run42; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/golde/
step golden-main 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/test_sage2_golden
step golden-golde 120 env SAGERUN_TEST_PLUGINS=$E/golde build/test/gpu/test_sage2_golden
[ -x build/test/gpu/test_gpu_basics ] && step gputest-basics 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_TEST_FAKES=$PWD/build/test-plugins build/test/gpu/test_gpu_basics
X="--plugin $PWD/plugins --plugin $E/ws-e.so"
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-e --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-e --max-time 3 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats -k regex:sage2_attn --launch-count 1 $S profile $X --variant ws-e --warmup 0
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    [ $SECONDS -lt 440 ] || { echo "san-$i-$tool skipped (time)" >> $R/steps.txt; continue; }
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S profile --plugin $E/golde --variant warp-specialized --shape $sh --warmup 0
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log gputest-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A7 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A5 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|No Eligible|Executed Instructions  " ncu.log | head -12; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
