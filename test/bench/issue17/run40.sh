#!/usr/bin/env bash
# Issue 17, H200 run 40 (2026-12-04, seventh session): Q.K as one wgmma group per slice (WS_QK_SPLIT), built into
# build/exp40: ws-qm (and goldqm): slice 0's row maxima before slice 1's wait; ws-qs: slice 0's whole softmax.
# Seed and shapes against main, ncu of ws-qm on the seed, golden, sanitizers of goldqm.
# Builds (on the tree with run40-qk-split.patch applied): build-config.sh build/exp40 ws-qm -DWS_QK_SPLIT=1; the same for
# ws-qs (-DWS_QK_SPLIT=2) and build/exp40/goldqm warp-specialized (-DWS_QK_SPLIT=1). Not run in the seventh session
# (no device lent after run 39).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp40.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp40 R=$OUT/run40; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/goldqm/
V="ws-qm ws-qs"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step golden-goldqm 90 env SAGERUN_TEST_PLUGINS=$E/goldqm build/test/gpu/test_sage2_golden
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized $Y --max-time 5 --timeout 20
done
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats -k regex:sage2_attn --launch-count 1 $S run $X --variant ws-qm --warmup 0 --iterations 1
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/goldqm --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput|Executed Instructions  " ncu.log | head -16; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
