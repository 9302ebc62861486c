#!/usr/bin/env bash
# Issue 17, H200 run 38 (2026-12-04, seventh session): three 64-row CTAs per SM (one slice per warp, one
# warpgroup, 168 registers, 2 KV stages), built into build/exp38:
#  ws-c3 (and goldc3/warp-specialized): -DWS_SLICES=1 -DWS_CONSUMER_WGS=1 -DWS_CTAS_PER_SM=3.
# Seed and shapes against main, SASS opcode counts, ncu of ws-c3 on the seed, golden and sanitizers of goldc3.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp38.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp38 R=$OUT/run38; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/goldc3/
V="ws-c3"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step golden-goldc3 90 env SAGERUN_TEST_PLUGINS=$E/goldc3 build/test/gpu/test_sage2_golden
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized $Y --max-time 5 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats -k regex:sage2_attn --launch-count 1 $S run $X --variant ws-c3 --warmup 0 --iterations 1
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/goldc3 --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput|Executed Instructions  " ncu.log | head -16; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
