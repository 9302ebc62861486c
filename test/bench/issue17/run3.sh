#!/usr/bin/env bash
# Issue 17, H200 run 3: v3b (one slice per warp, Q.K(j+1) during softmax(j)) with and without ping-pong against v2.
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
X="--plugin build/exp/ws-s1.so --plugin build/exp/ws-s1pp.so"
step smoke 30 $S run $X --variant ws-s1pp --shape 1,1000,2,128 --iterations 2
for c in s1 s1pp; do SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-$c step golden-$c 300 build/test/gpu/test_sage2_golden; done
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-s1 --variant ws-s1pp --max-time 12 --json $R/seed.json
for v in warp-specialized ws-s1pp; do
step ncu-$v 200 ncu --clock-control none -k regex:warp_specialized -s 1 -c 1 --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats $S run $X --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
done
mkdir -p $OUT/sass; for f in build/variants/warp-specialized/image.fatbin build/exp/ws-s1pp/image.fatbin build/variants/interleave-softmax/image.fatbin; do cuobjdump -sass $f > $OUT/sass/$(echo $f | tr / _).sass 2>&1; done
{ cat $R/steps.txt; grep -h "PASSED\|FAILED" $R/golden-*.log; echo "== seed"; grep -v "^  *$" $R/seed.log | sed -n 6,12p;
  for v in warp-specialized ws-s1pp; do echo "== ncu $v"; grep -v "^  *$\|----" $R/ncu-$v.log | grep -i "issue slots\|eligible warps\|active warps\|warp cycles per issued\|stall\|pipe\|ipc" | head -20; done; } > $OUT/summary.txt
cat $OUT/summary.txt
