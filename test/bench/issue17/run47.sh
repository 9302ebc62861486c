#!/usr/bin/env bash
# Issue 17, H200 run 47 (2026-12-06, thirteenth session): ablations of main, to put numbers on what the
# numerics contract costs (every ablation gives WRONG bytes; none is a candidate). Builds: `git apply
# test/bench/issue17/run47-ablate.patch`, then build-config.sh build/exp47 ablN -DSAGE2_ABLATE=N, then `git
# checkout -- variants/`. N=1: no exponentials (x*c-m left as P; -64 MUFU per warp and tile, 812 loop
# instructions); N=2: the fold as one FFMA per element (O = fma(alpha, O, h) with h from one k-half, the two
# alternating so that both k-halves' wgmmas stay live; -128 FADD, 748); N=4: no fold (O takes h; 522, spills
# outside the loop in some kernels); N=3: 1 and 2 (684). Main: 876.
# Predictions (seed, same run, against main): abl1 -8..-15% (the MUFU pipe's 512 cycles per warp and tile
# leave the softmax); abl2 -8..-12% (14.6% fewer instructions at runs 41-46's return of 0.6-0.8); abl4
# -20..-30%; abl3 -15..-25%.
# Carried: build/bin build/lib plugins .dev/lib build/exp47.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp47 R=$OUT/run47; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
X="--plugin $PWD/plugins --plugin $E/abl1.so --plugin $E/abl2.so --plugin $E/abl3.so --plugin $E/abl4.so"
V="--variant warp-specialized --variant abl1 --variant abl2 --variant abl3 --variant abl4"
step seed 300 $S compare $X --variant baseline --variant interleave-softmax $V --max-time 8 --timeout 20 --json $R/seed.json
step shape-8192 120 $S compare $X --shape 4,8192,32,128 $V --max-time 3 --timeout 20
for v in warp-specialized abl3; do
  step ncu-$v 150 ncu --section SpeedOfLight --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis -k regex:sage2_attn --launch-count 1 $S profile $X --variant $v --shape 1,8192,8,128 --warmup 0
done
cd $R && { cat gpu.txt; grep -v "rc=0" steps.txt; echo "(others rc=0)"; echo "== seed"; grep -A12 "^variant" seed.log; echo "== 8192"; grep -A10 "^variant" shape-8192.log; for v in warp-specialized abl3; do echo "== ncu $v"; grep -E "Duration|Issue Slots Busy|Eligible Warps|Active Warps Per|Tensor|Executed Instructions  |Pipe" ncu-$v.log | head -14; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -120
