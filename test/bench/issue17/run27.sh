#!/usr/bin/env bash
# Issue 17, H200 run 27 (2026-12-03, fourth session): the ping-pong of two consumer warpgroups sharing one
# ring (256-row CTAs, branch exp/v13: exp/v12 with the warpgroup index broadcast by a shuffle and the turn's
# bar.sync/bar.arrive without a memory clobber: 0 B spills). ws-pp: softmax phases alternate; ws-ppnt: the
# same CTA without the turn. Golden test and compute-sanitizer on ws-pp (as warp-specialized, build/exp28/gold),
# the seed and the three shapes against baseline, interleave-softmax and main's warp-specialized.
# First try (machine lease 1) hung in the causal kernel: the main loop's tiles took turns (walk_tiles
# instantiates them non-causal); the turns now follow the kernel (Consumer's kTurns). Order: speed first.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp28.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp28 R=$OUT/run27; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"; X="$M"; for n in ws-pp ws-ppnt; do X="$X --plugin $E/$n.so"; done
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/gold/
G="--plugin $E/gold --variant warp-specialized"
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-pp --variant ws-ppnt --max-time 8 --timeout 20 --json $R/seed.json
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-pp --max-time 5 --timeout 20 --json $R/shape-$sh.json
done
step golden 90 env SAGERUN_TEST_PLUGINS=$E/gold build/test/gpu/test_sage2_golden
i=0
for tool in memcheck racecheck synccheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $G --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; sed -n 1,24p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 5,14p $f; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -90
