#!/usr/bin/env bash
# Issue 17, H200 run 32 (2026-12-04, sixth session): v11, one 16-row slice per warp without a producer
# (-DWS_SLICES=1 -DWS_CONSUMER_WGS=2 -DWS_PRODUCER=0: two warpgroups of 64 rows, 256 threads, one CTA per
# SM, tile_deferred's overlap, warpgroup 0's warps refilling tile j-3's stage), built into build/exp32:
#  ws-s1 (and gold/warp-specialized): six stages; ws-s1k5: five; ws-s1k8: eight; ws-s1l2: six, lag 2.
# Seed against main and interleave-softmax, the three shapes and a causal one, ncu of ws-s1,
# then the golden test and compute-sanitizer of gold (v11 under the shipped name).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp32.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp32 R=$OUT/run32; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/gold/
V="ws-s1 ws-s1k5 ws-s1k8 ws-s1l2"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-s1 --variant ws-s1k5 --max-time 5 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:sage2_attn --launch-count 1 $S run $X --variant ws-s1 --warmup 0 --iterations 1
step golden 90 env SAGERUN_TEST_PLUGINS=$E/gold build/test/gpu/test_sage2_golden
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/gold --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput" ncu.log | head -14; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
