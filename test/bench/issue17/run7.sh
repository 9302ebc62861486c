#!/usr/bin/env bash
# Issue 17, H200 run 7: the mbarrier wait as a C++ loop (synccheck), bytes and sanitizers of both configurations,
# seed timing against the build with the asm loop.
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
X="--plugin build/exp/ws-v2-old.so --plugin build/exp/ws-v4.so"
step smoke 30 $S run --variant warp-specialized --shape 1,1000,2,128 --iterations 2
SAGERUN_TEST_PLUGINS=$PWD/plugins step golden-v2 300 build/test/gpu/test_sage2_golden
SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-v4 step golden-v4 300 build/test/gpu/test_sage2_golden
i=0
for v in warp-specialized ws-v4; do for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san$i-$v-$tool 120 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $X --variant $v --shape $sh --warmup 0 --iterations 1
    echo "san$i $v $tool $sh" >> $R/san-index.txt
  done; done; done
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-v2-old --variant ws-v4 --max-time 12 --json $R/seed.json
cd $R && tar czf $OUT/logs.tgz . && cd - >/dev/null
{ cat $R/steps.txt | grep -v "rc=0" ; echo "(others rc=0)"; grep -h "PASSED\|FAILED" $R/golden-*.log; echo "== seed"; grep -v "^  *$" $R/seed.log | sed -n 5,12p; } > $OUT/summary.txt
cat $OUT/summary.txt
