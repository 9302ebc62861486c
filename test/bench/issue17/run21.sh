#!/usr/bin/env bash
# Issue 17, H200 run 21 (2026-12-03; the kernel code of branch exp/pair, 51c9af7): v9b (the turn around P.V: -DWS_PAIR=2), four KV stages (-DWS_STAGES=4) and K scale a tile ahead (-DWS_KS_AHEAD=1)
# (NOTES-kernels.md). Built here with build-config.sh into build/exp21: ws-pp2, ws-s4, ws-ks and as-*/ (each
# as warp-specialized.so, for the golden test); plugins/ is the tree's
# build (warp-specialized = v8). Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden
# plugins .dev (libs, golden) build/exp21.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp21 R=$OUT
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
cp plugins/baseline.so plugins/interleave-softmax.so plugins/reference.so $E/as-pp2/
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins --plugin $E/ws-pp2.so --plugin $E/ws-s4.so --plugin $E/ws-ks.so"
for c in pp2 s4 ks; do step smoke-$c 60 $S run $M --variant ws-$c --shape 1,1000,2,128 --iterations 2; done
step seed 240 $S compare $M --variant interleave-softmax --variant warp-specialized --variant ws-pp2 --variant ws-s4 --variant ws-ks --max-time 18 --json $R/seed.json
for c in pp2; do step golden-$c 300 env SAGERUN_TEST_PLUGINS=$E/as-$c build/test/gpu/test_sage2_golden; done
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $M --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-pp2 --variant ws-s4 --variant ws-ks --max-time 6
done
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    for c in pp2 s4 ks; do step san$i-$c-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant ws-$c --shape $sh --warmup 0 --iterations 1; done
  done; done
for v in ws-pp2; do
  step ncu-$v 120 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 $S run $M --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; sed -n 1,30p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 7,14p $f; done; for v in ws-pp2; do echo "== ncu $v"; grep -E "Duration|Issue Slots Busy|Issued Warp|Eligible Warps|Active Warps Per|Tensor|highest-utilized|No Eligible" ncu-$v.log | head -12; done; } > summary.txt 2>&1
tar czf /tmp/all.tgz *.log && rm -f *.log && mv /tmp/all.tgz $R/logs.tgz
cat $R/summary.txt | head -120
