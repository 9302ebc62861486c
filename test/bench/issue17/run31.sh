#!/usr/bin/env bash
# Issue 17, H200 run 31 (2026-12-03, fourth session): ncu's utilisation of main's warp-specialized after run 30
# (K's scale from shared memory, no spills) on the seed, and its phase clocks (ws-tr, main built with
# WS_TRACE into build/exp32). Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib build/exp32.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp32 R=$OUT/run31; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"
step seed 120 $S compare $M --plugin $E/ws-tr.so --variant interleave-softmax --variant warp-specialized --variant ws-tr --max-time 5 --timeout 20
step ncu 150 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:sage2_attn --launch-count 1 $S run $M --variant warp-specialized --warmup 0 --iterations 1
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; echo "== seed"; grep -A4 "^variant" seed.log; grep "^trace" seed.log | head -3; echo "== ncu"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible|Compute \(SM\) Throughput" ncu.log | head -14; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt
