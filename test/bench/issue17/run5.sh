#!/usr/bin/env bash
# Issue 17, H200 run 5: v4 with 240 consumer registers; the shapes; sanitizers on v2 and v4.
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
X="--plugin build/exp/ws-s1v4.so --plugin build/exp/ws-s1v4r240.so"
step smoke 30 $S run $X --variant ws-s1v4r240 --shape 1,1000,2,128 --iterations 2
SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-s1v4r240 step golden-s1v4r240 300 build/test/gpu/test_sage2_golden
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-s1v4 --variant ws-s1v4r240 --max-time 12 --json $R/seed.json
V="--variant interleave-softmax --variant warp-specialized --variant ws-s1v4r240"
step s4x8192 90 $S compare $X --shape 4,8192,32,128 $V --max-time 5 --json $R/s4x8192.json
step s131072 120 $S compare $X --shape 1,131072,8,128 $V --max-time 8 --json $R/s131072.json
step gqa 90 $S compare $X --shape 2,4097,8,2,128 $V --max-time 5 --json $R/gqa.json
for v in warp-specialized ws-s1v4r240; do for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16"; do
    step san-$v-$tool-${sh%% *} 120 compute-sanitizer --tool $tool --error-exitcode 9 $S run $X --variant $v --shape $sh --warmup 0 --iterations 1
  done; done; done
{ cat $R/steps.txt; grep -h "PASSED\|FAILED" $R/golden-*.log; for f in seed s4x8192 s131072 gqa; do echo "== $f"; grep -v "^  *$" $R/$f.log | sed -n 6,11p; done
  for f in $R/san-*.log; do echo "$(basename $f): $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|hazard' $f | tail -1)"; done; } > $OUT/summary.txt
cat $OUT/summary.txt
