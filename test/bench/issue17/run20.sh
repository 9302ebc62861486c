#!/usr/bin/env bash
# Issue 17, H200 run 20 (2026-12-03; the kernel code of branch exp/pair, 51c9af7): v9, two 128-row blocks per CTA whose softmax phases alternate
# (NOTES-kernels.md). Built here with build-config.sh into build/exp20: ws-pp (-DWS_PAIR=1), as-pp/ (the same
# as warp-specialized.so, for the golden test), ws-vf0.so (run 19's v8 build, 468990a); plugins/ is the tree's
# build (warp-specialized = v8). Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden
# plugins .dev (libs, golden) build/exp20.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp20 R=$OUT
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
cp plugins/baseline.so plugins/interleave-softmax.so plugins/baseline-fp16acc.so plugins/reference.so $E/as-pp/
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins --plugin $E/ws-pp.so --plugin $E/ws-vf0.so"
step smoke 60 $S run $M --variant ws-pp --shape 1,1000,2,128 --iterations 2
step seed 240 $S compare $M --variant interleave-softmax --variant warp-specialized --variant ws-vf0 --variant ws-pp --max-time 15 --json $R/seed.json
step golden-pp 300 env SAGERUN_TEST_PLUGINS=$E/as-pp build/test/gpu/test_sage2_golden
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $M --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-pp --max-time 6
done
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san$i-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant ws-pp --shape $sh --warmup 0 --iterations 1
  done; done
for v in warp-specialized ws-pp; do
  step ncu-$v 120 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 $S run $M --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; sed -n 1,30p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 7,12p $f; done; for v in warp-specialized ws-pp; do echo "== ncu $v"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible" ncu-$v.log | head -12; done; } > summary.txt 2>&1
tar czf /tmp/all.tgz *.log && rm -f *.log && mv /tmp/all.tgz $R/logs.tgz
cat $R/summary.txt | head -120
