#!/usr/bin/env bash
# Issue 17, H200 run 22 (2026-12-03): the check of main's tree as it lands (warp-specialized = v8): golden test,
# the seed and the issue's three shapes against baseline and interleave-softmax, compute-sanitizer on three
# shapes, ncu's utilisation (SpeedOfLight, ComputeWorkloadAnalysis, SchedulerStats) of the seed's kernels, and
# where v8's warps spend their time (SourceCounters on 1x8192x8x128, stall_groups.py).
# Also v10 on the seed: build/exp23/ws-qa.so (build-config.sh ... ws-qa -DWS_QK_AHEAD=1, from branch exp/pair, f20902e).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev (libs, golden)
# build/exp23.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun R=$OUT
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"
step golden 300 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/test_sage2_golden
step seed 240 $S compare $M --plugin $PWD/build/exp23/ws-qa.so --variant interleave-softmax --variant warp-specialized --variant ws-qa --max-time 15 --json $R/seed.json
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $M --shape $sh --variant interleave-softmax --variant warp-specialized --max-time 6
done
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san$i-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
for v in warp-specialized interleave-softmax; do
  step ncu-$v 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:sage2_attn --launch-count 1 $S run $M --variant $v --warmup 0 --iterations 1
done
step ncu-src 150 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S run $M --variant warp-specialized --shape 1,8192,8,128 --warmup 1 --iterations 1
ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err
python3 test/bench/issue17/stall_groups.py /tmp/src.csv 8 > $R/stall-groups.txt 2>&1
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; sed -n 1,20p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 7,11p $f; done; for v in warp-specialized interleave-softmax; do echo "== ncu $v"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput|Memory Throughput" ncu-$v.log | head -14; done; } > summary.txt 2>&1
tar czf /tmp/all.tgz *.log && rm -f *.log && mv /tmp/all.tgz $R/logs.tgz
cat $R/summary.txt | head -100
