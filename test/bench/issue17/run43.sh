#!/usr/bin/env bash
# Issue 17, H200 run 43 (2026-12-05, tenth session): main (ws-siq, run 41) against ws-lf, WS_EARLY_QK=2: both
# slices' Q.K of tile j+1 issued after P.V(j)'s last wait, before its last fold (one wgmma group, waited for at
# tile j+1's start as main does): 875 loop instructions (main 876), 28-40 B of spills outside the loop in the
# HD-128 kernels. Run 42's ws-e (slice 0's Q.K early, slice 1's at the tile start) was +13.6%: two Q.K round
# trips per tile instead of one. Prediction: ws-lf -1..-3% (the last fold, the release and the loop's top,
# ~40-100 instructions, now inside the Q.K round trip). ws-e3, WS_EARLY_QK=3: slice 0's Q.K as in ws-e, slice 1's
# as in ws-lf, one wait at the tile's top (893 loop instructions, 148-156 B of spills): -1..-3% against ws-lf
# if slice 0's IGMMAs off the round trip outweigh the spills, else slower.
# Builds (the switch is not on main: `git apply test/bench/issue17/run42-early-qk.patch` first, `git checkout --
# variants/` after): build-config.sh build/exp43 ws-lf -DWS_EARLY_QK=2; build-config.sh build/exp43/goldlf
# warp-specialized -DWS_EARLY_QK=2; the same for ws-e3 and golde3 with -DWS_EARLY_QK=3; strip --strip-debug the plugins, the library and the test binaries.
# Carried (64 MiB: test_gpu_basics and gpu_fill.so left out): build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden
# plugins .dev/lib .dev/pack build/exp43.
set -u
# the golden files travel packed (.dev/pack/golden.tgz, tar czf of .dev/golden) where 64 MiB is tight
[ -d .dev/golden ] || [ ! -f .dev/pack/golden.tgz ] || tar xzf .dev/pack/golden.tgz -C .dev
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp43 R=$OUT/run43; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for g in goldlf golde3; do cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/$g/; done
step golden-main 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/test_sage2_golden
step golden-goldlf 120 env SAGERUN_TEST_PLUGINS=$E/goldlf build/test/gpu/test_sage2_golden
step golden-golde3 120 env SAGERUN_TEST_PLUGINS=$E/golde3 build/test/gpu/test_sage2_golden
[ -x build/test/gpu/test_gpu_basics ] && step gputest-basics 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_TEST_FAKES=$PWD/build/test-plugins build/test/gpu/test_gpu_basics
X="--plugin $PWD/plugins --plugin $E/ws-lf.so --plugin $E/ws-e3.so"
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-lf --variant ws-e3 --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-lf --variant ws-e3 --max-time 3 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats -k regex:sage2_attn --launch-count 1 $S profile $X --variant ws-lf --warmup 0
i=0
for g in goldlf golde3; do
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    [ $SECONDS -lt 440 ] || { echo "san-$g-$i-$tool skipped (time)" >> $R/steps.txt; continue; }
    step san-$g-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S profile --plugin $E/$g --variant warp-specialized --shape $sh --warmup 0
  done; done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log gputest-*.log; for g in goldlf golde3; do echo "sanitizers $g:"; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san-$g-*.log | sort | uniq -c; done; echo "== seed"; grep -A8 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|No Eligible|Executed Instructions  " ncu.log | head -12; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
